package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

// ErrRunning is returned (wrapped) by Extend when a live runner holds the run.
var ErrRunning = errors.New("the run is still running")

// Extend records the grown plan g in the store as run m's plan, under the run's lock, so that
// running the run (Execute, as resume does) runs the added trials. next is m with the new
// evaluation (Sources, Evaluated, options) set by the caller; its Trials are replaced by g's.
//
// The steps are ordered so that a crash between any two leaves a run that 'jikken resume'
// completes: the run's state says it has work (pending), then the trials that wait for the
// added ones are set pending again, then the manifest, written atomically (one Put), makes
// the added trials part of the plan. Nothing is written when the lock is held by a live runner.
func Extend(ctx context.Context, runs store.Runs, m, next *store.Manifest, g *experiment.Growth, seeds string) error {
	host := hostname()
	me := store.LockInfo{Host: host, PID: os.Getpid(), Started: time.Now().UTC()}
	release, err := runs.Lock(ctx, m.RunID, me, false)
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return fmt.Errorf("extend %s: %w (%w); extend it once it has ended", m.RunID, ErrRunning, err)
		}
		return err
	}
	defer release()
	state := &store.RunState{Status: store.Pending, Started: me.Started}
	if old, err := runs.State(ctx, m.RunID); err == nil {
		state.Started = old.Started
	}
	if err := runs.WriteState(ctx, m.RunID, state); err != nil {
		return fmt.Errorf("extend %s: record run state: %w", m.RunID, err)
	}
	for _, name := range g.Rerun {
		rec, err := runs.Trial(ctx, m.RunID, name)
		if errors.Is(err, store.ErrNotFound) || (err == nil && !rec.Status.Final()) {
			continue // it has not run: it will, with its new definition
		}
		if err != nil {
			return fmt.Errorf("extend %s: %w", m.RunID, err)
		}
		rec.Status, rec.Reason, rec.Finished, rec.ExitCode = store.Pending, "runs again after the trials 'jikken extend' added", nil, nil
		if err := runs.WriteTrial(ctx, rec); err != nil {
			return fmt.Errorf("extend %s: record trial %s: %w", m.RunID, name, err)
		}
	}
	next.Extensions = append(append([]store.Extension(nil), m.Extensions...), store.Extension{
		At: time.Now().UTC(), Was: m.Tool, From: len(m.Trials), Added: len(g.Added), Seeds: seeds, Rerun: g.Rerun,
	})
	next.Trials = g.Trials
	if err := runs.WriteManifest(ctx, next); err != nil {
		return fmt.Errorf("extend %s: record the grown plan: %w", m.RunID, err)
	}
	return nil
}
