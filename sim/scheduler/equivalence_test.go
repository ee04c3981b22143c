package scheduler_test

import (
	"fmt"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scheduler"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// The free-capacity bound, the free-GPU index, the score cache, the skipped constant scores
// and the skipped filters are shortcuts: with them on or off, every pod must start at the same
// time on the same node. The constrained cases add hard taints (some pods tolerate them) and
// node selectors (on some pods), so the taint and affinity filters cannot be skipped.
func TestShortcutsDoNotChangeResults(t *testing.T) {
	for _, constrained := range []bool{false, true} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("constrained=%v/%d", constrained, seed), func(t *testing.T) {
				a := placements(t, seed, false, constrained)
				b := placements(t, seed, true, constrained)
				if len(a) != len(b) {
					t.Fatalf("%d vs %d pods", len(a), len(b))
				}
				for i := range a {
					if a[i] != b[i] {
						t.Fatalf("pod %d: %s with shortcuts, %s without", i, a[i], b[i])
					}
				}
			})
		}
	}
}

// constrain gives every third pod a node selector and every fourth a toleration of the hard
// taint.
type constrain struct {
	sim.Submitter
	n int
}

func (c *constrain) Step(now sim.Time, s sim.Status) ([]*sim.Pod, sim.Time, error) {
	pods, next, err := c.Submitter.Step(now, s)
	for _, p := range pods {
		c.n++
		if c.n%3 == 0 {
			p.NodeSelector = map[string]string{"zone": "a"}
		}
		if c.n%4 == 0 {
			p.Tolerations = []sim.Toleration{{Key: "hard", Operator: "Exists"}}
		}
	}
	return pods, next, err
}

func placements(t *testing.T, seed uint64, exhaustive, constrained bool) []string {
	t.Helper()
	names := sim.NewNames()
	var nodes []sim.NodeSpec
	for i := range 150 {
		var r sim.Resources
		r[sim.CPUIndex], r[sim.MemoryIndex], r[sim.PodsIndex] = 64*sim.Milli, 512<<30*sim.Milli, 110*sim.Milli
		r[sim.GPUIndex] = int64(4+4*(i%2)) * sim.Milli
		spec := sim.NodeSpec{Name: fmt.Sprintf("n%d", i), Capacity: r}
		if i%7 == 0 {
			spec.Taints = []sim.Taint{{Key: "soft", Effect: sim.PreferNoSchedule}}
		}
		if constrained {
			spec.Labels = map[string]string{"zone": []string{"a", "b"}[i%2]}
			if i%5 == 0 {
				spec.Taints = append(spec.Taints, sim.Taint{Key: "hard", Effect: sim.NoSchedule})
			}
		}
		nodes = append(nodes, spec)
	}
	fw, err := scheduler.New(scheduler.KubeDefault(), names, sim.NewRand(seed, 1))
	if err != nil {
		t.Fatal(err)
	}
	if exhaustive {
		scheduler.SetExhaustive(fw)
	}
	jobs := 3000
	if constrained {
		jobs = 1000 // queues grow long when a third of the pods may use half the nodes
	}
	proc, err := submitter.Preset("gavel", submitter.PresetConfig{Jobs: jobs, ClusterGPUs: 900, Load: 1.1}, sim.NewRand(seed, 100))
	if err != nil {
		t.Fatal(err)
	}
	var sub sim.Submitter = proc.Submitter()
	if constrained {
		sub = &constrain{Submitter: sub}
	}
	e, err := sim.New(sim.Config{Names: names, Nodes: nodes, Scheduler: fw, Submitters: []sim.Submitter{sub},
		Rand: sim.NewRand(seed, 0), Events: []sim.ClusterEvent{{At: 5000 * sim.Second, Kind: sim.NodeFail, Node: "n3"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range e.Cluster().Pods() {
		out = append(out, fmt.Sprintf("%s@%s[%v-%v]", p.Name, p.LastNode, p.FirstStart, p.End))
	}
	return out
}
