package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

// benchStore is a folder store of 1,000 runs of 100 trials each (manifest, state and every
// trial's record) plus runs of 1,000 and 10,000 finished trials with logs and metrics, written straight
// in the layout (the runner's atomic writes would make the setup take minutes). It is made once
// per benchmark binary.
var benchStore = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "jikken-ui-bench-")
	if err != nil {
		return "", err
	}
	benchDir = dir
	write := func(rel string, v any) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		b, ok := v.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(v); err != nil {
				return err
			}
		}
		return os.WriteFile(p, b, 0o644)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	makeRun := func(id string, n int, full bool) error {
		var trials []experiment.Trial
		for i := range n {
			seed := int64(i % 10)
			trials = append(trials, experiment.Trial{Name: fmt.Sprintf("t-%s-%d", []string{"a", "b", "c", "d"}[i%4], i), Index: i,
				Params: map[string]any{"algo": []string{"a", "b", "c", "d"}[i%4], "lr": 0.1}, Seed: &seed})
		}
		m := store.Manifest{RunID: id, Experiment: "bench", Created: start, Host: "h", User: "u", Trials: trials}
		if err := write(store.RunKey(id, "manifest.json"), m); err != nil {
			return err
		}
		end := start.Add(time.Minute)
		if err := write(store.RunKey(id, "state.json"), store.RunState{Status: store.Succeeded, Started: start, Finished: &end,
			Counts: map[store.Status]int{store.Succeeded: n}}); err != nil {
			return err
		}
		// The summary the runner writes as a run ends: the runs list's metric columns.
		sum := store.Summary{Finished: end}
		for i, t := range trials {
			sum.Trials = append(sum.Trials, store.SummaryTrial{Name: t.Name, Index: i, Status: store.Succeeded, Params: t.Params, Seed: t.Seed,
				Metrics: store.Metrics{"loss": float64(i / 2)}})
		}
		if err := write(store.RunKey(id, "summary.json"), sum); err != nil {
			return err
		}
		zero := 0
		for i, t := range trials {
			rec := store.TrialRecord{Run: id, Name: t.Name, Index: i, Status: store.Succeeded, Params: t.Params, Seed: t.Seed,
				ExitCode: &zero, Started: &start, Finished: &end, Attempts: []store.Attempt{{N: 1, Started: start, Finished: end, ExitCode: &zero}}}
			if err := write(store.TrialKey(id, t.Name, "trial.json"), rec); err != nil {
				return err
			}
			if full {
				metrics := []byte(fmt.Sprintf("{\"name\":\"loss\",\"value\":%d,\"step\":1}\n{\"name\":\"loss\",\"value\":%d,\"step\":2}\n", i, i/2))
				if err := write(store.TrialKey(id, t.Name, "metrics.jsonl"), metrics); err != nil {
					return err
				}
				if err := write(store.TrialKey(id, t.Name, "stdout.log"), []byte("done\n")); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for r := range 1000 {
		if err := makeRun(fmt.Sprintf("20260101-%06d-bench-%04d", r, r), 100, false); err != nil {
			return "", err
		}
	}
	if err := makeRun("20260102-000000-big-0000", 1000, true); err != nil {
		return "", err
	}
	return dir, makeRun("20260103-000000-huge-0000", 10000, true)
})

// benchDir is the generated store, removed by TestMain.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		_ = os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func benchServer(b *testing.B) *Server {
	dir, err := benchStore()
	if err != nil {
		b.Fatal(err)
	}
	blob, err := store.OpenFolder(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(store.Runs{Blob: blob}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchGet(b *testing.B, s *Server, url string) {
	b.Helper()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", url, nil).WithContext(context.Background()))
	if w.Code != 200 {
		b.Fatalf("%s: %d %s", url, w.Code, w.Body)
	}
}

// BenchmarkRunsPage is the first page of the runs list of a store of 1,000 runs, as a reader
// who keeps the page open sees it (manifests cached after the first load).
func BenchmarkRunsPage(b *testing.B) {
	s := benchServer(b)
	benchGet(b, s, "/")
	for b.Loop() {
		benchGet(b, s, "/")
	}
}

// BenchmarkRunsPageCold is the same page from a server just started: every manifest of the page
// is read.
func BenchmarkRunsPageCold(b *testing.B) {
	benchServer(b)
	for b.Loop() {
		b.StopTimer()
		s := benchServer(b)
		b.StartTimer()
		benchGet(b, s, "/")
	}
}

// BenchmarkRunPage1000 is the page of a run of 1,000 trials (records, final metrics).
func BenchmarkRunPage1000(b *testing.B) {
	s := benchServer(b)
	for b.Loop() {
		benchGet(b, s, "/runs/20260102-000000-big-0000")
	}
}

// BenchmarkRunJSON1000 is what a live run page polls, for 1,000 trials.
func BenchmarkRunJSON1000(b *testing.B) {
	s := benchServer(b)
	for b.Loop() {
		benchGet(b, s, "/api/runs/20260102-000000-big-0000")
	}
}

// BenchmarkStatsPage1000 is the statistics page of the 1,000-trial run: its table, the tests,
// the box plot and the curves (read from every trial's metrics.jsonl).
func BenchmarkStatsPage1000(b *testing.B) {
	s := benchServer(b)
	for b.Loop() {
		benchGet(b, s, "/runs/20260102-000000-big-0000/stats?by=algo&metric=loss")
	}
}

// BenchmarkExplore1000 is the data of the run page's scatter and parallel coordinates for the
// 1,000-trial run, filtered by a condition.
func BenchmarkExplore1000(b *testing.B) {
	s := benchServer(b)
	for b.Loop() {
		benchGet(b, s, "/api/runs/20260102-000000-big-0000/explore?where=loss%3C0.5")
	}
}

// BenchmarkStatsPage1000First is the statistics page of the 1,000-trial run asked a question
// not asked before (a new alpha each time): computed, not taken from the comparisons kept.
func BenchmarkStatsPage1000First(b *testing.B) {
	s := benchServer(b)
	i := 0
	for b.Loop() {
		i++
		benchGet(b, s, fmt.Sprintf("/runs/20260102-000000-big-0000/stats?by=algo&metric=loss&alpha=0.0%d", i))
	}
}

// BenchmarkRunPage10000 is the page of an ended run of 10,000 trials, looked at again (the
// first look reads every record and metric; later ones take the view kept for its end).
func BenchmarkRunPage10000(b *testing.B) {
	s := benchServer(b)
	for b.Loop() {
		benchGet(b, s, "/runs/20260103-000000-huge-0000")
	}
}

// BenchmarkExplore10000 is the Explore views' data of the 10,000-trial run, filtered.
func BenchmarkExplore10000(b *testing.B) {
	s := benchServer(b)
	for b.Loop() {
		benchGet(b, s, "/api/runs/20260103-000000-huge-0000/explore?where=loss%3C5000")
	}
}

// BenchmarkStatsPage10000 is the statistics page of the 10,000-trial run, asked again.
func BenchmarkStatsPage10000(b *testing.B) {
	s := benchServer(b)
	for b.Loop() {
		benchGet(b, s, "/runs/20260103-000000-huge-0000/stats?by=algo&metric=loss")
	}
}
