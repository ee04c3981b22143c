//go:build unix

package runner_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// clusterBackend stands for a cluster's backend: it takes a limited number of Starts at once
// (StartLimiter), and its processes report their end through Notify (Notifier), ended by the
// test.
type clusterBackend struct {
	t     *testing.T
	limit int

	mu       sync.Mutex
	inStart  int
	peak     int
	order    []string
	procs    []*notifyingProc
	notified chan struct{} // one value per Notify call
}

func (b *clusterBackend) Name() string   { return "cluster" }
func (b *clusterBackend) MaxStarts() int { return b.limit }

func (b *clusterBackend) Start(_ context.Context, a *runner.Attempt) (runner.Process, error) {
	b.mu.Lock()
	b.inStart++
	b.peak = max(b.peak, b.inStart)
	b.order = append(b.order, a.Trial.Name)
	p := &notifyingProc{t: b.t, b: b}
	b.procs = append(b.procs, p)
	b.mu.Unlock()
	// Give the other goroutines a chance to come in: without the runner's queue they would.
	runtime.Gosched()
	b.mu.Lock()
	b.inStart--
	b.mu.Unlock()
	return p, nil
}

func (b *clusterBackend) Live(context.Context, string) ([]runner.LiveTrial, error) { return nil, nil }
func (b *clusterBackend) StopLive(context.Context, runner.LiveTrial) error         { return nil }
func (b *clusterBackend) Plan([]experiment.Trial)                                  {}

type notifyingProc struct {
	t *testing.T
	b *clusterBackend

	mu     sync.Mutex
	notify func()
	ended  bool
}

func (p *notifyingProc) Handle() string           { return "cluster" }
func (p *notifyingProc) Stop(time.Duration) error { return nil }
func (p *notifyingProc) OutputsStored() bool      { return true }

func (p *notifyingProc) Notify(f func()) {
	p.mu.Lock()
	p.notify = f
	p.mu.Unlock()
	p.b.notified <- struct{}{}
}

func (p *notifyingProc) Wait() runner.Exit {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ended {
		p.t.Error("Wait called before the process notified its end")
	}
	return runner.Exit{}
}

// end ends the attempt and notifies the runner, as a backend's watch does.
func (p *notifyingProc) end() {
	p.mu.Lock()
	p.ended = true
	f := p.notify
	p.mu.Unlock()
	f()
}

// clusterRun starts a run of n trials at once on a clusterBackend, waits until every attempt
// has started and asked to be notified, and returns the backend and a function that ends the
// attempts and returns the run's summary.
func clusterRun(t *testing.T, n, limit int) (*clusterBackend, func() *runner.Summary) {
	t.Helper()
	b := &clusterBackend{t: t, limit: limit, notified: make(chan struct{}, n)}
	spec := fmt.Sprintf(`{"defaults":{"image":"x"},"matrix":{"name":"s","seeds":%d,"cmd":"train"}}`, n)
	done := make(chan *runner.Summary, 1)
	go func() {
		sum, _, _ := run(t, spec, func(r *runner.Runner) { r.Backend, r.Jobs = b, n })
		done <- sum
	}()
	for i := range n {
		select {
		case <-b.notified:
		case sum := <-done:
			t.Fatalf("the run ended (%+v) with %d of %d attempts notifying their end", sum.Counts, i, n)
		}
	}
	return b, func() *runner.Summary {
		b.mu.Lock()
		procs := b.procs
		b.mu.Unlock()
		for _, p := range procs {
			p.end()
		}
		return <-done
	}
}

// TestStartLimiterQueuesStarts: a backend that takes a few Starts at once gets no more, in
// the order the runner decided to start the attempts; the rest wait in the runner's queue, not
// in a goroutine each.
func TestStartLimiterQueuesStarts(t *testing.T) {
	const n, limit = 200, 1
	b, end := clusterRun(t, n, limit)
	sum := end()
	b.mu.Lock()
	peak, order := b.peak, b.order
	b.mu.Unlock()
	if sum.Counts.Succeeded != n {
		t.Fatalf("counts %+v", sum.Counts)
	}
	if peak > limit {
		t.Errorf("%d Starts at once, the backend takes %d", peak, limit)
	}
	for i, name := range order {
		if want := fmt.Sprintf("s-s%d", i); name != want {
			t.Fatalf("start %d was %s, want %s: queued attempts start in order (%v)", i, name, want, order[:i+1])
		}
	}
}

// TestNotifierHoldsNoGoroutinePerAttempt: while attempts whose processes notify their end run,
// the runner keeps no goroutine for each; it calls Wait once the end is notified.
func TestNotifierHoldsNoGoroutinePerAttempt(t *testing.T) {
	const n = 400
	before := runtime.NumGoroutine()
	_, end := clusterRun(t, n, 8)
	// Every attempt runs: a goroutine each would be n more.
	if g := runtime.NumGoroutine() - before; g > n/4 {
		t.Errorf("%d goroutines while %d attempts run", g, n)
	}
	sum := end()
	if sum.Counts.Succeeded != n || sum.Status != store.Succeeded {
		t.Fatalf("counts %+v", sum.Counts)
	}
}
