package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/store"
)

// RunListing checks that store.Runs finds the same runs and trials in b through its
// DirLister (when b has one) as through a full List of b, for awkward run and trial names.
// b must be empty.
func RunListing(t *testing.T, b store.Blob) {
	ctx := context.Background()
	runs := store.Runs{Blob: b}
	put := func(key, val string) {
		t.Helper()
		if err := b.Put(ctx, key, strings.NewReader(val), int64(len(val))); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	// Names that reach the layout as they are (TrialKey and RunKey only join them in).
	trials := []string{"plain", "with space", "ünïcode-名前", "k=v", "a.b-c_d", "x+y", "100%", "train",
		// A name holding "/" lands one folder deeper (trials/train/seed=3/trial.json), where
		// neither a full scan nor a folder listing takes it for a trial.
		"train/seed=3", "eval/seed=1"}
	complete := []string{"20261122-100000-a-0001", "run with space", "ü-run", "k=v", "a-b", "a"}
	for _, id := range complete {
		if err := runs.WriteManifest(ctx, &store.Manifest{RunID: id, Created: time.Unix(0, 0).UTC()}); err != nil {
			t.Fatal(err)
		}
		for i, name := range trials {
			if err := runs.WriteTrial(ctx, &store.TrialRecord{Run: id, Name: name, Index: i, Status: store.Succeeded}); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"stdout.log", "metrics.jsonl", "artifacts/model.bin", "artifacts/deep/er/x y.txt"} {
				put(store.TrialKey(id, name, f), f)
			}
		}
		// A trial whose record is not written yet: only its outputs are there.
		put(store.TrialKey(id, "no-record", "stdout.log"), "x")
		put(store.TrialKey(id, "no-record", "artifacts/a"), "x")
	}
	// A run being created or copied: no manifest yet.
	put(store.RunKey("20261122-100000-b-0002", "state.json"), "{}")
	put(store.TrialKey("20261122-100000-b-0002", "plain", "trial.json"), "{}")
	// A stray object directly under runs/.
	put("runs/README", "not a run")

	scan := store.Runs{Blob: listOnly{b}}
	gotIDs, err := runs.RunIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scanIDs, err := scan.RunIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := slices.Sorted(slices.Values(complete))
	if fmt.Sprint(gotIDs) != fmt.Sprint(wantIDs) || fmt.Sprint(scanIDs) != fmt.Sprint(wantIDs) {
		t.Errorf("RunIDs = %q, by full scan %q; want %q", gotIDs, scanIDs, wantIDs)
	}
	wantTrials := []string{"100%", "a.b-c_d", "k=v", "plain", "train", "with space", "x+y", "ünïcode-名前"}
	for _, id := range append(complete, "20261122-100000-b-0002", "missing-run") {
		got, err := runs.Trials(ctx, id)
		if err != nil {
			t.Fatalf("Trials(%q): %v", id, err)
		}
		byScan, err := scan.Trials(ctx, id)
		if err != nil {
			t.Fatalf("Trials(%q) by full scan: %v", id, err)
		}
		if !reflect.DeepEqual(got, byScan) {
			t.Errorf("Trials(%q) = %v, by full scan %v", id, keys(got), keys(byScan))
		}
		want := wantTrials
		switch id {
		case "20261122-100000-b-0002":
			want = []string{"plain"}
		case "missing-run":
			want = nil
		}
		if fmt.Sprint(keys(got)) != fmt.Sprint(want) {
			t.Errorf("Trials(%q) = %q, want %q", id, keys(got), want)
		}
		for name, rec := range got {
			if id != "20261122-100000-b-0002" && (rec.Name != name || rec.Run != id) {
				t.Errorf("Trials(%q)[%q] = record of %q/%q", id, name, rec.Run, rec.Name)
			}
		}
	}
}

func keys(m map[string]*store.TrialRecord) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
}
