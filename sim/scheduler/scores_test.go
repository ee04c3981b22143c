package scheduler_test

import (
	"errors"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scheduler"
	"github.com/jikken-dev/jikken/sim/submitter"
)

var errScored = errors.New("scored")

type scoreOnce struct {
	fw  *scheduler.Framework
	got []scheduler.NodeScore
}

func (s *scoreOnce) Schedule(c *sim.Cluster) error {
	var err error
	if s.got, err = s.fw.Scores(c, c.Pending()[0]); err != nil {
		return err
	}
	return errScored
}

// Worked case of kube-default's totals: 1 CPU and 2 GiB on an empty 4-CPU and an empty 8-CPU
// node, both with 8 GiB. On a: NodeResourcesFit (75+75)/2 = 75, BalancedAllocation 75 (balance
// 100 before and after). On b: fit (87+75)/2 = 81, balance after 93 (fractions 1/8 and 1/4),
// 50 + (50+93-100)/2 = 71. TaintToleration and NodeAffinity have nothing to score.
func TestScoresWorkedCase(t *testing.T) {
	names := sim.NewNames()
	var small, big sim.Resources
	small[sim.CPUIndex], small[sim.MemoryIndex], small[sim.PodsIndex] = 4*sim.Milli, 8<<30*sim.Milli, 110*sim.Milli
	big = small
	big[sim.CPUIndex] = 8 * sim.Milli
	fw, err := scheduler.New(scheduler.KubeDefault(), names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	job := submitter.Job{Name: "j", Duration: 60, Template: &sim.Pod{}}
	job.Template.Requests[sim.CPUIndex], job.Template.Requests[sim.MemoryIndex] = sim.Milli, 2<<30*sim.Milli
	s := &scoreOnce{fw: fw}
	e, err := sim.New(sim.Config{Names: names, Nodes: []sim.NodeSpec{{Name: "a", Capacity: small}, {Name: "b", Capacity: big}},
		Scheduler: s, Rand: sim.NewRand(1, 0), Submitters: []sim.Submitter{submitter.NewTrace([]submitter.Job{job})}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Step(); !errors.Is(err, errScored) {
		t.Fatal(err)
	}
	if len(s.got) != 2 || s.got[0].Node.Name != "a" || s.got[0].Score != 150 || s.got[1].Node.Name != "b" || s.got[1].Score != 152 {
		for _, g := range s.got {
			t.Logf("%s: %d", g.Node.Name, g.Score)
		}
		t.Errorf("scores differ from the worked case (a 150, b 152)")
	}
}
