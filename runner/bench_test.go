//go:build unix

package runner_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// BenchmarkRunTrue runs trials of `true` through the runner, the local backend and a folder
// store, 2 at a time: the runner's own cost per trial (bench/runner/run.sh compares the whole
// command with xargs).
func BenchmarkRunTrue(b *testing.B) {
	const n = 200
	exp, err := experiment.Parse("bench.json", []byte(fmt.Sprintf(`{"matrix":{"name":"t","params":{"i":%s},"cmd":"true"}}`, rangeJSON(n))))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		blob, err := store.OpenFolder(filepath.Join(dir, "store"))
		if err != nil {
			b.Fatal(err)
		}
		runs := store.Runs{Blob: blob}
		m := &store.Manifest{RunID: runner.NewRunID("bench", time.Now()), Trials: exp.Trials}
		if err := runs.WriteManifest(context.Background(), m); err != nil {
			b.Fatal(err)
		}
		r := &runner.Runner{Backend: &local.Backend{}, Runs: runs, Jobs: 2, WorkRoot: filepath.Join(blob.Root(), ".work"), Workdir: dir}
		b.StartTimer()
		sum, err := r.Execute(context.Background(), m, false)
		if err != nil || sum.Counts.Succeeded != n {
			b.Fatalf("%v %+v", err, sum.Counts)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/trial")
}

func rangeJSON(n int) string {
	s := "["
	for i := 1; i <= n; i++ {
		if i > 1 {
			s += ","
		}
		s += fmt.Sprint(i)
	}
	return s + "]"
}
