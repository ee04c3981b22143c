package sim_test

import (
	"fmt"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/policy"
	"github.com/jikken-dev/jikken/sim/submitter"
)

func newPolicy(t *testing.T, name string, o policy.Options) sim.Scheduler {
	t.Helper()
	s, err := policy.New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// gang returns the members of an n-pod gang of per-pod GPUs.
func gang(name string, submit, dur float64, n int, gpus int64) []submitter.Job {
	var out []submitter.Job
	for i := range n {
		j := gpuJob(fmt.Sprintf("%s-%d", name, i), submit, dur, gpus)
		j.Gang, j.GangSize = name, n
		out = append(out, j)
	}
	return out
}

func ran(p *sim.Pod) string {
	return fmt.Sprintf("%s ran %v-%v, %d preemptions", p.Name, p.FirstStart, p.End, p.Preemptions)
}

// One 4-GPU node runs x (1 GPU, remaining 990 s at t=10) and y (3 GPUs, remaining 890 s).
// b needs 3 GPUs for 50 s: srtf suspends the longest first (x), which is not enough, then y;
// the reprieve step then spares x, since suspending y alone makes room.
func TestSuspensionReprievesUnneededVictims(t *testing.T) {
	pods := runCfg(t, sim.Config{Nodes: []sim.NodeSpec{gpuNode("n0", 4)}, Scheduler: newPolicy(t, "srtf", policy.Options{})},
		[]submitter.Job{gpuJob("x", 0, 1000, 1), gpuJob("y", 0, 900, 3), gpuJob("b", 10, 50, 3)})
	x, y, b := pods["x"], pods["y"], pods["b"]
	if x.Preemptions != 0 || x.End != secs(1000) {
		t.Errorf("%s; want 0-1000s without preemption", ran(x))
	}
	if b.FirstStart != secs(10) || b.End != secs(60) {
		t.Errorf("%s; want 10s-60s", ran(b))
	}
	if y.Preemptions != 1 || y.End != secs(950) {
		t.Errorf("%s; want one preemption, end at 950s", ran(y))
	}
}

// A two-node gang is one job for las: it is demoted when the gang's attained service (both
// members) crosses the threshold, suspended as a whole by a job of a lower queue, and
// suspends single jobs as a whole.
func TestGangsSuspendAndAreSuspendedAsAWhole(t *testing.T) {
	nodes := []sim.NodeSpec{gpuNode("n0", 4), gpuNode("n1", 4)}
	// g attains 8 GPU-seconds per second: it reaches 800 at t=100 and leaves queue 0.
	jobs := append(gang("g", 0, 1000, 2, 4), gpuJob("s", 200, 100, 4))
	pods := runCfg(t, sim.Config{Nodes: nodes, Scheduler: newPolicy(t, "las", policy.Options{Thresholds: []float64{800}})}, jobs)
	s := pods["s"]
	if s.FirstStart != secs(200) || s.End != secs(300) {
		t.Errorf("%s; want 200s-300s (g suspended)", ran(s))
	}
	for _, name := range []string{"g-0", "g-1"} {
		// 200 s run before the suspension, 800 s after.
		if p := pods[name]; p.Preemptions != 1 || p.End != secs(1100) || p.Start != secs(300) {
			t.Errorf("%s, last start %v; want one preemption, restart at 300s, end at 1100s", ran(p), p.Start)
		}
	}

	// Now the gang arrives second: two single 4-GPU jobs have left queue 0 when it comes, and
	// it suspends both at once.
	jobs = append([]submitter.Job{gpuJob("a", 0, 1000, 4), gpuJob("b", 0, 1000, 4)}, gang("h", 300, 100, 2, 4)...)
	pods = runCfg(t, sim.Config{Nodes: nodes, Scheduler: newPolicy(t, "las", policy.Options{Thresholds: []float64{800}})}, jobs)
	for _, name := range []string{"h-0", "h-1"} {
		if p := pods[name]; p.FirstStart != secs(300) || p.End != secs(400) {
			t.Errorf("%s; want 300s-400s", ran(p))
		}
	}
	for _, name := range []string{"a", "b"} {
		if p := pods[name]; p.Preemptions != 1 || p.End != secs(1100) {
			t.Errorf("%s; want one preemption, end at 1100s", ran(p))
		}
	}
}

// wholeNodeJobs draws jobs of one or two whole 4-GPU nodes; asGangs splits the 8-GPU ones into
// two-pod gangs (real nodes), or keeps them whole (one pooled node, the count-based model).
func wholeNodeJobs(seed uint64, n int, asGangs bool) []submitter.Job {
	r := sim.NewRand(seed, 7)
	var out []submitter.Job
	t := 0.0
	for i := range n {
		t += float64(r.IntN(300))
		dur := float64(50 + r.IntN(2000))
		name := fmt.Sprintf("j%03d", i)
		switch {
		case r.IntN(3) > 0:
			out = append(out, gpuJob(name, t, dur, 4))
		case asGangs:
			out = append(out, gang(name, t, dur, 2, 4)...)
		default:
			out = append(out, gpuJob(name, t, dur, 8))
		}
	}
	return out
}

// jobEnds maps each job (a gang, or a pod on its own) to when it ended.
func jobEnds(pods map[string]*sim.Pod) map[string]sim.Time {
	out := map[string]sim.Time{}
	for _, p := range pods {
		name := p.Name
		if p.Gang != "" {
			name = p.Gang
		}
		out[name] = max(out[name], p.End)
	}
	return out
}

// Where the count-based model and real nodes describe the same thing (every job takes whole
// nodes), las, srtf and fifo on four 4-GPU nodes with two-node gangs must end every job when
// they do on one pooled 16-GPU node.
func TestRealNodesAgreeWithCountModel(t *testing.T) {
	var real, pooled []sim.NodeSpec
	for i := range 4 {
		real = append(real, gpuNode(fmt.Sprint("n", i), 4))
	}
	pooled = append(pooled, gpuNode("pool", 16))
	for _, name := range []string{"las", "srtf", "fifo", "gittins"} {
		for seed := uint64(1); seed <= 5; seed++ {
			o := policy.Options{Thresholds: []float64{1000, 8000}, StarveLimit: 3, GittinsSamples: []float64{200, 900, 4000, 9000, 16000}}
			a := jobEnds(runCfg(t, sim.Config{Nodes: real, Scheduler: newPolicy(t, name, o)}, wholeNodeJobs(seed, 80, true)))
			b := jobEnds(runCfg(t, sim.Config{Nodes: pooled, Scheduler: newPolicy(t, name, o)}, wholeNodeJobs(seed, 80, false)))
			for job, end := range b {
				if a[job] != end {
					t.Errorf("%s seed %d: job %s ends at %v on real nodes, %v on the pooled node", name, seed, job, a[job], end)
				}
			}
		}
	}
}

// Tiresias's 2D-LAS counts GPU-seconds, its time-based LAS seconds: two 2-GPU jobs reach 100
// GPU-seconds at 50 s but 100 seconds at 100 s, and only then may a newcomer suspend one.
func TestLASByGPUTimeAndByTime(t *testing.T) {
	jobs := []submitter.Job{gpuJob("a", 0, 500, 2), gpuJob("b", 0, 500, 2), gpuJob("c", 60, 100, 2)}
	for _, c := range []struct {
		policy string
		start  float64
	}{{"las", 60}, {"las-time", 100}} {
		pods := runCfg(t, sim.Config{Nodes: []sim.NodeSpec{gpuNode("n0", 4)}, Scheduler: newPolicy(t, c.policy, policy.Options{Thresholds: []float64{100}})}, jobs)
		if p := pods["c"]; p.FirstStart != secs(c.start) {
			t.Errorf("%s: %s; want a start at %vs", c.policy, ran(p), c.start)
		}
		// b arrived after a, so b is the one suspended.
		if pods["b"].Preemptions != 1 || pods["a"].Preemptions != 0 {
			t.Errorf("%s: %s; %s", c.policy, ran(pods["a"]), ran(pods["b"]))
		}
	}
}

// The starvation guard: a (100 s) is suspended at 20 s by b, which then leaves the top queue
// too, at 30 s. a has run 20 s; with StarveLimit 2 it is promoted after waiting 40 s, at 60 s,
// suspends b, and ends at 140 s. Without the guard it waits for b to end.
func TestStarvationGuardPromotes(t *testing.T) {
	jobs := []submitter.Job{gpuJob("a", 0, 100, 1), gpuJob("b", 20, 1000, 1)}
	for _, c := range []struct {
		limit      float64
		aEnd, bEnd float64
	}{{2, 140, 1100}, {0, 1100, 1020}} {
		pods := runCfg(t, sim.Config{Nodes: []sim.NodeSpec{gpuNode("n0", 1)},
			Scheduler: newPolicy(t, "las", policy.Options{Thresholds: []float64{10}, StarveLimit: c.limit})}, jobs)
		if a, b := pods["a"], pods["b"]; a.End != secs(c.aEnd) || b.End != secs(c.bEnd) {
			t.Errorf("starve limit %v: %s; %s; want a to end at %vs and b at %vs", c.limit, ran(a), ran(b), c.aEnd, c.bEnd)
		}
	}
}

// Within a queue, gittins runs first the job most likely to finish within the next quantum
// per unit of service. Jobs need 100 or 1,000 GPU-seconds, equally likely; the quantum is 200.
// A fresh job finishes within the quantum with probability 1/2 and uses 150 on average until
// then: index 1/300. A job that has attained 150 is known to be a 1,000 one: index 0. So the
// fresh job suspends it, where las keeps FIFO order within the queue.
func TestGittinsOrdersByIndex(t *testing.T) {
	jobs := []submitter.Job{gpuJob("old", 0, 1000, 1), gpuJob("fresh", 150, 100, 1)}
	o := policy.Options{Thresholds: []float64{1e9}, GittinsSamples: []float64{100, 1000}, GittinsQuantum: 200}
	for _, c := range []struct {
		policy string
		start  float64
	}{{"gittins", 150}, {"las", 1000}} {
		pods := runCfg(t, sim.Config{Nodes: []sim.NodeSpec{gpuNode("n0", 1)}, Scheduler: newPolicy(t, c.policy, o)}, jobs)
		if p := pods["fresh"]; p.FirstStart != secs(c.start) {
			t.Errorf("%s: %s; want a start at %vs", c.policy, ran(p), c.start)
		}
	}
}

// A gang with a minimum starts as soon as that many members fit; the rest follow when there is
// room.
func TestGangMinimumStartsPart(t *testing.T) {
	for _, sched := range []string{"fifo", "las", "kube-default"} {
		t.Run(sched, func(t *testing.T) {
			names := sim.NewNames()
			jobs := gang("g", 0, 100, 4, 2)
			for i := range jobs {
				jobs[i].GangMin = 2
			}
			pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 4)}, Scheduler: schedulerByName(t, sched, names)}, jobs)
			starts := map[sim.Time]int{}
			for _, p := range pods {
				starts[p.FirstStart]++
			}
			if starts[0] != 2 || starts[secs(100)] != 2 {
				t.Fatalf("members started at %v, want two at 0s and two at 100s", starts)
			}
		})
	}
}

