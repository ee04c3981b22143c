package core_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/store"
)

var (
	seedFlag = flag.Uint64("seed", 0, "replay one interleaving: the seed a failure printed")
	rounds   = flag.Int("rounds", 100_000, "interleavings to try")
)

var epoch = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// forSeeds runs check for each seed (or the one given with -seed); a failure prints the seed
// and how to replay it with a trace.
func forSeeds(t *testing.T, name string, n int, check func(seed uint64, trace bool) (string, []string)) {
	t.Helper()
	seeds := make([]uint64, 0, n)
	if *seedFlag != 0 {
		seeds = append(seeds, *seedFlag)
	} else {
		for i := 1; i <= n; i++ {
			seeds = append(seeds, uint64(i))
		}
	}
	for _, seed := range seeds {
		v, _ := check(seed, false)
		if v == "" {
			continue
		}
		_, trace := check(seed, true)
		if len(trace) > 400 {
			trace = append(trace[:200], append([]string{"..."}, trace[len(trace)-200:]...)...)
		}
		t.Fatalf("seed %d: %s\nreplay with: go test ./runner/core -run '^%s$' -seed %d -v\n%s", seed, v, name, seed, strings.Join(trace, "\n"))
	}
	t.Logf("%d interleavings", len(seeds))
}

// TestInterleavings runs random plans in random interleavings of starts, exits, health, timers,
// interrupts and store writes, and checks the runner's invariants after every step: the cap
// holds, no trial starts before its dependencies allow, each attempt ends once, services live
// while needed and their loss fails their dependants with the reason, every run ends.
func TestInterleavings(t *testing.T) {
	n := *rounds
	if testing.Short() {
		n = 10_000
	}
	forSeeds(t, "TestInterleavings", n, func(seed uint64, trace bool) (string, []string) {
		rng := rand.New(rand.NewPCG(seed, 1))
		p := genPlan(rng, planOptions{})
		w := newWorld(rng, p, nil, epoch)
		w.tracing = trace
		stopAt := -1
		if rng.IntN(8) == 0 {
			stopAt = rng.IntN(30)
		}
		v := w.run(stopAt)
		return v, append([]string{fmt.Sprintf("plan: jobs %d fail-fast %v", p.jobs, p.failFast), describePlan(p)}, w.trace...)
	})
}

// TestResumeFromAnyPrefix runs a plan to its end, then, for a prefix of its journal (the store
// after k records were written, as a runner killed at that moment leaves it), resumes the run
// in a new core and another interleaving: it must end in the same state.
func TestResumeFromAnyPrefix(t *testing.T) {
	n := *rounds / 5
	if testing.Short() {
		n = 2_000
	}
	forSeeds(t, "TestResumeFromAnyPrefix", n, func(seed uint64, trace bool) (string, []string) {
		rng := rand.New(rand.NewPCG(seed, 2))
		p := genPlan(rng, planOptions{deterministic: true})
		full := newWorld(rng, p, nil, epoch)
		full.tracing, full.fastIO = trace, true
		if v := full.run(-1); v != "" {
			return "first run: " + v, append([]string{describePlan(p)}, full.trace...)
		}
		k := rng.IntN(len(full.journal) + 1)
		var journal map[string]*store.TrialRecord
		if k > 0 {
			journal = full.journal[k-1]
		}
		resumed := newWorld(rng, p, journal, full.now.Add(time.Hour))
		resumed.tracing, resumed.fastIO = trace, true
		v := resumed.run(-1)
		tr := append([]string{describePlan(p), fmt.Sprintf("resumed after %d of %d records", k, len(full.journal))}, full.trace...)
		tr = append(append(tr, "--- resumed"), resumed.trace...)
		if v != "" {
			return "resumed run: " + v, tr
		}
		for i, spec := range p.trials {
			if spec.Service {
				continue
			}
			a, b := full.c.Record(i), resumed.c.Record(i)
			if a.Status != b.Status {
				return fmt.Sprintf("%s ended %s in the whole run but %s when resumed after %d records", spec.Name, a.Status, b.Status, k), tr
			}
		}
		return "", tr
	})
}

func describePlan(p plan) string {
	var b strings.Builder
	if c := p.capacity; c != nil {
		fmt.Fprintf(&b, "  capacity: %g cores, %d bytes, GPUs %+v\n", c.CPU, c.Memory, c.GPUs)
	}
	for i, t := range p.trials {
		fmt.Fprintf(&b, "  %d %s service=%v restart=%q retries=%d timeout=%s health=%v depends=%v after=%v resources=%+v behaviour=%+v\n",
			i, t.Name, t.Service, t.Restart, t.Retries, time.Duration(t.Timeout), t.Health != nil, t.Depends, t.After, t.Resources, p.behave[i])
	}
	return b.String()
}
