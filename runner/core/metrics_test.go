package core_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/jikken-dev/jikken/runner/core"
)

// TestMetricsReported drives random runs and, between their events, reports live metrics the
// way feeders do: for running attempts, in increasing numbers, with some reports late (a lower
// number), some about an attempt a newer one replaced and some about a trial out of range. After
// each report the core gives no action and changes no record, and Metrics tells, for each
// trial's current attempt, the highest number reported while that attempt was current.
func TestMetricsReported(t *testing.T) {
	n := *rounds / 5
	if testing.Short() {
		n = 2_000
	}
	forSeeds(t, "TestMetricsReported", n, func(seed uint64, trace bool) (string, []string) {
		rng := rand.New(rand.NewPCG(seed, 26))
		p := genPlan(rng, planOptions{})
		w := newWorld(rng, p, nil, nil, epoch)
		w.tracing = trace
		tr := func() []string { return append([]string{describePlan(p)}, w.trace...) }
		if v := w.step(core.Begin{At: w.now}); v != "" {
			return v, tr()
		}
		want := map[[2]int]int64{} // (trial, attempt) -> highest number reported while current
		for step := 0; !w.c.Done(); step++ {
			if step > 5000 {
				return "the run did not end within 5000 steps", tr()
			}
			if v := w.report(rng, want); v != "" {
				return v, tr()
			}
			v, moved := w.next()
			if v != "" {
				return v, tr()
			}
			if !moved {
				return "the run is stuck", tr()
			}
		}
		return w.report(rng, want), tr()
	})
}

// report delivers a few MetricsReported events and checks the core's answer to them.
func (w *world) report(rng *rand.Rand, want map[[2]int]int64) string {
	var running [][2]int
	for k, at := range w.attempts {
		if at.started && !at.exited {
			running = append(running, k)
		}
	}
	slices.SortFunc(running, func(a, b [2]int) int { return a[0]*1000 + a[1] - b[0]*1000 - b[1] })
	for range rng.IntN(3) {
		var ev core.MetricsReported
		switch r := rng.IntN(10); {
		case r < 7 && len(running) > 0:
			k := running[rng.IntN(len(running))]
			// Mostly further than before; sometimes a report that arrives late.
			ev = core.MetricsReported{Trial: k[0], Attempt: k[1], UpTo: want[k] + int64(rng.IntN(5)) - 1}
		case r < 9:
			i := rng.IntN(len(w.p.trials))
			ev = core.MetricsReported{Trial: i, Attempt: w.c.Metrics(i).Attempt - 1, UpTo: 1 << 40}
		default:
			ev = core.MetricsReported{Trial: len(w.p.trials) + rng.IntN(3), Attempt: 1, UpTo: 7}
		}
		ev.At = w.now
		before := make([]any, len(w.p.trials))
		for i := range w.p.trials {
			before[i] = w.c.Record(i)
		}
		if w.tracing {
			w.trace = append(w.trace, fmt.Sprintf("%s %T%+v", w.now.Format("15:04:05.000"), ev, ev))
		}
		if acts := w.c.Step(ev); len(acts) > 0 {
			return fmt.Sprintf("%+v gave actions %+v", ev, acts)
		}
		for i := range w.p.trials {
			if !reflect.DeepEqual(before[i], w.c.Record(i)) {
				return fmt.Sprintf("%+v changed the record of %s", ev, w.p.trials[i].Name)
			}
		}
		if ev.Trial < len(w.p.trials) && ev.Attempt >= 1 && ev.Attempt == w.c.Metrics(ev.Trial).Attempt {
			k := [2]int{ev.Trial, ev.Attempt}
			want[k] = max(want[k], ev.UpTo)
		}
	}
	for i := range w.p.trials {
		m := w.c.Metrics(i)
		if got := (core.LiveMetrics{Attempt: m.Attempt, UpTo: want[[2]int{i, m.Attempt}]}); m != got {
			return fmt.Sprintf("Metrics(%s) = %+v, want %+v", w.p.trials[i].Name, m, got)
		}
	}
	return ""
}
