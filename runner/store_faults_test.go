//go:build unix

package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// fullDisk is a folder store whose disk fills up: once full is set, writes whose key matches
// fail with ENOSPC, as the kernel reports them.
type fullDisk struct {
	*store.Folder
	full  atomic.Bool
	match func(key string) bool
}

func (f *fullDisk) fail(key string) error {
	if f.full.Load() && f.match(key) {
		return &fsError{key: key}
	}
	return nil
}

type fsError struct{ key string }

func (e *fsError) Error() string { return "write " + e.key + ": no space left on device" }
func (e *fsError) Unwrap() error { return syscall.ENOSPC }

func (f *fullDisk) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := f.fail(key); err != nil {
		return err
	}
	return f.Folder.Put(ctx, key, r, size)
}

func (f *fullDisk) PutFile(ctx context.Context, key, path string) error {
	if err := f.fail(key); err != nil {
		return err
	}
	return f.Folder.PutFile(ctx, key, path)
}

func (f *fullDisk) PutBatch(ctx context.Context, objs []store.Object) []error {
	errs := f.Folder.PutBatch(ctx, nil)
	for _, o := range objs {
		if err := f.fail(o.Key); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, f.Folder.PutBatch(ctx, []store.Object{o})...)
	}
	return errs
}

func runOn(t *testing.T, blob store.Blob, spec string) (*runner.Summary, error) {
	t.Helper()
	exp, err := experiment.Parse("test.json", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	m := &store.Manifest{RunID: runner.NewRunID("full", time.Now()), Trials: exp.Trials}
	if err := runs.WriteManifest(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := &runner.Runner{Backend: &local.Backend{}, Runs: runs, Jobs: 1, WorkRoot: filepath.Join(dir, "work"), Workdir: dir, StopGrace: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return r.Execute(ctx, m, false)
}

// Outputs that cannot be stored because the disk is full fail the attempt with what to do.
func TestFullDiskWhileStoringOutputsSaysWhatToDo(t *testing.T) {
	folder, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	blob := &fullDisk{Folder: folder, match: func(k string) bool { return strings.HasSuffix(k, "/result.json") }}
	blob.full.Store(true)
	sum, err := runOn(t, blob, `[{"name":"a","cmd":"echo '{\"x\":1}' > $JIKKEN_OUTPUT_DIR/result.json"}]`)
	if err != nil {
		t.Fatal(err)
	}
	rec := sum.Trials[0]
	want := fmt.Sprintf("no space left on device; free space, then 'jikken resume %s'", sum.RunID)
	if rec.Status != store.Failed || !strings.Contains(rec.Reason, want) {
		t.Fatalf("record: %s %q", rec.Status, rec.Reason)
	}
}

// A journal that cannot be written stops the run with what to do, and nothing recorded is lost.
func TestFullDiskWhileRecordingStopsTheRunWithWhatToDo(t *testing.T) {
	folder, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	blob := &fullDisk{Folder: folder, match: func(k string) bool { return strings.HasSuffix(k, "/b/trial.json") }}
	blob.full.Store(true)
	sum, err := runOn(t, blob, `[{"name":"a","cmd":"true"},{"name":"b","cmd":"true","after":["a"]},{"name":"c","cmd":"true","after":["b"]}]`)
	if !errors.Is(err, runner.ErrStore) || !strings.Contains(err.Error(), "free space (or fix access), then 'jikken resume") || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("err = %v", err)
	}
	if sum == nil || sum.Trials[0].Status != store.Succeeded {
		t.Fatalf("summary = %+v", sum)
	}
	got, err := store.Runs{Blob: folder}.Trial(context.Background(), sum.RunID, "a")
	if err != nil || got.Status != store.Succeeded {
		t.Fatalf("a's record = %+v, %v", got, err)
	}
}
