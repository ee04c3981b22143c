package scheduler

import (
	"slices"
	"testing"

	"github.com/jikken-dev/jikken/sim"
)

func TestNumFeasibleNodesToFind(t *testing.T) {
	f := &Framework{}
	// kube-scheduler: below 100 nodes all; 1000 nodes -> 50-8 = 42%; 5000 -> 10%; huge -> 5%.
	for _, c := range []struct{ all, want int }{{50, 50}, {100, 100}, {1000, 420}, {5000, 500}, {100000, 5000}} {
		if got := f.numFeasibleNodesToFind(c.all); got != c.want {
			t.Errorf("numFeasibleNodesToFind(%d) = %d, want %d", c.all, got, c.want)
		}
	}
	f.percentage = 100
	if got := f.numFeasibleNodesToFind(1000); got != 1000 {
		t.Errorf("100%%: %d", got)
	}
}

func TestResourceScores(t *testing.T) {
	n := &sim.Node{}
	n.Capacity[sim.CPUIndex], n.Capacity[sim.MemoryIndex] = 4000, 8000
	n.Allocated[sim.CPUIndex] = 1000
	p := &sim.Pod{}
	p.Requests[sim.CPUIndex], p.Requests[sim.MemoryIndex] = 1000, 2000
	res := []ResourceWeight{{sim.CPUIndex, 1}, {sim.MemoryIndex, 1}}
	// After placing: cpu 2/4 used, memory 2/8 used.
	least := &NodeResourcesFit{Strategy: LeastAllocated, Resources: res}
	if got := least.Score(nil, p, n); got != (50+75)/2 {
		t.Errorf("LeastAllocated = %d, want 62", got)
	}
	most := &NodeResourcesFit{Strategy: MostAllocated, Resources: res}
	if got := most.Score(nil, p, n); got != (50+25)/2 {
		t.Errorf("MostAllocated = %d, want 37", got)
	}
	// Fractions .5 and .25: std = .125, score 87.
	if got := (&BalancedAllocation{Resources: res}).Score(nil, p, n); got != 87 {
		t.Errorf("BalancedAllocation = %d, want 87", got)
	}
}

func TestNormalize(t *testing.T) {
	s := []int64{0, 2, 4}
	normalize(s, false)
	if !slices.Equal(s, []int64{0, 50, 100}) {
		t.Errorf("normalize = %v", s)
	}
	s = []int64{0, 1, 2}
	normalize(s, true)
	if !slices.Equal(s, []int64{100, 50, 0}) {
		t.Errorf("reverse normalize = %v", s)
	}
}

func TestUnknownPluginAndWrongExtensionPoint(t *testing.T) {
	p := KubeDefault()
	p.Filter = append(p.Filter, "Nope")
	if _, err := New(p, sim.NewNames(), sim.NewRand(1, 1)); err == nil || err.Error() != `filter plugin "Nope" is unknown; known plugins: DefaultBinder, DefaultPreemption, NodeAffinity, NodeResourcesBalancedAllocation, NodeResourcesFit, PrioritySort, TaintToleration, UserQuota` {
		t.Errorf("error = %v", err)
	}
	p = KubeDefault()
	p.Filter = []string{PrioritySortName}
	if _, err := New(p, sim.NewNames(), sim.NewRand(1, 1)); err == nil || err.Error() != `plugin "PrioritySort" does not implement the filter extension point` {
		t.Errorf("error = %v", err)
	}
}
