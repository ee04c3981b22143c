package store_test

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/store"
)

func TestLockRefusesLiveHolderAndTakesOverDeadOne(t *testing.T) {
	ctx := context.Background()
	f, _ := store.OpenFolder(t.TempDir())
	runs := store.Runs{Blob: f}
	host, _ := os.Hostname()
	me := store.LockInfo{Host: host, PID: os.Getpid(), Started: time.Now()}
	release, err := runs.Lock(ctx, "r1", me, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runs.Lock(ctx, "r1", me, false); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	release()

	// A holder whose process has exited is stale.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := store.LockInfo{Host: host, PID: cmd.Process.Pid, Started: time.Now()}
	if _, err := runs.Lock(ctx, "r2", dead, false); err != nil {
		t.Fatal(err)
	}
	if _, err := runs.Lock(ctx, "r2", me, false); err != nil {
		t.Fatalf("taking over a dead holder's lock: %v", err)
	}
	// A holder on another host is not judged from here.
	other := store.LockInfo{Host: host + "-elsewhere", PID: 1, Started: time.Now()}
	if _, err := runs.Lock(ctx, "r3", other, false); err != nil {
		t.Fatal(err)
	}
	_, err = runs.Lock(ctx, "r3", me, false)
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("lock held elsewhere: %v", err)
	}
	if _, err := runs.Lock(ctx, "r3", me, true); err != nil {
		t.Fatalf("forced lock: %v", err)
	}
}

func TestResolveRunReferences(t *testing.T) {
	ctx := context.Background()
	f, _ := store.OpenFolder(t.TempDir())
	runs := store.Runs{Blob: f}
	if _, err := runs.Resolve(ctx, "latest"); err == nil || !strings.Contains(err.Error(), "no runs") {
		t.Fatalf("empty store: %v", err)
	}
	// b-0003 sorts after b-0002 but was created first, in the same second: latest is b-0002.
	t0 := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	for i, id := range []string{"20261122-100000-a-0001", "20261122-110000-b-0003", "20261122-110000-b-0002"} {
		if err := runs.WriteManifest(ctx, &store.Manifest{RunID: id, Created: t0.Add(time.Duration(i) * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]string{"latest": "20261122-110000-b-0002", "20261122-10": "20261122-100000-a-0001", "20261122-110000-b-0002": "20261122-110000-b-0002"}
	for ref, want := range cases {
		if got, err := runs.Resolve(ctx, ref); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	if _, err := runs.Resolve(ctx, "20261122-11"); err == nil || !strings.Contains(err.Error(), "matches several runs") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := runs.Resolve(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "jikken runs") {
		t.Errorf("unknown run: %v", err)
	}
}

func TestCreateManifestRefusesAnExistingRun(t *testing.T) {
	ctx := context.Background()
	f, _ := store.OpenFolder(t.TempDir())
	runs := store.Runs{Blob: f}
	m := &store.Manifest{RunID: "20261122-100000-a-0001", Experiment: "first"}
	if err := runs.CreateManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	err := runs.CreateManifest(ctx, &store.Manifest{RunID: m.RunID, Experiment: "second"})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second create: %v", err)
	}
	if got, _ := runs.Manifest(ctx, m.RunID); got.Experiment != "first" {
		t.Fatalf("manifest replaced: %+v", got)
	}
}

// A search keeps each trial's final values in its record; a trial whose objective came out NaN
// or infinite must still be recorded (JSON numbers cannot hold those values), else its result is
// lost and the run stops with a store error.
func TestTrialRecordKeepsNonFiniteValues(t *testing.T) {
	ctx := context.Background()
	f, _ := store.OpenFolder(t.TempDir())
	runs := store.Runs{Blob: f}
	want := map[string]float64{"loss": math.NaN(), "acc": math.Inf(1), "x": math.Inf(-1), "y": 0.5}
	one := &store.TrialRecord{Run: "r", Name: "a", Status: store.Succeeded, Values: want}
	if err := runs.WriteTrial(ctx, one); err != nil {
		t.Fatalf("write a record with NaN and infinite values: %v", err)
	}
	two := &store.TrialRecord{Run: "r", Name: "b", Index: 1, Status: store.Pruned, Values: want}
	for _, err := range runs.WriteTrials(ctx, []*store.TrialRecord{two}) {
		if err != nil {
			t.Fatalf("write records with NaN and infinite values: %v", err)
		}
	}
	for _, name := range []string{"a", "b"} {
		rec, err := runs.Trial(ctx, "r", name)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Values) != len(want) || !math.IsNaN(rec.Values["loss"]) || !math.IsInf(rec.Values["acc"], 1) ||
			!math.IsInf(rec.Values["x"], -1) || rec.Values["y"] != 0.5 {
			t.Errorf("trial %s: values read back %v, want %v", name, rec.Values, want)
		}
	}
	b, err := store.ReadAll(ctx, f, "runs/r/trials/a/trial.json")
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"loss": "NaN"`) || !strings.Contains(s, `"acc": "Infinity"`) || !strings.Contains(s, `"x": "-Infinity"`) {
		t.Errorf("record is not written as record.EncodeFloat writes values:\n%s", s)
	}
	// A record without values has none after a round trip (omitted, not an empty object).
	if err := runs.WriteTrial(ctx, &store.TrialRecord{Run: "r", Name: "c", Index: 2, Status: store.Pending}); err != nil {
		t.Fatal(err)
	}
	if rec, err := runs.Trial(ctx, "r", "c"); err != nil || rec.Values != nil {
		t.Errorf("record without values read back as %v, %v", rec.Values, err)
	}
}
