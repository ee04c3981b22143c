package executor

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/jikken-dev/jikken/live"
	"github.com/jikken-dev/jikken/store"
)

// feedLive starts appending the command's metric points to the store's live chunks as it writes
// them (nil when turned off or when it cannot start; the final metrics.jsonl is stored anyway).
// An attempt started again under the same number (a pod restarted) starts its points afresh.
func (u *uploader) feedLive(ctx context.Context, log io.Writer) *live.Feeder {
	o := u.o
	if o.LiveEvery < 0 {
		return nil
	}
	every := o.LiveEvery
	if every == 0 {
		every = DefaultLiveEvery
	}
	f, err := live.Start(ctx, live.Options{
		Runs: store.Runs{Blob: o.Store}, Run: o.RunID, Trial: o.Trial, Attempt: max(o.Attempt, 1),
		Sources: []live.Source{
			{Name: "metrics.jsonl", Path: filepath.Join(o.OutputDir, "metrics.jsonl"), Kind: live.Metrics},
			{Name: "stdout", Path: u.stdoutPath, Kind: live.Stdout},
		},
		Every: every,
	})
	if err != nil {
		u.note(log, fmt.Sprintf("live metrics off: %v", err))
		return nil
	}
	return f
}

// stopLive appends the points the command left and notes in stderr.log the lines left out.
func (u *uploader) stopLive(ctx context.Context, f *live.Feeder, log io.Writer) {
	if f == nil {
		return
	}
	notes, err := f.Stop(ctx)
	if err != nil {
		notes = append(notes, fmt.Sprintf("live metrics not all stored (metrics.jsonl has them): %v", err))
	}
	for _, n := range notes {
		u.note(log, n)
	}
}

// note writes a remark of the executor to stderr.log and the console's stderr.
func (u *uploader) note(log io.Writer, msg string) {
	line := "jikken trial-exec: " + msg + "\n"
	_, _ = io.WriteString(log, line)
	if u.o.Stderr != nil {
		_, _ = io.WriteString(u.o.Stderr, line)
	}
}
