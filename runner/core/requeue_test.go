package core_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/record"
)

// TestRequeueInterleavings runs random plans whose engines interrupt attempts (preemptions,
// lost nodes, time limits) in random interleavings, and checks at the end: an interrupted
// attempt of a preemptible trial never counts against its retries while requeues are left, the
// requeue cap is never exceeded (checked after every step too), each attempt's record holds the
// checkpoint version it started from, and compute lost is part of compute spent.
func TestRequeueInterleavings(t *testing.T) {
	n := *rounds / 5
	if testing.Short() {
		n = 2_000
	}
	forSeeds(t, "TestRequeueInterleavings", n, func(seed uint64, trace bool) (string, []string) {
		rng := rand.New(rand.NewPCG(seed, 7))
		p := genPlan(rng, planOptions{preempt: true})
		w := newWorld(rng, p, nil, nil, epoch)
		w.tracing = trace
		stopAt := -1
		if rng.IntN(8) == 0 {
			stopAt = rng.IntN(30)
		}
		v := w.run(stopAt)
		if v == "" {
			v = w.checkRequeues(stopAt < 0 && !p.failFast)
		}
		return v, append([]string{fmt.Sprintf("plan: jobs %d fail-fast %v", p.jobs, p.failFast), describePlan(p)}, w.trace...)
	})
}

// checkRequeues checks a finished run's records for the requeue rules; whole is set when the
// run was neither stopped nor halted by fail-fast, so that every trial ran to its own end.
func (w *world) checkRequeues(whole bool) string {
	for i, t := range w.p.trials {
		if t.Service {
			continue
		}
		rec := w.c.Record(i)
		counted, requeued := 0, 0
		var spent float64
		for k, a := range rec.Attempts {
			if from, ok := w.startedFrom[[2]int{i, a.N}]; ok && a.Checkpoint != from {
				return fmt.Sprintf("%s attempt %d started from checkpoint %d, its record says %d", t.Name, a.N, from, a.Checkpoint)
			}
			if a.Requeued && a.Interrupted == "" {
				return fmt.Sprintf("%s attempt %d was requeued though not interrupted (%q)", t.Name, a.N, a.Reason)
			}
			last := k == len(rec.Attempts)-1
			eligible := t.Preemptible && a.Interrupted != "" && requeued < t.Requeues && !strings.HasPrefix(a.Reason, "killed: ")
			if eligible && !a.Requeued && (!last || (whole && rec.Status == record.Failed)) {
				return fmt.Sprintf("%s attempt %d was interrupted (%s) with %d of %d requeues used, and counted against its retries (%q)",
					t.Name, a.N, a.Interrupted, requeued, t.Requeues, a.Reason)
			}
			if a.Requeued {
				requeued++
			} else {
				counted++
			}
			spent += a.Finished.Sub(a.Started).Seconds()
		}
		if counted > t.Retries+1 {
			return fmt.Sprintf("%s ran %d attempts that counted against %d retries", t.Name, counted, t.Retries)
		}
		// A trial fails by its own attempts only once they used up its retries: requeued
		// attempts leave them whole.
		if whole && rec.Status == record.Failed && counted != t.Retries+1 && !w.lostService(i) && len(rec.Attempts) > 0 {
			return fmt.Sprintf("%s failed after %d counted attempts with %d retries (%d requeued)", t.Name, counted, t.Retries, requeued)
		}
		if c := rec.Compute; c != nil && (c.Lost > c.Spent+1e-9 || math.Abs(c.Spent-spent) > 1e-6 || c.Lost < 0) {
			return fmt.Sprintf("%s: compute spent %g lost %g; its attempts took %g", t.Name, c.Spent, c.Lost, spent)
		}
	}
	return ""
}
