//go:build unix

package runner_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// BenchmarkSearchEcho and BenchmarkGridEcho run the same number of trivial trials (each prints
// its value as a metric), 2 at a time, as a TPE search and as a matrix: what the search adds to
// the runner's path from one trial's end to the next one's start (bench/search/overhead.sh is
// the same comparison through the command).
func BenchmarkSearchEcho(b *testing.B) { benchEcho(b, true) }

func BenchmarkGridEcho(b *testing.B) { benchEcho(b, false) }

func benchEcho(b *testing.B, searching bool) {
	const n = 200
	blk := map[string]any{"matrix": map[string]any{"name": "g", "params": map[string]any{"x": rangeFloats(n)}, "cmd": "echo ::metric loss={{x}}"}}
	if searching {
		blk = map[string]any{"search": map[string]any{"name": "s", "cmd": "echo ::metric loss={{x}}", "objective": "loss",
			"sampler": "tpe", "trials": n, "seed": 1, "space": map[string]any{"x": map[string]any{"low": 0, "high": 1}}}}
	}
	src, _ := json.Marshal(blk)
	exp, err := experiment.Parse("bench.json", src)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		blob, err := store.OpenFolder(filepath.Join(dir, "store"))
		if err != nil {
			b.Fatal(err)
		}
		runs := store.Runs{Blob: blob}
		m := &store.Manifest{RunID: runner.NewRunID("bench", time.Now()), Trials: exp.Trials, Options: store.RunOptions{Jobs: 2}}
		if err := runs.WriteManifest(context.Background(), m); err != nil {
			b.Fatal(err)
		}
		r := &runner.Runner{Backend: &local.Backend{}, Runs: runs, Jobs: 2, WorkRoot: filepath.Join(blob.Root(), ".work"), Workdir: dir, Search: exp.Search}
		b.StartTimer()
		sum, err := r.Execute(context.Background(), m, false)
		if err != nil || sum.Counts.Succeeded != n {
			b.Fatalf("%v %+v", err, sum.Counts)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/trial")
}

func rangeFloats(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i) / float64(n)
	}
	return out
}