// With a schedule timeout, a gang member that fits holds its node while the rest wait; after
// the timeout the reservation is released and a small job may use the node. Node n0 runs a
// filler until 100 s; gang g (two 4-GPU members, timeout 30 s) reserves n1 at 0 s; s (4 GPUs,
// 10 s) arrives at 10 s and gets n1 only when the reservation expires at 30 s; at 40 s g
// reserves n1 again, which expires at 70 s, and g starts whole when the filler ends at 100 s.
func TestGangTimeoutHoldsThenReleases(t *testing.T) {
	for _, sched := range []string{"sjf", "kube-default"} {
		t.Run(sched, func(t *testing.T) {
			names := sim.NewNames()
			g := gang("g", 0, 100, 2, 4)
			for i := range g {
				g[i].GangTimeout = 30
			}
			filler := gpuJob("filler", 0, 100, 4)
			filler.Duration = 100
			small := gpuJob("s", 10, 10, 4)
			small.Duration = 10
			jobs := append([]submitter.Job{filler}, append(g, small)...)
			pods, c := runEngine(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 4), gpuNode("n1", 4)},
				Scheduler: schedulerByName(t, sched, names)}, jobs)
			if s := pods["s"]; s.FirstStart != secs(30) {
				t.Errorf("%s; want a start at 30s, when g's reservation expires", ran(s))
			}
			for _, name := range []string{"g-0", "g-1"} {
				if p := pods[name]; p.FirstStart != secs(100) || p.End != secs(200) {
					t.Errorf("%s; want 100s-200s", ran(p))
				}
			}
			if n := c.Stats().GangTimeouts; n != 2 {
				t.Errorf("%d gang timeouts, want 2", n)
			}
		})
	}
}

