package store_test

import (
	"context"
	"errors"
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
