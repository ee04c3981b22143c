package sim_test

import (
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/policy"
	"github.com/jikken-dev/jikken/sim/scheduler"
	"github.com/jikken-dev/jikken/sim/submitter"
)

func runCfg(t *testing.T, cfg sim.Config, jobs []submitter.Job) map[string]*sim.Pod {
	t.Helper()
	pods, _ := runEngine(t, cfg, jobs)
	return pods
}

// runEngine runs a trace to the end and returns its pods by name and the cluster.
func runEngine(t *testing.T, cfg sim.Config, jobs []submitter.Job) (map[string]*sim.Pod, *sim.Cluster) {
	t.Helper()
	if cfg.Names == nil {
		cfg.Names = sim.NewNames()
	}
	cfg.Submitters = []sim.Submitter{submitter.NewTrace(jobs)}
	cfg.Rand = sim.NewRand(1, 0)
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	out := map[string]*sim.Pod{}
	for _, p := range e.Cluster().Pods() {
		out[p.Name] = p
	}
	return out, e.Cluster()
}

func secs(s float64) sim.Time { return sim.Seconds(s) }

func TestNodeFailureRequeuesAndCountsLostWork(t *testing.T) {
	for _, sched := range []string{"fifo", "kube-default"} {
		t.Run(sched, func(t *testing.T) {
			names := sim.NewNames()
			pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 4)}, Scheduler: schedulerByName(t, sched, names),
				Events: []sim.ClusterEvent{{At: secs(30), Kind: sim.NodeFail, Node: "n0"}, {At: secs(50), Kind: sim.NodeRecover, Node: "n0"}}},
				[]submitter.Job{gpuJob("a", 0, 100, 2)})
			a := pods["a"]
			if a.Phase != sim.Succeeded || a.End != secs(150) || a.LostWork != secs(30) || a.Restarts != 1 || a.Start != secs(50) {
				t.Fatalf("a: phase %v end %v lost %v restarts %d start %v; want Succeeded 150s 30s 1 50s", a.Phase, a.End, a.LostWork, a.Restarts, a.Start)
			}
		})
	}
}

func TestPodFailureRetriesWithBackoff(t *testing.T) {
	names := sim.NewNames()
	pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 4)}, Scheduler: schedulerByName(t, "fifo", names),
		PodFailure: sim.PodFailure{Probability: 1, MaxRetries: 2, Backoff: secs(10), MaxBackoff: secs(15)}},
		[]submitter.Job{gpuJob("a", 0, 100, 1)})
	a := pods["a"]
	if a.Phase != sim.Failed || a.Restarts != 3 {
		t.Fatalf("a: %v after %d restarts; want Failed after 3", a.Phase, a.Restarts)
	}
	// Three runs, each shorter than 100 s, separated by backoffs of 10 s and 15 s (capped from 20).
	if a.End > secs(300)+secs(25) || a.End < secs(25) {
		t.Fatalf("a ended at %v", a.End)
	}
	if a.LostWork != a.End-secs(25) {
		t.Fatalf("lost work %v, want the run time %v", a.LostWork, a.End-secs(25))
	}
}

func TestKubeDefaultPreemptsLowerPriority(t *testing.T) {
	names := sim.NewNames()
	low := gpuJob("low", 0, 100, 4)
	high := gpuJob("high", 10, 50, 2)
	high.Priority = 10
	pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 4)}, Scheduler: schedulerByName(t, "kube-default", names)},
		[]submitter.Job{low, high})
	h, l := pods["high"], pods["low"]
	if h.FirstStart != secs(10) || h.End != secs(60) {
		t.Errorf("high ran %v-%v, want 10s-60s", h.FirstStart, h.End)
	}
	if l.Preemptions != 1 || l.LostWork != secs(10) || l.Start != secs(60) || l.End != secs(160) {
		t.Errorf("low: preemptions %d lost %v restarted %v ended %v; want 1, 10s, 60s, 160s", l.Preemptions, l.LostWork, l.Start, l.End)
	}
}

func TestGangStartsTogether(t *testing.T) {
	for _, sched := range []string{"fifo", "kube-default", "drf"} {
		t.Run(sched, func(t *testing.T) {
			names := sim.NewNames()
			filler := gpuJob("filler", 0, 100, 2)
			g0, g1 := gpuJob("g-0", 0, 100, 4), gpuJob("g-1", 0, 100, 4)
			g0.Gang, g1.Gang = "g", "g"
			g0.GangSize, g1.GangSize = 2, 2
			pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 4), gpuNode("n1", 4)},
				Scheduler: schedulerByName(t, sched, names)}, []submitter.Job{filler, g0, g1})
			if pods["g-0"].FirstStart != secs(100) || pods["g-1"].FirstStart != secs(100) {
				t.Fatalf("gang started at %v and %v, want both at 100s", pods["g-0"].FirstStart, pods["g-1"].FirstStart)
			}
		})
	}
}

// One GPU; a long job runs, a short one arrives later. Preemptive policies suspend the long job
// (keeping its progress) and finish the short one first.
func TestPreemptivePoliciesSuspendLongJobs(t *testing.T) {
	for _, sched := range []string{"srtf", "las"} {
		t.Run(sched, func(t *testing.T) {
			names := sim.NewNames()
			s, err := policy.New(sched, policy.Options{Thresholds: []float64{100}})
			if err != nil {
				t.Fatal(err)
			}
			pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 1)}, Scheduler: s},
				[]submitter.Job{gpuJob("long", 0, 1000, 1), gpuJob("short", 200, 100, 1)})
			l, sh := pods["long"], pods["short"]
			if sh.FirstStart != secs(200) || sh.End != secs(300) {
				t.Errorf("short ran %v-%v, want 200s-300s", sh.FirstStart, sh.End)
			}
			if l.End != secs(1100) || l.Preemptions != 1 || l.LostWork != 0 {
				t.Errorf("long: end %v preemptions %d lost %v; want 1100s, 1, 0", l.End, l.Preemptions, l.LostWork)
			}
		})
	}
}

