package scheduler

import (
	"slices"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/submitter"
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

var cpuMem = []ResourceWeight{{Index: sim.CPUIndex, Weight: 1}, {Index: sim.MemoryIndex, Weight: 1}}

func TestResourceScores(t *testing.T) {
	n := &sim.Node{}
	n.Capacity[sim.CPUIndex], n.Capacity[sim.MemoryIndex] = 4000, 8000
	n.Allocated[sim.CPUIndex] = 1000
	n.NonZeroAllocated = [2]int64{1000, 0}
	p := &sim.Pod{}
	p.Requests[sim.CPUIndex], p.Requests[sim.MemoryIndex] = 1000, 2000
	// After placing: cpu 2/4 used, memory 2/8 used.
	least := &NodeResourcesFit{Strategy: LeastAllocated, Resources: cpuMem}
	if got := least.Score(nil, p, n); got != (50+75)/2 {
		t.Errorf("LeastAllocated = %d, want 62", got)
	}
	most := &NodeResourcesFit{Strategy: MostAllocated, Resources: cpuMem}
	if got := most.Score(nil, p, n); got != (50+25)/2 {
		t.Errorf("MostAllocated = %d, want 37", got)
	}
}

// Worked cases of kube-scheduler v1.37's NodeResourcesBalancedAllocation, which scores the
// change in balance (PR 135573), not the balance after placement.
func TestBalancedAllocationScoresTheChange(t *testing.T) {
	ba := &BalancedAllocation{Resources: cpuMem}
	n := &sim.Node{}
	n.Capacity[sim.CPUIndex], n.Capacity[sim.MemoryIndex] = 4000, 8000
	n.Allocated[sim.CPUIndex] = 1000
	p := &sim.Pod{}
	p.Requests[sim.CPUIndex], p.Requests[sim.MemoryIndex] = 1000, 2000
	// Before: fractions .25 and 0, std .125, balance 87. After: .5 and .25, balance 87.
	// No change scores 50 + (50 + 87 - 87) / 2 = 75 (the balance after alone would be 87).
	if got := ba.Score(nil, p, n); got != 75 {
		t.Errorf("unchanged balance = %d, want 75", got)
	}
	// A memory-heavy pod evens the node out: after .5 and .5, balance 100;
	// 50 + (50 + 100 - 87) / 2 = 81.
	p.Requests[sim.CPUIndex], p.Requests[sim.MemoryIndex] = 1000, 4000
	if got := ba.Score(nil, p, n); got != 81 {
		t.Errorf("improved balance = %d, want 81", got)
	}
	// On an empty node the same pod unbalances it: .25 and .5, balance 87, before 100;
	// 50 + (50 + 87 - 100) / 2 = 68.
	empty := &sim.Node{Capacity: n.Capacity}
	if got := ba.Score(nil, p, empty); got != 68 {
		t.Errorf("worsened balance = %d, want 68", got)
	}
}

// A pod without CPU and memory requests is not scored by BalancedAllocation (upstream
// PreScore returns Skip for best-effort pods).
func TestBalancedAllocationSkipsBestEffortPods(t *testing.T) {
	ba := &BalancedAllocation{Resources: cpuMem}
	p := &sim.Pod{}
	p.Requests[sim.GPUIndex] = 1000
	if !ba.SkipScore(nil, p) {
		t.Error("best-effort pod not skipped")
	}
	n := &sim.Node{}
	n.Capacity[sim.CPUIndex], n.Capacity[sim.MemoryIndex] = 4000, 8000
	n.Allocated[sim.CPUIndex] = 3000
	if got := ba.Score(nil, p, n); got != 0 {
		t.Errorf("best-effort score = %d, want 0", got)
	}
	p.Requests[sim.MemoryIndex] = 1
	if ba.SkipScore(nil, p) {
		t.Error("pod with a memory request skipped")
	}
}

// An extended resource in the scoring list counts only for pods that request it, and a
// resource the node lacks is left out of the average.
func TestScoringLeavesOutUnrequestedAndMissingResources(t *testing.T) {
	gpu := ResourceWeight{Index: sim.GPUIndex, Weight: 1, Extended: true}
	res := append(slices.Clone(cpuMem), gpu)
	n := &sim.Node{}
	n.Capacity[sim.CPUIndex], n.Capacity[sim.MemoryIndex], n.Capacity[sim.GPUIndex] = 4000, 8000, 8000
	n.Allocated[sim.GPUIndex] = 4000
	p := &sim.Pod{}
	p.Requests[sim.CPUIndex], p.Requests[sim.MemoryIndex] = 1000, 2000
	n.NonZeroAllocated = [2]int64{0, 0}
	// cpu 75, memory 75; the GPU (which would score 50) is not averaged in.
	if got := (&NodeResourcesFit{Strategy: LeastAllocated, Resources: res}).Score(nil, p, n); got != 75 {
		t.Errorf("LeastAllocated with an unrequested GPU = %d, want 75", got)
	}
	// Balance before 100 (0, 0), after 100 (.25, .25): 75; with the GPU's .5 it would differ.
	if got := (&BalancedAllocation{Resources: res}).Score(nil, p, n); got != 75 {
		t.Errorf("BalancedAllocation with an unrequested GPU = %d, want 75", got)
	}
	// A GPU pod counts it: cpu 75, memory 75, GPU (8-5)/8 = 37; (75+75+37)/3 = 62.
	p.Requests[sim.GPUIndex] = 1000
	if got := (&NodeResourcesFit{Strategy: LeastAllocated, Resources: res}).Score(nil, p, n); got != 62 {
		t.Errorf("LeastAllocated with a requested GPU = %d, want 62", got)
	}
	// A node without ephemeral storage is scored on cpu and memory alone.
	es := append(slices.Clone(cpuMem), ResourceWeight{Index: 4, Weight: 1})
	p.Requests[sim.GPUIndex] = 0
	if got := (&NodeResourcesFit{Strategy: LeastAllocated, Resources: es}).Score(nil, p, n); got != 75 {
		t.Errorf("LeastAllocated with a resource of zero capacity = %d, want 75", got)
	}
}

// Containers without requests count 100m CPU and 200 MiB in NodeResourcesFit's score, for the
// pod placed and for the pods already on the node.
func TestFitScoresNonZeroRequests(t *testing.T) {
	n := &sim.Node{}
	n.Capacity[sim.CPUIndex], n.Capacity[sim.MemoryIndex] = 1000, 1000<<20*sim.Milli
	p := &sim.Pod{}
	// cpu (1000-100)/1000 = 90, memory (1000-200)/1000 = 80.
	least := &NodeResourcesFit{Strategy: LeastAllocated, Resources: cpuMem}
	if got := least.Score(nil, p, n); got != 85 {
		t.Errorf("empty node = %d, want 85", got)
	}
	// Four request-less pods already there: cpu 500 of 1000 (50), memory 1000 of 1000 (0).
	n.NonZeroAllocated = [2]int64{400, 800 << 20 * sim.Milli}
	if got := least.Score(nil, p, n); got != 25 {
		t.Errorf("node with best-effort pods = %d, want 25", got)
	}
	// MostAllocated clamps defaulted requests past the capacity: cpu 50, memory 100.
	n.NonZeroAllocated[1] = 900 << 20 * sim.Milli
	if got := (&NodeResourcesFit{Strategy: MostAllocated, Resources: cpuMem}).Score(nil, p, n); got != 75 {
		t.Errorf("MostAllocated past capacity = %d, want 75", got)
	}
	// A submitter that saw the containers sets NonZero: it wins over the derived value.
	p.NonZero = [2]int64{200, 400 << 20 * sim.Milli}
	if cpu, mem := p.NonZeroRequests(); cpu != 200 || mem != 400<<20*sim.Milli {
		t.Errorf("NonZeroRequests = %d, %d", cpu, mem)
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
	if _, err := New(p, sim.NewNames(), sim.NewRand(1, 1)); err == nil || err.Error() != `filter plugin "Nope" is unknown; known plugins: DefaultBinder, DefaultPreemption, InterPodAffinity, NodeAffinity, NodePorts, NodeResourcesBalancedAllocation, NodeResourcesFit, PodTopologySpread, PrioritySort, TaintToleration, UserQuota (a plugin written in Go joins through Profile.Custom; for jikken sim, build jikken with it: cmd/jikken/app.WithSimPlugin)` {
		t.Errorf("error = %v", err)
	}
	p = KubeDefault()
	p.Filter = []string{PrioritySortName}
	if _, err := New(p, sim.NewNames(), sim.NewRand(1, 1)); err == nil || err.Error() != `plugin "PrioritySort" does not implement the filter extension point` {
		t.Errorf("error = %v", err)
	}
}

// Worked cases of kube-scheduler's pickOneNodeForPreemption.
func TestPreemptionCandidateOrder(t *testing.T) {
	pod := func(prio int32, start sim.Time) *sim.Pod { return &sim.Pod{Priority: prio, Start: start} }
	a := Candidate{Node: &sim.Node{ID: 0, Name: "a"}, Victims: []*sim.Pod{pod(-5, 0), pod(-5, 0)}}
	b := Candidate{Node: &sim.Node{ID: 1, Name: "b"}, Victims: []*sim.Pod{pod(-5, 0)}}
	// Upstream adds 2^31 to each priority before summing: two pods of -5 weigh more than one
	// (a plain sum, -10 < -5, would evict two).
	if got := slices.MinFunc([]Candidate{a, b}, compareCandidates); got.Node.Name != "b" {
		t.Errorf("negative priorities: evicts on %s, want b", got.Node.Name)
	}
	// Same priorities and counts: the node whose victims started latest loses least work.
	a = Candidate{Node: &sim.Node{ID: 0, Name: "a"}, Victims: []*sim.Pod{pod(1, 100*sim.Second), pod(0, 900*sim.Second)}}
	b = Candidate{Node: &sim.Node{ID: 1, Name: "b"}, Victims: []*sim.Pod{pod(1, 200*sim.Second), pod(0, 10*sim.Second)}}
	if got := slices.MinFunc([]Candidate{a, b}, compareCandidates); got.Node.Name != "b" {
		t.Errorf("start-time tie-break: evicts on %s, want b", got.Node.Name)
	}
}

// A cordoned node (spec.unschedulable) still takes pods that tolerate
// node.kubernetes.io/unschedulable:NoSchedule, as kube-scheduler's NodeUnschedulable allows
// (DaemonSet pods do); other pods stay off it. The node is the only one with GPUs, so the
// short-cuts over schedulable nodes (free-capacity bound, free-GPU index) must not hide it.
func TestCordonedNodeTakesTolerantPods(t *testing.T) {
	names := sim.NewNames()
	var gpu, cpu sim.Resources
	gpu[sim.CPUIndex], gpu[sim.GPUIndex], gpu[sim.PodsIndex] = 32*sim.Milli, 8*sim.Milli, 110*sim.Milli
	cpu[sim.CPUIndex], cpu[sim.PodsIndex] = 32*sim.Milli, 110*sim.Milli
	fw, err := New(KubeDefault(), names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name string, tolerate bool) submitter.Job {
		j := submitter.Job{Name: name, User: "u", Submit: 1, Duration: 10, GPU: 1 * sim.Milli, Template: &sim.Pod{}}
		j.Template.Requests[sim.GPUIndex] = j.GPU
		if tolerate {
			j.Template.Tolerations = []sim.Toleration{{Key: sim.UnschedulableTaint.Key, Operator: "Exists", Effect: sim.NoSchedule}}
		}
		return j
	}
	e, err := sim.New(sim.Config{Names: names, Rand: sim.NewRand(1, 0), Scheduler: fw,
		Nodes:      []sim.NodeSpec{{Name: "gpu", Capacity: gpu}, {Name: "cpu", Capacity: cpu}},
		Events:     []sim.ClusterEvent{{At: 0, Kind: sim.NodeCordon, Node: "gpu"}},
		Submitters: []sim.Submitter{submitter.NewTrace([]submitter.Job{pod("tolerant", true), pod("plain", false)})}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	for _, p := range e.Cluster().Pods() {
		want := map[string]string{"tolerant": "gpu", "plain": ""}[p.Name]
		if p.LastNode != want {
			t.Errorf("%s ran on %q, want %q", p.Name, p.LastNode, want)
		}
	}
}
