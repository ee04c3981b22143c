package results_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

// Load reads an ended run from its summary the rows it reads from the trial files: with the
// files gone, the rows stay; once the run is resumed (a state without an end) the files are
// read again.
func TestLoadFromTheSummaryEqualsTheFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	run := writeDemo(t, dir, 3)
	blob, err := store.OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	fromFiles, err := results.Load(ctx, runs, run)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC)
	s, err := results.Summarize(ctx, runs, run, end)
	if err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteSummary(ctx, run, s); err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteState(ctx, run, &store.RunState{Status: store.Failed, Started: end.Add(-time.Hour), Finished: &end}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range s.Trials {
		for _, f := range []string{"metrics.jsonl", "result.json"} {
			if err := blob.Delete(ctx, store.TrialKey(run, tr.Name, f)); err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
		}
	}
	fromSummary, err := results.Load(ctx, runs, run)
	if err != nil {
		t.Fatal(err)
	}
	// The tables as 'jikken results' prints them (NaN as text, seeds as numbers).
	table := func(rows []results.Row) string {
		tb := results.ToTable(rows)
		return fmt.Sprint(tb.Columns, tb.Rows)
	}
	if a, b := table(fromFiles), table(fromSummary); a != b {
		t.Errorf("rows from the trial files:\n%.3000s\nfrom the summary:\n%.3000s", a, b)
	}
	if err := runs.WriteState(ctx, run, &store.RunState{Status: store.Running, Started: end.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	resumed, err := results.Load(ctx, runs, run)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := table(resumed), table(fromFiles); a == b {
		t.Error("a resumed run was read from its summary: its metrics files are gone, its rows should have no metrics")
	}
}
