package policy_test

import (
	"fmt"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/policy"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// The ordered policies keep their queue order between passes, and every policy skips passes
// where nothing changed; with an overloaded cluster (long queues, suspensions, ticks) the
// result must equal sorting everything at every pass.
func TestIncrementalOrderMatchesFullSort(t *testing.T) {
	for _, name := range []string{"sjf", "srtf", "las", "las-time", "gittins", "fifo", "fifo-backfill", "drf"} {
		a := runOrdered(t, name, false)
		b := runOrdered(t, name, true)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s: pod %d: %s incrementally, %s with full sorts", name, i, a[i], b[i])
			}
		}
	}
}

func runOrdered(t *testing.T, name string, exhaustive bool) []string {
	t.Helper()
	s, err := policy.New(name, policy.Options{Thresholds: []float64{1800, 18000}, StarveLimit: 2,
		GittinsSamples: []float64{600, 1800, 3600, 36000, 100000}})
	if err != nil {
		t.Fatal(err)
	}
	if exhaustive {
		policy.SetExhaustive(s)
	}
	var nodes []sim.NodeSpec
	for i := range 4 {
		var r sim.Resources
		r[sim.CPUIndex], r[sim.MemoryIndex], r[sim.GPUIndex], r[sim.PodsIndex] = 64*sim.Milli, 512<<30*sim.Milli, 8*sim.Milli, 110*sim.Milli
		nodes = append(nodes, sim.NodeSpec{Name: fmt.Sprint("n", i), Capacity: r})
	}
	proc, err := submitter.Preset("gavel", submitter.PresetConfig{Jobs: 600, ClusterGPUs: 32, Load: 1.4}, sim.NewRand(3, 100))
	if err != nil {
		t.Fatal(err)
	}
	e, err := sim.New(sim.Config{Nodes: nodes, Scheduler: s, Submitters: []sim.Submitter{proc.Submitter()},
		Rand: sim.NewRand(3, 0), Tick: 60 * sim.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range e.Cluster().Pods() {
		out = append(out, fmt.Sprintf("%s@%s[%v-%v]p%d", p.Name, p.LastNode, p.FirstStart, p.End, p.Preemptions))
	}
	return out
}
