package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jikken-dev/jikken/internal/cli"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/ui"
)

// nonfiniteFile is a run whose metrics JSON numbers cannot hold: a trial that prints NaN and
// infinities, with a NaN in the middle of a curve, and a search of two objectives whose first
// comes out NaN for one trial and +Inf for another.
const nonfiniteFile = `{
  name: "nonfinite",
  trials: [
    { name: "plain", cmd: |||
      echo ::metric loss=nan
      echo ::metric acc=inf
      echo ::metric neg=-inf
      for s in 1 2 3 4 5; do
        if [ $s = 3 ]; then echo ::metric curve=nan step=$s; else echo ::metric curve=$s step=$s; fi
      done
    ||| },
  ],
  search: {
    name: "s",
    cmd: |||
      case $JIKKEN_PARAM_X in
        0.1) echo ::metric loss=nan ;;
        0.9) echo ::metric loss=inf ;;
        *) echo ::metric loss=$JIKKEN_PARAM_X ;;
      esac
      echo ::metric speed=$JIKKEN_PARAM_X
    |||,
    space: { x: [0.1, 0.3, 0.5, 0.9] },
    objectives: [{ metric: "loss", direction: "min" }, { metric: "speed", direction: "max" }],
    sampler: "grid", trials: 4, parallel: 2, seed: 1,
  },
}
`

// jikken runs the CLI on the store at dir and returns its exit code, stdout and stderr.
func jikken(dir string, args ...string) (int, string, string) {
	ios, _, out, errOut := iostreams.Test()
	code := cli.Run(context.Background(), ios, append([]string{"--store", dir}, args...))
	return code, out.String(), errOut.String()
}

