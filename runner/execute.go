package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

var unsafeID = regexp.MustCompile(`[^a-z0-9-]+`)

// NewRunID makes a run id that sorts by time and reads well: <YYYYMMDD-HHMMSS>-<name>-<4 hex>.
// It is a valid label value and file name.
func NewRunID(name string, now time.Time) string {
	n := strings.Trim(unsafeID.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(n) > 30 {
		n = strings.Trim(n[:30], "-")
	}
	if n == "" {
		n = "run"
	}
	var b [2]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%s-%s", now.UTC().Format("20060102-150405"), n, hex.EncodeToString(b[:]))
}

// Execute runs m under the run's lock: it records the run as running, runs the trials that have
// not succeeded yet (all of them for a new run), records how the run ended and releases the lock.
func (r *Runner) Execute(ctx context.Context, m *store.Manifest, force bool) (*Summary, error) {
	if r.Host == "" {
		r.Host = hostname()
	}
	me := store.LockInfo{Host: r.Host, PID: os.Getpid(), Started: time.Now().UTC()}
	release, err := r.Runs.Lock(ctx, m.RunID, me, force)
	if err != nil {
		return nil, err
	}
	defer release()
	prior, err := r.Runs.Trials(ctx, m.RunID)
	if err != nil {
		return nil, fmt.Errorf("read trial records of %s: %w", m.RunID, err)
	}
	state := &store.RunState{Status: store.Running, Started: me.Started, Runner: &me}
	if old, err := r.Runs.State(ctx, m.RunID); err == nil {
		state.Started = old.Started
	}
	if err := r.Runs.WriteState(ctx, m.RunID, state); err != nil {
		return nil, fmt.Errorf("record run state: %w", err)
	}
	sum, err := r.Run(ctx, m, prior)
	if err != nil {
		// A run stopped by its store (a full disk) is resumable: record it as killed.
		state.Status = store.Failed
		if sum != nil {
			state.Status = store.Killed
		}
		now := time.Now().UTC()
		state.Finished, state.Runner = &now, nil
		_ = r.Runs.WriteState(context.WithoutCancel(ctx), m.RunID, state)
		return sum, err
	}
	now := time.Now().UTC()
	state.Status, state.Finished, state.Runner = sum.Status, &now, nil
	c := sum.Counts
	state.Counts = map[store.Status]int{store.Succeeded: c.Succeeded, store.Failed: c.Failed,
		store.Skipped: c.Skipped, store.Killed: c.Killed, store.Stopped: c.Stopped, store.Pruned: c.Pruned, store.Eliminated: c.Eliminated, store.Pending: c.Pending}
	if ctx.Err() == nil {
		// A run stopped by Ctrl-C ends at once; its readers read the trial files.
		r.writeSummary(ctx, m.RunID, now)
	}
	if err := r.Runs.WriteState(context.WithoutCancel(ctx), m.RunID, state); err != nil {
		return sum, fmt.Errorf("record run state: %w", err)
	}
	return sum, nil
}

// writeSummary stores the run's summary for the state about to end it, so that readers of
// final results (the notebook reader) open one file instead of three per trial. It is a cache:
// when it cannot be written the run still ends, and readers read the trial files.
func (r *Runner) writeSummary(ctx context.Context, run string, finished time.Time) {
	s, err := results.Summarize(ctx, r.Runs, run, finished)
	if err == nil {
		err = r.Runs.WriteSummary(ctx, run, s)
	}
	if err != nil && ctx.Err() == nil {
		r.Log.Warn("write the run's summary; readers will read each trial's files instead", "err", err)
	}
}