// A gang stops as a whole when one member loses its node: the other member's run is lost too.
func TestGangStopsWhenAMemberFails(t *testing.T) {
	names := sim.NewNames()
	pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 4), gpuNode("n1", 4), gpuNode("n2", 4)},
		Scheduler: schedulerByName(t, "fifo", names), Events: []sim.ClusterEvent{{At: secs(50), Kind: sim.NodeFail, Node: "n0"}}},
		gang("g", 0, 100, 2, 4))
	for _, name := range []string{"g-0", "g-1"} {
		if p := pods[name]; p.Restarts != 1 || p.LostWork != secs(50) || p.Start != secs(50) || p.End != secs(150) {
			t.Errorf("%s: restarts %d, lost %v, restarted at %v, ended at %v; want 1, 50s, 50s, 150s", name, p.Restarts, p.LostWork, p.Start, p.End)
		}
	}
}

// kube-default's DefaultPreemption evicts one member of a lower-priority gang; the gang cannot
// go on without it, so its other member stops too, both losing their work.
func TestPriorityPreemptionStopsTheWholeGang(t *testing.T) {
	names := sim.NewNames()
	high := gpuJob("h", 50, 100, 4)
	high.Priority = 10
	pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 4), gpuNode("n1", 4)},
		Scheduler: schedulerByName(t, "kube-default", names)}, append(gang("g", 0, 1000, 2, 4), high))
	if h := pods["h"]; h.FirstStart != secs(50) || h.End != secs(150) {
		t.Errorf("%s; want 50s-150s", ran(h))
	}
	for _, name := range []string{"g-0", "g-1"} {
		if p := pods[name]; p.Preemptions != 1 || p.LostWork != secs(50) || p.Start != secs(150) || p.End != secs(1150) {
			t.Errorf("%s, lost %v, restarted at %v; want one preemption, 50s lost, restart at 150s, end at 1150s", ran(p), p.LostWork, p.Start)
		}
	}
}