// nonfiniteRun runs nonfiniteFile with the real runner into a folder store and returns the
// store's runs and the run. The run itself is checked: every trial is recorded, succeeded.
func nonfiniteRun(t *testing.T) (store.Runs, string) {
	t.Helper()
	dir := t.TempDir()
	storeDir, file := filepath.Join(dir, "store"), filepath.Join(dir, "nonfinite.jsonnet")
	if err := os.WriteFile(file, []byte(nonfiniteFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := jikken(storeDir, "run", file, "-j", "2"); code != 0 || strings.Contains(errOut, "unsupported value") {
		t.Fatalf("jikken run: exit %d: %s", code, errOut)
	}
	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	ids, err := runs.RunIDs(context.Background())
	if err != nil || len(ids) != 1 {
		t.Fatal(ids, err)
	}
	recs, err := runs.Trials(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plain", "s-0", "s-1", "s-2", "s-3"} {
		if rec := recs[name]; rec == nil || rec.Status != store.Succeeded {
			t.Errorf("trial %s: record %+v, want succeeded", name, rec)
		}
	}
	return runs, ids[0]
}

// A run whose trials log NaN and infinities is recorded whole, and every JSON answer about it is
// JSON: encoding/json refuses those values, and one of them would void a whole answer (the page
// polls it, and would go blank). They travel as the strings "NaN", "Infinity" and "-Infinity",
// as in metrics.jsonl, and the pages show them as text.
func TestNonFiniteMetricsAreJSON(t *testing.T) {
	runs, id := nonfiniteRun(t)
	srv, err := ui.New(runs, ui.Options{LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	fetch := func(path string) []byte {
		t.Helper()
		resp, err := hs.Client().Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
		return body
	}
	base := "/api/runs/" + id
	for _, path := range []string{"/api/runs", base, base + "/trials/plain", base + "/trials/s-0", base + "/trials/s-3",
		base + "/trials/plain/live", base + "/live", base + "/explore"} {
		if body := fetch(path); !json.Valid(body) || len(bytes.TrimSpace(body)) == 0 {
			t.Errorf("%s is not JSON: %q", path, body)
		}
	}

	var run struct {
		Trials []struct {
			Name    string                     `json:"name"`
			Metrics map[string]json.RawMessage `json:"metrics"`
		} `json:"trial_rows"`
		Pareto *ui.ParetoPlot `json:"pareto"`
	}
	if err := json.Unmarshal(fetch(base), &run); err != nil {
		t.Fatal(err)
	}
	metrics := map[string]map[string]string{}
	for _, tr := range run.Trials {
		metrics[tr.Name] = map[string]string{}
		for k, v := range tr.Metrics {
			metrics[tr.Name][k] = string(v)
		}
	}
	for trial, want := range map[string]map[string]string{
		"plain": {"loss": `"NaN"`, "acc": `"Infinity"`, "neg": `"-Infinity"`, "curve": "5"},
		"s-0":   {"loss": `"NaN"`, "speed": "0.1"},
		"s-3":   {"loss": `"Infinity"`, "speed": "0.9"},
	} {
		for k, v := range want {
			if got := metrics[trial][k]; got != v {
				t.Errorf("trial %s metric %s = %s in /api/runs/RUN, want %s", trial, k, got, v)
			}
		}
	}
	// The front of the two objectives is 'jikken results's, +Inf loss and all (s-3 is the fastest);
	// s-0's NaN loss is no value, so it is on no front.
	if run.Pareto == nil {
		t.Fatal("no Pareto front")
	}
	var front []string
	for _, r := range run.Pareto.Front {
		front = append(front, r.Trial)
	}
	if got := strings.Join(front, " "); got != "s-1 s-2 s-3" {
		t.Errorf("front %s, want s-1 s-2 s-3", got)
	}

	// The pages show the values as text.
	for path, want := range map[string][]string{
		"/runs/" + id:                   {`<td class="n">NaN</td>`, `<td class="n">Inf</td>`, `<td class="n">-Inf</td>`},
		"/runs/" + id + "/trials/plain": {`<td class="n">NaN</td>`, `<td class="n">Inf</td>`, `<td class="n">-Inf</td>`},
	} {
		body := string(fetch(path))
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s does not show %s", path, w)
			}
		}
	}
}

// The run page's table, redrawn by its script from /api/runs/RUN (to sort it, or as a live run
// changes), shows NaN and infinities as the server-drawn table does, and sorts infinities as
// numbers and NaN with the missing values, last.
func TestBrowserNonFiniteMetrics(t *testing.T) {
	exe := chromium(t)
	runs, id := nonfiniteRun(t)
	srv, err := ui.New(runs, ui.Options{LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, _, closeTab := browserTab(ctx, t, exe, false)
	defer closeTab()
	must(t, chromedp.Do(b, chromedp.Navigate(hs.URL+"/runs/"+id), chromedp.WaitVisible(chromedp.CSS(`#trials th[data-sort="m:loss"]`)),
		chromedp.Click(chromedp.CSS(`#trials th[data-sort="m:loss"]`))))
	// Loss: plain NaN, s-0 NaN, s-1 0.3, s-2 0.5, s-3 +Inf. The rows move only once the script has
	// the data, so the order says the answer was read.
	order := `Array.from(document.querySelectorAll("#trials tbody tr")).map(r => r.dataset.trial).join(" ")`
	want := "s-1 s-2 s-3 plain s-0"
	if _, err := chromedp.Run(b, chromedp.Poll[bool](order+` === "`+want+`"`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		got, _ := chromedp.Run(b, chromedp.Evaluate[string](order))
		t.Fatalf("sorting by loss: %v; rows %s, want %s", err, got, want)
	}
	// Each metric column, top to bottom.
	cells, err := chromedp.Run(b, chromedp.Evaluate[map[string]string](`(() => {
		const names = Array.from(document.querySelectorAll("#trials thead th.metric")).map(th => th.dataset.sort.slice(2));
		const rows = Array.from(document.querySelectorAll("#trials tbody tr"));
		return Object.fromEntries(names.map((m, i) => [m, rows.map(r => r.cells[r.cells.length - names.length + i].textContent).join(",")]));
	})()`))
	must(t, err)
	for m, w := range map[string]string{"loss": "0.3,0.5,Inf,NaN,NaN", "acc": ",,,Inf,", "neg": ",,,-Inf,"} {
		if cells[m] != w {
			t.Errorf("column %s reads %q after the script drew it, want %q (all: %v)", m, cells[m], w, cells)
		}
	}
}
