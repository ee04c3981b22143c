package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/version"
	"github.com/jikken-dev/jikken/store"
)

// matrixManifest is the manifest of a run of a matrix of params x seeds trials.
func matrixManifest(t testing.TB, id string, params, seeds int) *store.Manifest {
	t.Helper()
	vals := make([]string, params)
	for i := range vals {
		vals[i] = `"v` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `"`
	}
	src := `{"name":"big","matrix":{"name":"train","params":{"p":` + "[" + strings.Join(vals, ",") + "]" + `,"lr":[0.1,0.01]},"seeds":` +
		itoa(seeds) + `,"cmd":"train --p {{p}} --lr {{lr}} --seed {{seed}}","resources":{"cpu":1,"memory":"2Gi"}}}`
	exp, err := experiment.ParseMax("big.jsonnet", []byte(src), -1)
	if err != nil {
		t.Fatal(err)
	}
	return &store.Manifest{RunID: id, Experiment: exp.Name, File: "big.jsonnet", Form: exp.Form, Evaluated: exp.Evaluated, Trials: exp.Trials}
}

func sameTrials(a, b []experiment.Trial) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return len(a) == len(b) && bytes.Equal(x, y)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func stored(t *testing.T, runs store.Runs, id string) []byte {
	t.Helper()
	b, err := store.ReadAll(context.Background(), runs.Blob, store.RunKey(id, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLargeManifestIsStoredCompact: a 100,000-trial matrix is stored as the matrix (kilobytes,
// where the list took 22 MB), and read back as the same 100,000 trials, the API everything reads.
func TestLargeManifestIsStoredCompact(t *testing.T) {
	ctx := context.Background()
	f, _ := store.OpenFolder(t.TempDir())
	runs := store.Runs{Blob: f}
	m := matrixManifest(t, "big", 1000, 50)
	if len(m.Trials) != 100_000 {
		t.Fatalf("%d trials", len(m.Trials))
	}
	if err := runs.CreateManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	if len(m.Trials) != 100_000 {
		t.Fatalf("CreateManifest changed the caller's trials: %d", len(m.Trials))
	}
	b := stored(t, runs, "big")
	if len(b) > 64<<10 || !bytes.Contains(b, []byte(`"trials_expansion"`)) || bytes.Contains(b, []byte(`"trials":`)) {
		t.Fatalf("stored manifest is %d bytes (want compact, with trials_expansion and no trials list)", len(b))
	}
	got, err := runs.Manifest(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if !sameTrials(m.Trials, got.Trials) {
		t.Fatal("the trials read back differ from those stored")
	}
	if got.Tool != "jikken "+version.String() || got.Build == nil {
		t.Errorf("tool %q build %v", got.Tool, got.Build)
	}
}

// TestManifestKeepsTrialsItCannotCompact: a small plan stays readable as it is, and a plan that
// is not what its experiment expands to (a reproduce run of one trial) is stored whole.
func TestManifestKeepsTrialsItCannotCompact(t *testing.T) {
	ctx := context.Background()
	f, _ := store.OpenFolder(t.TempDir())
	runs := store.Runs{Blob: f}
	small := matrixManifest(t, "small", 10, 5)
	one := matrixManifest(t, "one", 1000, 10)
	one.Trials = one.Trials[7:8]
	edited := matrixManifest(t, "edited", 1000, 10)
	edited.Trials[3].Env = map[string]string{"X": "1"}
	for _, m := range []*store.Manifest{small, one, edited} {
		if err := runs.WriteManifest(ctx, m); err != nil {
			t.Fatal(err)
		}
		if b := stored(t, runs, m.RunID); bytes.Contains(b, []byte("trials_expansion")) || !bytes.Contains(b, []byte(`"trials": [`)) {
			t.Errorf("%s: stored compact, want the trials listed", m.RunID)
		}
		got, err := runs.Manifest(ctx, m.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(m.Trials, got.Trials); diff != "" {
			t.Errorf("%s: trials differ:\n%s", m.RunID, diff)
		}
	}
}

// TestCompactManifestRefusesAnotherExpansion: when the stored matrix no longer expands to the
// trials that ran (another jikken's expansion, an edited file), reading fails and says why,
// instead of showing other trials.
func TestCompactManifestRefusesAnotherExpansion(t *testing.T) {
	ctx := context.Background()
	f, _ := store.OpenFolder(t.TempDir())
	runs := store.Runs{Blob: f}
	m := matrixManifest(t, "r", 1000, 2)
	if err := runs.CreateManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	b := bytes.Replace(stored(t, runs, "r"), []byte(`--seed {{seed}}`), []byte(`--seed={{seed}}`), 1)
	if err := runs.Blob.Put(ctx, store.RunKey("r", "manifest.json"), bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	_, err := runs.Manifest(ctx, "r")
	if err == nil || !strings.Contains(err.Error(), "expands that to other trials than the one that wrote it") {
		t.Fatalf("err = %v", err)
	}
}

func BenchmarkManifest100k(b *testing.B) {
	ctx := context.Background()
	f, _ := store.OpenFolder(b.TempDir())
	runs := store.Runs{Blob: f}
	m := matrixManifest(b, "r", 500, 100)
	if err := runs.CreateManifest(ctx, m); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := runs.Manifest(ctx, "r"); err != nil {
			b.Fatal(err)
		}
	}
}
