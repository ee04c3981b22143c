package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jikken-dev/jikken/checkpoint"
)

// keeper keeps a trial's checkpoint folder in the store while the executor runs it.
type keeper struct {
	remote checkpoint.Remote
	dir    string
	every  time.Duration
	before time.Duration
	max    int64
	// attempt tags the versions this executor saves.
	attempt int

	mu   sync.Mutex // one save at a time
	last *checkpoint.Manifest
	// refused is the size of the last folder refused for its size, so the trial is told once
	// per size, not at every tick.
	refused int64
}

// restoreCheckpoint restores the newest complete version of the trial's checkpoint into its
// folder and says so in the trial's log (w).
func restoreCheckpoint(ctx context.Context, o Options, w io.Writer) (*keeper, error) {
	k := &keeper{
		remote:  checkpoint.Remote{Blob: o.Store, Prefix: checkpoint.Key(o.RunID, o.Trial)},
		dir:     o.Checkpoint.Dir,
		every:   o.Checkpoint.Every,
		before:  o.Checkpoint.Before,
		max:     o.Checkpoint.Max,
		attempt: o.Attempt,
	}
	m, err := k.remote.Latest(ctx)
	if err != nil {
		return nil, fmt.Errorf("trial-exec: %w", err)
	}
	if m == nil {
		if err := k.remote.Restore(ctx, &checkpoint.Manifest{}, k.dir); err != nil {
			return nil, fmt.Errorf("trial-exec: %w", err)
		}
		return k, nil
	}
	if err := k.remote.Restore(ctx, m, k.dir); err != nil {
		return nil, fmt.Errorf("trial-exec: %w", err)
	}
	k.last = m
	fmt.Fprintf(w, "jikken trial-exec: restored checkpoint version %d (%d files, %d bytes, saved %s by attempt %d)\n",
		m.Version, len(m.Files), m.Size, m.Saved.Format(time.RFC3339), m.Attempt)
	return k, nil
}

// env points the command at the restored folder: JIKKEN_CHECKPOINT_DIR, JIKKEN_RESUMED=1 when a
// version was restored (and no JIKKEN_RESUMED otherwise, whatever the runner set).
func (k *keeper) env(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "JIKKEN_RESUMED=") && !strings.HasPrefix(kv, "JIKKEN_CHECKPOINT_DIR=") && !strings.HasPrefix(kv, "JIKKEN_CHECKPOINT_VERSION=") {
			out = append(out, kv)
		}
	}
	out = append(out, "JIKKEN_CHECKPOINT_DIR="+k.dir)
	if k.last != nil {
		out = append(out, "JIKKEN_RESUMED=1", "JIKKEN_CHECKPOINT_VERSION="+strconv.Itoa(k.last.Version))
	}
	return out
}

// saveIfIdle saves unless a save is under way (a tick while a large folder goes up).
func (k *keeper) saveIfIdle(ctx context.Context, w io.Writer) {
	if !k.mu.TryLock() {
		return
	}
	defer k.mu.Unlock()
	k.saveLocked(ctx, w)
}

// save uploads the folder as a new version (after any save under way) and returns the notes
// for the trial's record.
func (k *keeper) save(ctx context.Context, w io.Writer) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.saveLocked(ctx, w)
}

func (k *keeper) saveLocked(ctx context.Context, w io.Writer) []string {
	m, st, err := k.remote.Save(ctx, k.dir, k.last, k.attempt, k.max)
	var tl *checkpoint.TooLargeError
	switch {
	case errors.As(err, &tl):
		if tl.Size == k.refused {
			return nil
		}
		k.refused = tl.Size
		note := "checkpoint: " + err.Error()
		fmt.Fprintf(w, "jikken trial-exec: %s\n", note)
		return []string{note}
	case err != nil:
		note := "checkpoint not saved: " + err.Error()
		fmt.Fprintf(w, "jikken trial-exec: %s\n", note)
		return []string{note}
	}
	if m != k.last {
		fmt.Fprintf(w, "jikken trial-exec: saved checkpoint version %d (%d of %d files sent, %d bytes)\n", m.Version, st.Uploaded, st.Files, st.Sent)
	}
	k.last = m
	return nil
}
