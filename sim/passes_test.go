package sim_test

import (
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// evictAfterBinding binds pending pods first-fit, then, once, preempts the pod named victim
// at or after time at: the freed GPU can only be used by a later pass.
type evictAfterBinding struct {
	at      sim.Time
	victim  string
	evicted bool
	passes  []sim.Time
	wake    sim.Time
}

func (s *evictAfterBinding) Schedule(c *sim.Cluster) error {
	s.passes = append(s.passes, c.Now())
	for _, p := range append([]*sim.Pod(nil), c.Pending()...) {
		for _, n := range c.Nodes() {
			if p.Feasible(n) {
				if err := c.Bind(p, n); err != nil {
					return err
				}
				break
			}
		}
	}
	if !s.evicted && c.Now() >= s.at {
		for _, p := range c.Pods() {
			if p.Name == s.victim && p.Phase == sim.Running {
				s.evicted = true
				return c.Preempt(p, true)
			}
		}
	}
	if s.wake > 0 {
		c.WakeAt(s.wake)
	}
	return nil
}

type samples struct{ times []sim.Time }

func (r *samples) Sampled(s *sim.Sample) { r.times = append(r.times, s.Time) }
func (r *samples) PodDone(*sim.Pod)      {}

// A preemption frees capacity; the next pass must follow at the same instant whatever the
// sampling interval, not wait for the next event of any kind.
func TestPassFollowsPreemptionAtOnce(t *testing.T) {
	for _, every := range []sim.Time{0, secs(1), secs(60)} {
		s := &evictAfterBinding{at: secs(10), victim: "v"}
		obs := &samples{}
		pods := runCfg(t, sim.Config{Nodes: []sim.NodeSpec{gpuNode("n0", 2)}, Scheduler: s, SampleEvery: every, Observer: obs},
			[]submitter.Job{gpuJob("v", 0, 100, 1), gpuJob("w", 10, 1000, 1)})
		v := pods["v"]
		if v.Preemptions != 1 || v.Start != secs(10) || v.End != secs(100) {
			t.Errorf("sample every %v: v preempted %d times, restarted at %v, ended at %v; want 1, 10s, 100s", every, v.Preemptions, v.Start, v.End)
		}
		if every > 0 {
			for i, at := range obs.times {
				if at != sim.Time(i)*every {
					t.Fatalf("sample %d at %v, want %v", i, at, sim.Time(i)*every)
				}
			}
			if last := obs.times[len(obs.times)-1]; last > secs(1010) || last+every <= secs(1010) {
				t.Errorf("sample every %v: last sample at %v, the run ends at 1010s", every, last)
			}
		}
	}
}

// WakeAt runs a pass at the requested time even when nothing else happens then, and does not
// keep the simulation alive by itself.
func TestWakeAtRunsAPass(t *testing.T) {
	s := &evictAfterBinding{at: sim.Never, wake: secs(42)}
	runCfg(t, sim.Config{Nodes: []sim.NodeSpec{gpuNode("n0", 1)}, Scheduler: s},
		[]submitter.Job{gpuJob("a", 0, 100, 1), gpuJob("b", 0, 100, 1)})
	want := []sim.Time{0, secs(42), secs(100)}
	if len(s.passes) != len(want) {
		t.Fatalf("passes at %v, want %v", s.passes, want)
	}
	for i := range want {
		if s.passes[i] != want[i] {
			t.Fatalf("passes at %v, want %v", s.passes, want)
		}
	}
}

// A gang timeout beyond any run is refused when the gang arrives, not overflowed into the past.
func TestGangTimeoutIsBounded(t *testing.T) {
	j := gpuJob("g-0", 0, 10, 1)
	j.Gang, j.GangSize, j.GangTimeout = "g", 1, 1e15
	e, err := sim.New(sim.Config{Nodes: []sim.NodeSpec{gpuNode("n0", 1)}, Scheduler: &evictAfterBinding{at: sim.Never},
		Rand: sim.NewRand(1, 0), Submitters: []sim.Submitter{submitter.NewTrace([]submitter.Job{j})}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err == nil || !strings.Contains(err.Error(), "schedule timeout") {
		t.Fatalf("error = %v", err)
	}
}
