package store

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/trial"
)

// TestExpanderIsTheStoresOnlyWayToAnExperiment: the store compacts a large plan only through the
// Expander registered with it, and without one stores plans whole and refuses, saying why, to
// read a compact manifest instead of showing no trials.
func TestExpanderIsTheStoresOnlyWayToAnExperiment(t *testing.T) {
	was := expander.Load()
	t.Cleanup(func() { expander.Store(was) })
	ctx := context.Background()
	f, err := OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runs := Runs{Blob: f}
	plan := make([]trial.Trial, CompactAbove+1)
	for i := range plan {
		plan[i] = trial.Trial{Name: "t" + strconv.Itoa(i), Index: i, Cmd: trial.Command{Shell: "true"}}
	}
	manifest := func(id string) *Manifest {
		return &Manifest{RunID: id, File: "e.jsonnet", Evaluated: json.RawMessage(`{"n":1001}`), Trials: plan}
	}
	stored := func(id string) []byte {
		b, err := ReadAll(ctx, f, RunKey(id, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	SetExpander(nil)
	if err := runs.CreateManifest(ctx, manifest("whole")); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored("whole"), []byte("trials_expansion")) {
		t.Fatal("stored compact with no expander")
	}
	if m, err := runs.Manifest(ctx, "whole"); err != nil || len(m.Trials) != len(plan) {
		t.Fatalf("whole manifest read back: %v", err)
	}

	var files []string
	SetExpander(func(file string, evaluated json.RawMessage) ([]trial.Trial, error) {
		files = append(files, file)
		return plan, nil
	})
	if err := runs.CreateManifest(ctx, manifest("compact")); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(stored("compact"), []byte("trials_expansion")) {
		t.Fatal("stored whole with an expander that gives the same trials")
	}
	m, err := runs.Manifest(ctx, "compact")
	if err != nil || len(m.Trials) != len(plan) || m.Trials[CompactAbove].Name != plan[CompactAbove].Name {
		t.Fatalf("compact manifest read back: %v", err)
	}
	if len(files) != 2 || files[0] != "e.jsonnet" {
		t.Errorf("expander called for %q, want e.jsonnet on write and read", files)
	}

	SetExpander(nil)
	if _, err := runs.Manifest(ctx, "compact"); err == nil || !strings.Contains(err.Error(), "cannot expand experiments") {
		t.Fatalf("compact manifest read with no expander: err = %v", err)
	}
}
