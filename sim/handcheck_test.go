package sim_test

import (
	"math"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/policy"
	"github.com/jikken-dev/jikken/sim/scheduler"
	"github.com/jikken-dev/jikken/sim/submitter"
)

func gpuNode(name string, gpus int64) sim.NodeSpec {
	var r sim.Resources
	r[sim.CPUIndex] = 64 * sim.Milli
	r[sim.MemoryIndex] = 512 << 30 * sim.Milli
	r[sim.GPUIndex] = gpus * sim.Milli
	r[sim.PodsIndex] = 110 * sim.Milli
	return sim.NodeSpec{Name: name, Capacity: r}
}

func gpuJob(name string, submit, dur float64, gpus int64) submitter.Job {
	return submitter.Job{Name: name, User: "u", Submit: submit, Duration: dur, GPU: gpus * sim.Milli, CPU: sim.Milli}
}

func schedulerByName(t *testing.T, name string, names *sim.Names) sim.Scheduler {
	t.Helper()
	if name == "kube-default" {
		f, err := scheduler.New(scheduler.KubeDefault(), names, sim.NewRand(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	s, err := policy.New(name, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, sched string, nodes []sim.NodeSpec, jobs []submitter.Job) *sim.Cluster {
	t.Helper()
	names := sim.NewNames()
	e, err := sim.New(sim.Config{Names: names, Nodes: nodes, Scheduler: schedulerByName(t, sched, names),
		Submitters: []sim.Submitter{submitter.NewTrace(jobs)}, Rand: sim.NewRand(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return e.Cluster()
}

func meanWait(pods []*sim.Pod) float64 {
	var s float64
	for _, p := range pods {
		s += p.Wait().Seconds()
	}
	return s / float64(len(pods))
}

func makespan(pods []*sim.Pod) float64 {
	var m sim.Time
	for _, p := range pods {
		m = max(m, p.End)
	}
	return m.Seconds()
}

// One 4-GPU node, three 2-GPU pods of 100 s at t=0: two start at once, the third waits for one
// to end. Makespan 200 s, waits 0, 0, 100 s.
func TestThreeTwoGPUPodsOnOneNode(t *testing.T) {
	for _, sched := range []string{"fifo", "fifo-backfill", "sjf", "drf", "kube-default"} {
		t.Run(sched, func(t *testing.T) {
			c := run(t, sched, []sim.NodeSpec{gpuNode("n0", 4)}, []submitter.Job{
				gpuJob("a", 0, 100, 2), gpuJob("b", 0, 100, 2), gpuJob("c", 0, 100, 2),
			})
			pods := c.Pods()
			if got := makespan(pods); got != 200 {
				t.Errorf("makespan = %v, want 200", got)
			}
			if got := meanWait(pods); math.Abs(got-100.0/3) > 1e-9 {
				t.Errorf("mean wait = %v, want 33.33", got)
			}
			for _, p := range pods {
				if p.Phase != sim.Succeeded {
					t.Errorf("pod %s ended %v", p.Name, p.Phase)
				}
			}
		})
	}
}

// FIFO blocks behind a big head pod; backfill lets a short small pod run in the gap and SJF
// runs short pods first.
func TestFIFOBackfillSJF(t *testing.T) {
	// 4-GPU node; a runs 100 s on 2 GPUs; b needs 4 GPUs (waits for a); c is 1 GPU for 50 s
	// and d is 1 GPU for 500 s.
	jobs := []submitter.Job{
		gpuJob("a", 0, 100, 2), gpuJob("b", 1, 100, 4), gpuJob("c", 2, 50, 1), gpuJob("d", 3, 500, 1),
	}
	start := func(c *sim.Cluster, name string) float64 {
		for _, p := range c.Pods() {
			if p.Name == name {
				return p.FirstStart.Seconds()
			}
		}
		t.Fatalf("no pod %s", name)
		return 0
	}
	fifo := run(t, "fifo", []sim.NodeSpec{gpuNode("n0", 4)}, jobs)
	if got := start(fifo, "c"); got != 200 {
		t.Errorf("fifo: c starts at %v, want 200 (behind b)", got)
	}
	bf := run(t, "fifo-backfill", []sim.NodeSpec{gpuNode("n0", 4)}, jobs)
	if got := start(bf, "c"); got != 2 {
		t.Errorf("backfill: c starts at %v, want 2 (ends before b's reservation at 100)", got)
	}
	if got := start(bf, "d"); got != 200 {
		t.Errorf("backfill: d starts at %v, want 200 (would delay b)", got)
	}
	if got := start(bf, "b"); got != 100 {
		t.Errorf("backfill: b starts at %v, want 100", got)
	}
}
