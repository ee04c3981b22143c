package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/store"
)

// deleteLog is a Blob that records the keys deleted through it and fails every Delete after
// the first failAfter (never, when failAfter is 0).
type deleteLog struct {
	store.Blob
	failAfter int

	mu      sync.Mutex
	deleted []string
}

func (d *deleteLog) Delete(ctx context.Context, key string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failAfter > 0 && len(d.deleted) >= d.failAfter {
		return errors.New("injected failure")
	}
	d.deleted = append(d.deleted, key)
	return d.Blob.Delete(ctx, key)
}

// putRun stores a run with a manifest, state, lock and two trials with outputs, and returns how
// many objects it wrote.
func putRun(t *testing.T, runs store.Runs, id string) int {
	t.Helper()
	ctx := context.Background()
	if err := runs.WriteManifest(ctx, &store.Manifest{RunID: id, Created: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteState(ctx, id, &store.RunState{Status: store.Succeeded}); err != nil {
		t.Fatal(err)
	}
	keys := []string{store.RunKey(id, "lock")}
	for _, trial := range []string{"t1", "t2"} {
		if err := runs.WriteTrial(ctx, &store.TrialRecord{Run: id, Name: trial, Status: store.Succeeded}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, store.TrialKey(id, trial, "stdout.log"), store.TrialKey(id, trial, "artifacts/deep/model.bin"))
	}
	for _, k := range keys {
		if err := runs.Blob.Put(ctx, k, strings.NewReader("x"), 1); err != nil {
			t.Fatal(err)
		}
	}
	return 2 + 2 + len(keys)
}

func TestRunsDeleteRemovesTheManifestLast(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, _ := store.OpenFolder(dir)
	runs := store.Runs{Blob: f}
	n := putRun(t, runs, "a")
	putRun(t, runs, "a-b") // shares the prefix "runs/a", not the folder "runs/a/"

	log := &deleteLog{Blob: f}
	var seen []int
	got, err := store.Runs{Blob: log}.Delete(ctx, "a", func(d int) { seen = append(seen, d) })
	if err != nil {
		t.Fatal(err)
	}
	if got != n || len(log.deleted) != n {
		t.Fatalf("Delete = %d, deleted %d keys; want %d", got, len(log.deleted), n)
	}
	if last := log.deleted[len(log.deleted)-1]; last != store.RunKey("a", "manifest.json") {
		t.Errorf("last deleted %s, want the manifest; order %q", last, log.deleted)
	}
	for _, k := range log.deleted {
		if !strings.HasPrefix(k, "runs/a/") {
			t.Errorf("deleted %s, outside the run", k)
		}
	}
	if len(seen) != n || seen[0] != 1 || seen[n-1] != n {
		t.Errorf("progress saw %v, want 1..%d", seen, n)
	}
	if ids, _ := runs.RunIDs(ctx); !slices.Equal(ids, []string{"a-b"}) {
		t.Errorf("RunIDs after delete = %q, want [a-b]", ids)
	}
	if recs, _ := runs.Trials(ctx, "a-b"); len(recs) != 2 {
		t.Errorf("the other run lost trials: %d left", len(recs))
	}

	// The folder store also loses the run's emptied folders.
	if _, err := runs.Delete(ctx, "a-b", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "a-b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder of the deleted run left behind: %v", err)
	}
}

func TestRunsDeleteInterruptedIsFinishedByASecondDelete(t *testing.T) {
	ctx := context.Background()
	f, _ := store.OpenFolder(t.TempDir())
	runs := store.Runs{Blob: f}
	n := putRun(t, runs, "r1")

	failing := &deleteLog{Blob: f, failAfter: 3}
	got, err := store.Runs{Blob: failing}.Delete(ctx, "r1", nil)
	if err == nil || !strings.Contains(err.Error(), "run the delete again") {
		t.Fatalf("Delete with failures = %d, %v; want an error saying to run it again", got, err)
	}
	if got != 3 {
		t.Errorf("Delete reported %d deleted, want 3", got)
	}
	if ids, _ := runs.RunIDs(ctx); !slices.Equal(ids, []string{"r1"}) {
		t.Fatalf("after an interrupted delete RunIDs = %q, want the run still listed", ids)
	}

	rest, err := runs.Delete(ctx, "r1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got+rest != n {
		t.Errorf("deleted %d then %d objects, want %d in all", got, rest, n)
	}
	if ids, _ := runs.RunIDs(ctx); len(ids) != 0 {
		t.Errorf("RunIDs after the second delete = %q", ids)
	}
	// Deleting again, or a run that never was, deletes nothing.
	if n, err := runs.Delete(ctx, "r1", nil); n != 0 || err != nil {
		t.Errorf("Delete of a deleted run = %d, %v", n, err)
	}
}

func TestRunsDeleteRefusesKeysThatAreNotRunIDs(t *testing.T) {
	f, _ := store.OpenFolder(t.TempDir())
	runs := store.Runs{Blob: f}
	putRun(t, runs, "r1")
	for _, id := range []string{"", "..", "r1/trials", "/r1"} {
		if n, err := runs.Delete(context.Background(), id, nil); err == nil {
			t.Errorf("Delete(%q) = %d, nil; want an error", id, n)
		}
	}
	if ids, _ := runs.RunIDs(context.Background()); !slices.Equal(ids, []string{"r1"}) {
		t.Errorf("RunIDs = %q, want [r1] untouched", ids)
	}
}

// A writer killed midway leaves a temporary file, which List does not show: Delete removes it
// too, and the run's folder with it.
func TestRunsDeleteRemovesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	folder, err := store.OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: folder}
	ctx := context.Background()
	putRun(t, runs, "r1")
	tmp := filepath.Join(dir, "runs", "r1", "trials", "t1", ".tmp-123456")
	if err := os.WriteFile(tmp, []byte("half a record"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runs.Delete(ctx, "r1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "r1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the run's folder is still there (%v)", err)
	}
}
