package scheduler_test

import (
	"fmt"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scheduler"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// The free-capacity bound, the free-GPU index, the score cache and the skipped constant scores
// are shortcuts: with them on or off, every pod must start at the same time on the same node.
func TestShortcutsDoNotChangeResults(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			a := placements(t, seed, false)
			b := placements(t, seed, true)
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

func placements(t *testing.T, seed uint64, exhaustive bool) []string {
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
		nodes = append(nodes, spec)
	}
	fw, err := scheduler.New(scheduler.KubeDefault(), names, sim.NewRand(seed, 1))
	if err != nil {
		t.Fatal(err)
	}
	if exhaustive {
		scheduler.SetExhaustive(fw)
	}
	proc, err := submitter.Preset("gavel", submitter.PresetConfig{Jobs: 3000, ClusterGPUs: 900, Load: 1.1}, sim.NewRand(seed, 100))
	if err != nil {
		t.Fatal(err)
	}
	e, err := sim.New(sim.Config{Names: names, Nodes: nodes, Scheduler: fw, Submitters: []sim.Submitter{proc.Submitter()},
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
