package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jikken-dev/jikken/store"
)

// A trial record that a machine crash left empty (written, renamed, never synced) counts as
// never written: resume runs the trial again instead of failing to read the run.
func TestEmptyTrialRecordCountsAsNotWritten(t *testing.T) {
	ctx := context.Background()
	folder, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: folder}
	for _, name := range []string{"a", "b"} {
		if errs := runs.WriteTrials(ctx, []*store.TrialRecord{{Run: "r1", Name: name, Status: store.Succeeded}}); errs[0] != nil {
			t.Fatal(errs[0])
		}
	}
	if err := os.WriteFile(filepath.Join(folder.Root(), filepath.FromSlash(store.TrialKey("r1", "b", "trial.json"))), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := runs.Trials(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs["a"] == nil {
		t.Fatalf("trials = %v, want only a", recs)
	}
	if _, err := runs.Trial(ctx, "r1", "b"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Trial(b) = %v, want not found", err)
	}
}
