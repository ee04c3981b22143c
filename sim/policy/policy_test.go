package policy

import (
	"fmt"
	"math"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// cluster builds a cluster with nodes of the given GPU counts and, on node i, a running pod
// using used[i] GPUs for remaining[i] more seconds, placed by a scripted scheduler at t=0.
func cluster(t *testing.T, gpus, used []int64, remaining []float64) *sim.Cluster {
	t.Helper()
	var nodes []sim.NodeSpec
	for i, g := range gpus {
		var r sim.Resources
		r[sim.CPUIndex], r[sim.GPUIndex], r[sim.PodsIndex] = 64*sim.Milli, g*sim.Milli, 110*sim.Milli
		nodes = append(nodes, sim.NodeSpec{Name: string(rune('a' + i)), Capacity: r})
	}
	var jobs []submitter.Job
	for i, u := range used {
		if u > 0 {
			jobs = append(jobs, submitter.Job{Name: nodes[i].Name, Duration: remaining[i], GPU: u * sim.Milli})
		}
	}
	e, err := sim.New(sim.Config{Nodes: nodes, Scheduler: scripted{}, Rand: sim.NewRand(1, 0),
		Submitters: []sim.Submitter{submitter.NewTrace(jobs)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Step(); err != nil {
		t.Fatal(err)
	}
	return e.Cluster()
}

// scripted binds each pod to the node with the pod's name.
type scripted struct{}

func (scripted) Schedule(c *sim.Cluster) error {
	for _, p := range append([]*sim.Pod(nil), c.Pending()...) {
		if err := c.Bind(p, c.Node(p.Name)); err != nil {
			return err
		}
	}
	return nil
}

func gpuPod(g int64) *sim.Pod {
	p := &sim.Pod{Name: "p", Duration: 10 * sim.Second, FirstStart: -1}
	p.Requests[sim.GPUIndex], p.Requests[sim.PodsIndex] = g*sim.Milli, sim.Milli
	return p
}

func TestPlacements(t *testing.T) {
	c := cluster(t, []int64{8, 8, 8}, []int64{6, 2, 0}, []float64{100, 100, 0})
	for name, want := range map[string]string{Pack: "a", Spread: "c", Consolidated: "a", FirstFit: "a"} {
		pl, err := NewPlacement(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := pl.Place(c, gpuPod(2), nil); got == nil || got.Name != want {
			t.Errorf("%s placed a 2-GPU pod on %v, want %s", name, got, want)
		}
	}
	pack, _ := NewPlacement(Pack)
	if got := pack.Place(c, gpuPod(2), c.Nodes()[0]); got == nil || got.Name != "b" {
		t.Errorf("pack skipping a: %v, want b", got)
	}
	if got := pack.Place(c, gpuPod(9), nil); got != nil {
		t.Errorf("a 9-GPU pod was placed on %s", got.Name)
	}
	if _, err := NewPlacement("random"); err == nil {
		t.Error("unknown placement accepted")
	}
}

func TestReservation(t *testing.T) {
	// The head needs 8 GPUs: node a frees its 6 at 100 s, node b its 2 at 50 s (then has 8).
	c := cluster(t, []int64{8, 8}, []int64{6, 2}, []float64{100, 50})
	at, n := reservation(c, gpuPod(8))
	if at != 50*sim.Second || n.Name != "b" {
		t.Fatalf("reservation at %v on %v, want 50s on b", at, n)
	}
}

// First-fit takes the first node in cluster order, where pack takes the fullest that fits.
func TestFirstFitTakesTheFirstNode(t *testing.T) {
	c := cluster(t, []int64{8, 8}, []int64{0, 6}, []float64{0, 100})
	ff, _ := NewPlacement(FirstFit)
	pack, _ := NewPlacement(Pack)
	if got := ff.Place(c, gpuPod(2), nil); got == nil || got.Name != "a" {
		t.Errorf("first-fit placed on %v, want a", got)
	}
	if got := pack.Place(c, gpuPod(2), nil); got == nil || got.Name != "b" {
		t.Errorf("pack placed on %v, want b", got)
	}
	if got := ff.Place(c, gpuPod(2), c.Nodes()[0]); got == nil || got.Name != "b" {
		t.Errorf("first-fit skipping a placed on %v, want b", got)
	}
}

// Gittins indices worked by hand. Samples 1, 2, 3, 4 GPU-seconds, quantum 1:
//   - a = 0: all four survive, one (1) ends within the quantum, service used until the end of
//     the quantum is 1 + 1 + 1 + 1 = 4: index 1/4;
//   - a = 1: three survive, one (2) ends, used 1 + 1 + 1 = 3: 1/3;
//   - a = 2.5: two survive (3, 4), one ends after 0.5, the other uses the whole quantum: 1/1.5;
//   - a = 4: none survive: 0.
func TestGittinsIndex(t *testing.T) {
	g, err := newGittins([]float64{4, 2, 1, 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ a, want float64 }{{0, 0.25}, {1, 1.0 / 3}, {2.5, 1 / 1.5}, {4, 0}, {10, 0}} {
		if got := g.index(c.a); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("index(%v) = %v, want %v", c.a, got, c.want)
		}
	}
	if _, err := newGittins(nil, 1); err == nil {
		t.Error("no samples accepted")
	}
	if _, err := newGittins([]float64{1}, 0); err == nil {
		t.Error("zero quantum accepted")
	}
}

// counting wraps a placement and counts its calls.
type counting struct {
	Placement
	calls int
}

func (c *counting) Place(cl *sim.Cluster, p *sim.Pod, skip *sim.Node) *sim.Node {
	c.calls++
	return c.Placement.Place(cl, p, skip)
}

// A gang that cannot start is tried once per pass, through its own members, not once per
// member with a scan of the whole queue: three free nodes, 50 waiting gangs of four 8-GPU pods.
// Each attempt places three members and fails on the fourth, so a pass costs 4 placements
// per gang; trying each gang once per member cost 16.
func TestGangTriedOncePerPass(t *testing.T) {
	pack, _ := NewPlacement(Pack)
	count := &counting{Placement: pack}
	s, err := New("sjf", Options{Placement: count})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []submitter.Job
	for g := range 50 {
		for m := range 4 {
			jobs = append(jobs, submitter.Job{Name: fmt.Sprintf("g%d-%d", g, m), Duration: 10, GPU: 8 * sim.Milli,
				Gang: fmt.Sprint("g", g), GangSize: 4})
		}
	}
	e, err := sim.New(sim.Config{Nodes: []sim.NodeSpec{gpuNodeSpec("a", 8), gpuNodeSpec("b", 8), gpuNodeSpec("c", 8)},
		Scheduler: s, Rand: sim.NewRand(1, 0), Submitters: []sim.Submitter{submitter.NewTrace(jobs)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Step(); err != nil {
		t.Fatal(err)
	}
	if count.calls != 50*4 {
		t.Fatalf("%d placements in one pass over 50 gangs of 4, want %d", count.calls, 50*4)
	}
}

func gpuNodeSpec(name string, g int64) sim.NodeSpec {
	var r sim.Resources
	r[sim.CPUIndex], r[sim.GPUIndex], r[sim.PodsIndex] = 64*sim.Milli, g*sim.Milli, 110*sim.Milli
	return sim.NodeSpec{Name: name, Capacity: r}
}
