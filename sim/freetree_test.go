package sim

import (
	"math/rand/v2"
	"testing"
)

// TestFreeTreeMatchesScan checks the tree against the maximum over all leaves after every
// change, through growth and through nodes that become unschedulable (zero leaves).
func TestFreeTreeMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var f freeTree
	var leaves []Resources
	for step := range 5000 {
		id := rng.IntN(len(leaves) + 3)
		if id >= len(leaves) {
			leaves = append(leaves, make([]Resources, id+1-len(leaves))...)
		}
		var v Resources
		if rng.IntN(5) > 0 {
			for k := range v {
				v[k] = rng.Int64N(100) - 10 // some negative, which count as zero
			}
		}
		leaves[id] = v
		f.set(id, &v)
		var want Resources
		for _, l := range leaves {
			for k := range want {
				want[k] = max(want[k], l[k])
			}
		}
		if got := f.max(); got != want {
			t.Fatalf("step %d: max %v, a scan gives %v", step, got, want)
		}
	}
}

// checkedScheduler compares TightenMaxFree with a scan of the nodes before every pass, and the
// dense per-node arrays (NodeFree, NodeVersion) with the nodes.
type checkedScheduler struct {
	t      *testing.T
	inner  Scheduler
	passes int
}

func (s *checkedScheduler) Schedule(c *Cluster) error {
	s.passes++
	var want Resources
	for _, n := range c.Nodes() {
		free := n.Free()
		if *c.NodeFree(n.ID) != free || c.NodeVersion(n.ID) != n.Version {
			s.t.Fatalf("at %v: node %s: NodeFree %v, NodeVersion %d; the node has %v free, version %d",
				c.Now(), n.Name, *c.NodeFree(n.ID), c.NodeVersion(n.ID), free, n.Version)
		}
		if !n.Schedulable() {
			continue
		}
		for k := range want {
			want[k] = max(want[k], free[k])
		}
	}
	c.TightenMaxFree()
	if got := *c.MaxFree(); got != want {
		s.t.Fatalf("at %v: MaxFree %v after TightenMaxFree, a scan of the nodes gives %v", c.Now(), got, want)
	}
	return s.inner.Schedule(c)
}

// firstFitScheduler binds each pending pod to the first node that takes it.
type firstFitScheduler struct{}

func (firstFitScheduler) Schedule(c *Cluster) error {
	for _, p := range append([]*Pod(nil), c.Pending()...) {
		for _, n := range c.Nodes() {
			if p.Feasible(n) {
				if err := c.Bind(p, n); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

// TestTightenMaxFreeFollowsNodeEvents runs pods through failures, drains, cordons, additions
// and removals of nodes, and checks the exact bound and the dense arrays before every pass.
func TestTightenMaxFreeFollowsNodeEvents(t *testing.T) {
	node := func(name string, gpus int64) NodeSpec {
		var r Resources
		r[CPUIndex], r[GPUIndex], r[PodsIndex] = 64*Milli, gpus*Milli, 110*Milli
		return NodeSpec{Name: name, Capacity: r}
	}
	var pods []*Pod
	for i := range 60 {
		p := &Pod{Name: string(rune('a'+i%26)) + string(rune('0'+i/26)), User: "u", Duration: Time(50+i%7*20) * Second}
		p.Requests[CPUIndex], p.Requests[GPUIndex] = Milli, int64(1+i%4)*Milli
		pods = append(pods, p)
	}
	at := func(s int) Time { return Time(s) * Second }
	added := node("n9", 16)
	s := &checkedScheduler{t: t, inner: firstFitScheduler{}}
	e, err := New(Config{
		Names:      NewNames(),
		Nodes:      []NodeSpec{node("n0", 8), node("n1", 4), node("n2", 8)},
		Scheduler:  s,
		Submitters: []Submitter{&podList{pods: pods, every: at(5)}},
		Rand:       NewRand(1, 0),
		Events: []ClusterEvent{
			{At: at(20), Kind: NodeFail, Node: "n0"},
			{At: at(40), Kind: NodeCordon, Node: "n1"},
			{At: at(60), Kind: NodeAdd, Spec: &added},
			{At: at(70), Kind: NodeRecover, Node: "n0"},
			{At: at(90), Kind: NodeUncordon, Node: "n1"},
			{At: at(100), Kind: NodeDrain, Node: "n2"},
			{At: at(150), Kind: NodeRemove, Node: "n9"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if s.passes < 20 {
		t.Fatalf("%d passes; the case should exercise many", s.passes)
	}
}

// podList submits its pods one at a time, every interval.
type podList struct {
	pods  []*Pod
	every Time
}

func (l *podList) Step(now Time, _ Status) ([]*Pod, Time, error) {
	if len(l.pods) == 0 {
		return nil, Never, nil
	}
	p := l.pods[0]
	l.pods = l.pods[1:]
	return []*Pod{p}, now + l.every, nil
}