func TestDRFSharesBetweenUsers(t *testing.T) {
	names := sim.NewNames()
	var jobs []submitter.Job
	for i := range 8 {
		j := gpuJob("u1-"+string(rune('a'+i)), 0, 100, 1)
		j.User = "u1"
		jobs = append(jobs, j)
	}
	for i := range 4 {
		j := gpuJob("u2-"+string(rune('a'+i)), 0, 100, 1)
		j.User = "u2"
		jobs = append(jobs, j)
	}
	for _, c := range []struct {
		sched   string
		u2Start sim.Time
	}{{"drf", 0}, {"fifo", secs(100)}} {
		pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 8)}, Scheduler: schedulerByName(t, c.sched, names)}, jobs)
		for name, p := range pods {
			if p.User == "u2" && p.FirstStart != c.u2Start {
				t.Errorf("%s: %s started at %v, want %v", c.sched, name, p.FirstStart, c.u2Start)
			}
		}
	}
}

func TestQuotaThrottles(t *testing.T) {
	names := sim.NewNames()
	var q sim.Resources
	for i := range q {
		q[i] = 1 << 62
	}
	q[sim.GPUIndex] = 2 * sim.Milli
	quotas := map[string]sim.Resources{"u": q}
	s, err := policy.New("fifo", policy.Options{Quotas: quotas})
	if err != nil {
		t.Fatal(err)
	}
	prof := scheduler.KubeDefault()
	prof.Quotas = quotas
	fw, err := scheduler.New(prof, names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, sched := range []sim.Scheduler{s, fw} {
		pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 8)}, Scheduler: sched},
			[]submitter.Job{gpuJob("a", 0, 100, 1), gpuJob("b", 0, 100, 1), gpuJob("c", 0, 100, 1)})
		if pods["c"].FirstStart != secs(100) {
			t.Fatalf("%T: c started at %v, want 100s (quota of 2 GPUs)", sched, pods["c"].FirstStart)
		}
	}
}

func TestSchedulerCannotOvercommit(t *testing.T) {
	names := sim.NewNames()
	e, err := sim.New(sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 2)}, Rand: sim.NewRand(1, 0),
		Submitters: []sim.Submitter{submitter.NewTrace([]submitter.Job{gpuJob("a", 0, 10, 2), gpuJob("b", 0, 10, 2)})},
		Scheduler:  greedy{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err == nil {
		t.Fatal("binding two 2-GPU pods on a 2-GPU node succeeded")
	}
}

// greedy binds every pending pod to the first node without checking anything.
type greedy struct{}

func (greedy) Schedule(c *sim.Cluster) error {
	for _, p := range append([]*sim.Pod(nil), c.Pending()...) {
		if err := c.Bind(p, c.Nodes()[0]); err != nil {
			return err
		}
	}
	return nil
}

func TestNeverFittingPodIsAnError(t *testing.T) {
	names := sim.NewNames()
	e, err := sim.New(sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 2)}, Rand: sim.NewRand(1, 0),
		Submitters: []sim.Submitter{submitter.NewTrace([]submitter.Job{gpuJob("big", 0, 10, 4)})}, Scheduler: schedulerByName(t, "fifo", names)})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Run()
	if err == nil || err.Error() != "pod big requests 4 nvidia.com/gpu but no node offers that much (largest: 2); lower the request or add a larger node group" {
		t.Fatalf("error = %v", err)
	}
}

// With TickOnly, pods wait for the next tick: a pod submitted at 5 s starts at the 10 s tick.
func TestTickOnlySchedulesAtTicks(t *testing.T) {
	names := sim.NewNames()
	pods := runCfg(t, sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 4)}, Scheduler: schedulerByName(t, "fifo", names),
		Tick: secs(10), TickOnly: true}, []submitter.Job{gpuJob("a", 5, 100, 1), gpuJob("b", 10, 100, 1)})
	if pods["a"].FirstStart != secs(10) || pods["b"].FirstStart != secs(10) {
		t.Fatalf("starts %v and %v, want 10s and 10s", pods["a"].FirstStart, pods["b"].FirstStart)
	}
}

// Random node failures follow the model: over a long horizon the fraction of time a node is
// down approaches MTTR / (MTBF + MTTR), for exponential and Weibull shapes alike.
func TestFailureModelAvailability(t *testing.T) {
	for _, shape := range []float64{1, 0.7, 2} {
		names := sim.NewNames()
		e, err := sim.New(sim.Config{Names: names, Nodes: []sim.NodeSpec{gpuNode("n0", 1), gpuNode("n1", 1)},
			Scheduler: schedulerByName(t, "fifo", names), Rand: sim.NewRand(7, 0), StopAt: 2_000_000 * sim.Second,
			Failures: []sim.FailureModel{{MTBF: 900 * sim.Second, MTTR: 100 * sim.Second, Shape: shape}},
			// A submitter that never finishes keeps the run going until StopAt.
			Submitters: []sim.Submitter{submitter.Func(func(now sim.Time, _ sim.Status) ([]*sim.Pod, sim.Time, error) {
				return nil, now + 1000*sim.Second, nil
			})}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		st := e.Cluster().Stats()
		down := 1 - st.CapArea[sim.GPUIndex]/(2*sim.Milli*2_000_000)
		if down < 0.08 || down > 0.12 {
			t.Errorf("shape %v: nodes down %.3f of the time, want about 0.10", shape, down)
		}
	}
}
