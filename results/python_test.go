package results_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// pandasPython returns an interpreter that imports pandas: $JIKKEN_PYTHON, Debian's, or the
// first python3 on PATH. Under CI one is required (.ci/run installs python3-pandas).
func pandasPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, p := range []string{os.Getenv("JIKKEN_PYTHON"), "/usr/bin/python3", "python3"} {
		if p == "" {
			continue
		}
		out, err := exec.Command(p, "-c", "import pandas").CombinedOutput()
		if err == nil {
			return p
		}
		tried = append(tried, fmt.Sprintf("%s: %v %s", p, err, bytes.TrimSpace(out)))
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("a python3 with pandas is required under CI (apt-get install python3-pandas): %s", strings.Join(tried, "; "))
	}
	t.Skipf("no python3 with pandas: %s", strings.Join(tried, "; "))
	return ""
}

// writeDemo stores a run shaped like the demo's (examples/optimize): a build step, 3 algorithms
// x 4 functions x seeds trials logging "best" as they go and writing it to result.json, and a
// compare step. Some trials fail midway, some end on NaN (no result.json), one was killed and
// one never started.
func writeDemo(t *testing.T, dir string, seeds int) string {
	t.Helper()
	ctx := context.Background()
	blob, err := store.OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	const run = "20261128-120000-demo"
	trials := []experiment.Trial{{Name: "build", Cmd: experiment.Command{Shell: "go build -o bin/opt ./opt"}}}
	for _, algo := range []string{"random-search", "es", "de"} {
		for _, fn := range []string{"sphere", "rastrigin", "rosenbrock", "ackley"} {
			for s := range seeds {
				seed := int64(s)
				trials = append(trials, experiment.Trial{
					Name: fmt.Sprintf("opt-%s-%s-%d", algo, fn, s), Group: "opt", Cmd: experiment.Command{Shell: "bin/opt"},
					Params: map[string]any{"algo": algo, "fn": fn}, Seed: &seed,
				})
			}
		}
	}
	trials = append(trials, experiment.Trial{Name: "compare", Cmd: experiment.Command{Shell: "sh summarize.sh"}})
	for i := range trials {
		trials[i].Index = i
	}
	m := &store.Manifest{RunID: run, Experiment: "optimize", File: "experiment.jsonnet", Created: time.Now(), Trials: trials}
	if err := runs.CreateManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, tr := range trials {
		status := store.Succeeded
		switch {
		case i == len(trials)-1:
			continue // the compare step never started: no record, pending
		case i%41 == 7:
			status = store.Failed
		case i == 100:
			status = store.Killed
		}
		rec := &store.TrialRecord{Run: run, Name: tr.Name, Index: i, Group: tr.Group, Status: status, Params: tr.Params, Seed: tr.Seed}
		if err := runs.WriteTrial(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if tr.Params == nil {
			continue
		}
		var lines bytes.Buffer
		best := 10 + rng.Float64()*100
		steps := 5 + rng.IntN(10)
		if status == store.Failed {
			steps = 2
		}
		for s := range steps {
			best *= 0.5 + rng.Float64()/2
			if i%53 == 11 && s == steps-1 {
				best = math.NaN() // diverged on its last step: ranked worst, drawn as such
			}
			b, _ := json.Marshal(track.Metric{Name: "best", Value: best, Step: ptr(int64(200 * (s + 1))), TS: int64(1_767_225_600_000 + 250*s)})
			lines.Write(append(b, '\n'))
		}
		put(t, blob, store.TrialKey(run, tr.Name, "metrics.jsonl"), lines.Bytes())
		if status == store.Succeeded && !math.IsNaN(best) {
			put(t, blob, store.TrialKey(run, tr.Name, "result.json"), fmt.Appendf(nil, `{"best": %v, "evals": {"n": %d}}`, best, 200*steps))
		}
	}
	return run
}

func ptr[T any](v T) *T { return &v }

func put(t *testing.T, b store.Blob, key string, data []byte) {
	t.Helper()
	if err := b.Put(context.Background(), key, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
}

// notebook is what a researcher types into a notebook: load an experiment's trials and the
// curves of one function, take each group's median of the final value and of the last curve
// point, as compare does (failed and non-finite values ranked worst, not averaged).
const notebook = `
import json, sys
import numpy as np
import jikken

store, run = sys.argv[1], sys.argv[2]
df = jikken.load(store, "optimize")
curves = jikken.load(store, run, curves=["best"], where={"fn": "sphere"})
assert list(df.columns[:5]) == ["run", "trial", "status", "algo", "fn"], list(df.columns)

ok = df[(df.status == "succeeded") & (df.fn == "sphere") & np.isfinite(df.best)]
last = curves.groupby("trial", sort=False).tail(1)
last = last[(last.status == "succeeded") & np.isfinite(last.value)]
print(json.dumps({
    "trials": len(df),
    "statuses": df.status.value_counts().to_dict(),
    "final": ok.groupby("algo", sort=False).best.median().to_dict(),
    "curves": last.groupby("algo", sort=False).value.median().to_dict(),
    "evals": int(df["evals.n"].count()),
}))
`

// TestNotebookMediansEqualCompare installs the Python package into a fresh virtualenv without
// an index, loads a demo-like run into pandas as a notebook would, and checks that each group's
// median, of the final values and of the curves' last points, is the one 'jikken compare'
// reports.
func TestNotebookMediansEqualCompare(t *testing.T) {
	py := pandasPython(t)
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	run := writeDemo(t, storeDir, 30)

	// --system-site-packages: the venv sees Debian's pandas; the package itself comes from here.
	venv := filepath.Join(dir, "venv")
	runCmd(t, "", py, "-m", "venv", "--system-site-packages", venv)
	client, err := filepath.Abs(filepath.Join("..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	vpy := filepath.Join(venv, "bin", "python")
	runCmd(t, dir, vpy, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "-q", client)
	out := runCmd(t, dir, vpy, "-c", notebook, storeDir, run)

	var got struct {
		Trials        int
		Statuses      map[string]int
		Final, Curves map[string]float64
		Evals         int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("notebook output %s: %v", out, err)
	}

	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := results.Load(context.Background(), store.Runs{Blob: blob}, run)
	if err != nil {
		t.Fatal(err)
	}
	if got.Trials != len(rows) || got.Trials != 362 {
		t.Errorf("notebook loaded %d trials; jikken results has %d", got.Trials, len(rows))
	}
	want := map[string]int{}
	for _, r := range rows {
		want[string(r.Status)]++
	}
	if fmt.Sprint(got.Statuses) != fmt.Sprint(want) {
		t.Errorf("statuses %v; want %v", got.Statuses, want)
	}
	table, err := report.Where(results.ToTable(rows), []string{"fn=sphere"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := report.Compare(table, report.Options{By: "algo", Metric: "best", Direction: report.LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Worst) == 0 {
		t.Fatal("the fixture has no failure ranked worst on sphere: it checks nothing about them")
	}
	for _, g := range c.Groups {
		for what, m := range map[string]map[string]float64{"final values": got.Final, "curves' last points": got.Curves} {
			if v, ok := m[g.Name]; !ok || math.Abs(v-g.Median) > 1e-12*math.Abs(g.Median) {
				t.Errorf("%s: median of the %s is %v in pandas, %v in compare", g.Name, what, v, g.Median)
			}
		}
	}
	if len(c.Groups) != 3 {
		t.Errorf("compare has %d groups", len(c.Groups))
	}
	if got.Evals == 0 {
		t.Errorf("result.json's nested evals.n is not a column")
	}
}

// TestPythonReader runs the reader's own unittest suite (no pandas needed).
func TestPythonReader(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI: %v", py, err)
		}
		t.Skipf("no %s", py)
	}
	client, err := filepath.Abs(filepath.Join("..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", runCmd(t, client, py, "-m", "unittest", "-v", "test_jikken_reader"))
}

func runCmd(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PIP_NO_INDEX=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args[:min(len(args), 2)], " "), err, out, stderr.Bytes())
	}
	return out
}

// TestReaderSummaryEqualsTrialFiles: the notebook reader loads the same rows from a run's
// summary (written as the runner writes it when the run ends) as from the trial files, for a
// plan in the manifest and one above 1,000 trials (stored as its expansion), with values that
// only some readers take for numbers.
func TestReaderSummaryEqualsTrialFiles(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skipf("no /usr/bin/python3: %v", err)
	}
	client, err := filepath.Abs(filepath.Join("..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	const script = `
import sys
sys.path.insert(0, sys.argv[1])
import jikken
print(repr(jikken.load(sys.argv[2], sys.argv[3], frame=False)))
`
	for _, seeds := range []int{3, 90} {
		t.Run(fmt.Sprint(seeds*12+2, " trials"), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			run := writeDemo(t, dir, seeds)
			blob, err := store.OpenFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			odd := "opt-es-sphere-0"
			put(t, blob, store.TrialKey(run, odd, "result.json"),
				[]byte(`{"best": "0.75", "ok": true, "note": "x", "evals": {"n": "NaN", "m": "-Infinity"}, "big": 1e300, "i": 3, "s": "1_0", "h": "0x1.8p1", "sp": " 1"}`))
			put(t, blob, store.TrialKey(run, odd, "metrics.jsonl"),
				[]byte("{\"name\":\"loss\"}\n{\"name\":\"loss\",\"value\":1}\n{\"name\":\"loss\",\"value\":NaN}\n{\"name\":\"l\xffss\",\"value\":3}\n{\"name\":\"up\",\"value\":\"+Inf\"}\n{\"name\":\"lo"))
			fromFiles := runCmd(t, "", "/usr/bin/python3", "-c", script, client, dir, run)

			runs := store.Runs{Blob: blob}
			end := time.Date(2026, 11, 28, 12, 30, 0, 5, time.UTC)
			s, err := results.Summarize(ctx, runs, run, end)
			if err != nil {
				t.Fatal(err)
			}
			if err := runs.WriteSummary(ctx, run, s); err != nil {
				t.Fatal(err)
			}
			if err := runs.WriteState(ctx, run, &store.RunState{Status: store.Failed, Started: end.Add(-time.Hour), Finished: &end}); err != nil {
				t.Fatal(err)
			}
			// Without the files the rows can only come from the summary.
			for _, tr := range s.Trials {
				for _, f := range []string{"metrics.jsonl", "result.json"} {
					if err := blob.Delete(ctx, store.TrialKey(run, tr.Name, f)); err != nil && !errors.Is(err, store.ErrNotFound) {
						t.Fatal(err)
					}
				}
			}
			fromSummary := runCmd(t, "", "/usr/bin/python3", "-c", script, client, dir, run)
			if !bytes.Equal(fromFiles, fromSummary) {
				t.Errorf("rows from the trial files:\n%.2000s\nfrom the summary:\n%.2000s", fromFiles, fromSummary)
			}
		})
	}
}
