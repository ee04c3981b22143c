package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/jikken-dev/jikken/store"
)

// Sizes of the store BenchmarkListing reads: runs x trials x artifact files.
const benchRuns, benchTrials, benchArtifacts = 50, 20, 50

// counting counts what a Blob is asked: keys delivered by List, folders by ListDirs, Stats and
// Gets. Embedding only store.Blob hides the folder's DirLister, so Runs takes its full scan.
type counting struct {
	store.Blob
	listed, reads atomic.Int64
}

func (c *counting) List(ctx context.Context, prefix string, fn func(store.Info) error) error {
	return c.Blob.List(ctx, prefix, func(in store.Info) error { c.listed.Add(1); return fn(in) })
}

func (c *counting) Stat(ctx context.Context, key string) (store.Info, error) {
	c.reads.Add(1)
	return c.Blob.Stat(ctx, key)
}

func (c *counting) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	c.reads.Add(1)
	return c.Blob.Get(ctx, key)
}

// countingDirs is counting with the folder's DirLister passed through.
type countingDirs struct{ *counting }

func (c countingDirs) ListDirs(ctx context.Context, prefix string, fn func(string) error) error {
	return c.Blob.(store.DirLister).ListDirs(ctx, prefix, func(n string) error { c.listed.Add(1); return fn(n) })
}

// writeBenchStore lays out runs x trials x artifacts in dir with plain file writes (Put syncs
// every file, which would make the setup take minutes).
func writeBenchStore(tb testing.TB, dir string, runs, trials, artifacts int) {
	write := func(key string, v any) {
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		b, _ := json.Marshal(v)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for r := range runs {
		id := fmt.Sprintf("20261122-%06d-bench-%04x", r, r)
		write(store.RunKey(id, "manifest.json"), store.Manifest{RunID: id})
		write(store.RunKey(id, "state.json"), store.RunState{Status: store.Succeeded})
		for t := range trials {
			name := fmt.Sprintf("t%03d", t)
			write(store.TrialKey(id, name, "trial.json"), store.TrialRecord{Run: id, Name: name, Index: t, Status: store.Succeeded})
			for _, f := range []string{"params.json", "metrics.jsonl", "result.json", "stdout.log", "stderr.log"} {
				write(store.TrialKey(id, name, f), f)
			}
			for a := range artifacts {
				write(store.TrialKey(id, name, fmt.Sprintf("artifacts/ckpt/%03d.bin", a)), a)
			}
		}
	}
}

// BenchmarkListing times Runs.RunIDs and Runs.Trials on a folder store of 50 runs x 20 trials
// x 50 artifacts (57,100 files) through the full List scan (a Blob without DirLister) and
// through folder listing, side by side. listed/op is keys (scan) or folders (dirs) visited,
// reads/op the Stats and Gets.
//
//	go test ./store -run '^$' -bench Listing -benchtime 3x
func BenchmarkListing(b *testing.B) {
	f, err := store.OpenFolder(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	writeBenchStore(b, f.Root(), benchRuns, benchTrials, benchArtifacts)
	ctx := context.Background()
	last := fmt.Sprintf("20261122-%06d-bench-%04x", benchRuns-1, benchRuns-1)
	for _, way := range []string{"scan", "dirs"} {
		c := &counting{Blob: f}
		var blob store.Blob = c
		if way == "dirs" {
			blob = countingDirs{c}
		}
		runs := store.Runs{Blob: blob}
		report := func(b *testing.B) {
			b.ReportMetric(float64(c.listed.Load())/float64(b.N), "listed/op")
			b.ReportMetric(float64(c.reads.Load())/float64(b.N), "reads/op")
		}
		b.Run("RunIDs/"+way, func(b *testing.B) {
			c.listed.Store(0)
			c.reads.Store(0)
			for b.Loop() {
				ids, err := runs.RunIDs(ctx)
				if err != nil || len(ids) != benchRuns {
					b.Fatalf("RunIDs = %d ids, %v", len(ids), err)
				}
			}
			report(b)
		})
		b.Run("Trials/"+way, func(b *testing.B) {
			c.listed.Store(0)
			c.reads.Store(0)
			for b.Loop() {
				recs, err := runs.Trials(ctx, last)
				if err != nil || len(recs) != benchTrials {
					b.Fatalf("Trials = %d records, %v", len(recs), err)
				}
			}
			report(b)
		})
	}
}
