package results_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

// benchRun writes an ended run of n trials (record, 10 metric lines, result.json each) straight
// into a folder's layout (the store's atomic writes would make the setup take minutes), and its
// summary and state as the runner leaves them.
func benchRun(b *testing.B, n int) (store.Runs, string) {
	b.Helper()
	dir := b.TempDir()
	const id = "20261128-120000-bench-0001"
	write := func(key string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	trials := make([]experiment.Trial, n)
	for i := range trials {
		trials[i] = experiment.Trial{Name: fmt.Sprintf("t-%06d", i), Index: i, Params: map[string]any{"algo": []string{"a", "b", "c"}[i%3]}}
	}
	m, err := json.Marshal(store.Manifest{RunID: id, Experiment: "bench", Created: time.Now(), Trials: trials})
	if err != nil {
		b.Fatal(err)
	}
	write(store.RunKey(id, "manifest.json"), m)
	for i, t := range trials {
		rec, _ := json.Marshal(store.TrialRecord{Run: id, Name: t.Name, Index: i, Status: store.Succeeded, Params: t.Params})
		write(store.TrialKey(id, t.Name, "trial.json"), rec)
		var lines []byte
		for s := range 10 {
			lines = fmt.Appendf(lines, `{"name":"loss","value":%v,"step":%d}`+"\n", 1/float64(s+1+i%7), s)
		}
		write(store.TrialKey(id, t.Name, "metrics.jsonl"), lines)
		write(store.TrialKey(id, t.Name, "result.json"), fmt.Appendf(nil, `{"loss": %v, "eval": {"acc": 0.9}}`, float64(i%100)/1000))
	}
	blob, err := store.OpenFolder(dir)
	if err != nil {
		b.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	ctx := context.Background()
	end := time.Now().UTC()
	s, err := results.Summarize(ctx, runs, id, end)
	if err != nil {
		b.Fatal(err)
	}
	if err := runs.WriteSummary(ctx, id, s); err != nil {
		b.Fatal(err)
	}
	if err := runs.WriteState(ctx, id, &store.RunState{Status: store.Succeeded, Started: end, Finished: &end}); err != nil {
		b.Fatal(err)
	}
	return runs, id
}

// BenchmarkLoad10000 is 'jikken results' of an ended run of 10,000 trials: from its summary,
// and (files) from its trials' files, as before the summary or for a run still going.
func BenchmarkLoad10000(b *testing.B) {
	runs, id := benchRun(b, 10000)
	ctx := context.Background()
	b.Run("summary", func(b *testing.B) {
		for b.Loop() {
			if _, err := results.Load(ctx, runs, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("files", func(b *testing.B) {
		if err := runs.Blob.Delete(ctx, store.RunKey(id, "summary.json")); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := results.Load(ctx, runs, id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
