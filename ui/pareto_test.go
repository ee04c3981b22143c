package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/internal/cli"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/ui"
)

// paretoFile is a search of two objectives whose first metric's name and a param's values are
// hostile markup (a metric name is any word a trial prints). A larger x lowers the first
// objective and the speed; y only makes both worse; x above 0.9 breaks the constraint.
const paretoFile = `{
  name: "paretotest",
  search: {
    name: "s",
    cmd: |||
      awk 'BEGIN {
        x = ENVIRON["JIKKEN_PARAM_X"]; y = ENVIRON["JIKKEN_PARAM_Y"]
        printf "::metric <script>alert(1)</script>=%g\n", 1 - sqrt(x) + 0.3 * y
        printf "::metric speed=%g\n", (1 - x) * (1 - 0.5 * y)
        printf "::metric mem_over=%g\n", x - 0.9
      }'
    |||,
    space: { x: { low: 0, high: 1 }, y: { low: 0, high: 1 }, tag: ["<img src=x onerror=alert(2)>", "plain"] },
    objectives: [{ metric: "<script>alert(1)</script>", direction: "min" }, { metric: "speed", direction: "max" }],
    constraints: ["mem_over"],
    sampler: "nsga2", trials: 40, parallel: 4, seed: 3,
  },
}
`

// paretoRun runs paretoFile with the real runner into a folder store and returns the store's
// folder and the run.
func paretoRun(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	storeDir, file := filepath.Join(dir, "store"), filepath.Join(dir, "pareto.jsonnet")
	if err := os.WriteFile(file, []byte(paretoFile), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, _, errOut := iostreams.Test()
	if code := cli.Run(context.Background(), ios, []string{"--store", storeDir, "run", file, "-j", "4"}); code != 0 {
		t.Fatalf("jikken run: exit %d: %s", code, errOut)
	}
	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := store.Runs{Blob: blob}.RunIDs(context.Background())
	if err != nil || len(ids) != 1 {
		t.Fatal(ids, err)
	}
	return storeDir, ids[0]
}

// resultsFront is the Pareto front 'jikken results' prints: the trials named under its header.
func resultsFront(t *testing.T, storeDir, id string) []string {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	if code := cli.Run(context.Background(), ios, []string{"--store", storeDir, "results", id}); code != 0 {
		t.Fatalf("jikken results: exit %d: %s", code, errOut)
	}
	_, front, ok := strings.Cut(out.String(), "Pareto front (")
	if !ok {
		t.Fatalf("jikken results prints no front:\n%s", out)
	}
	var names []string
	for _, line := range strings.Split(front, "\n")[1:] {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		names = append(names, strings.Fields(line)[0])
	}
	return names
}

// The run page's front is the one 'jikken results' prints, trial for trial; every completed
// trial is a dot, and the trials that break the constraint are marked.
func TestParetoFrontIsResults(t *testing.T) {
	storeDir, id := paretoRun(t)
	want := resultsFront(t, storeDir, id)
	if len(want) < 2 {
		t.Fatalf("a front of %d trials tests little: %v", len(want), want)
	}
	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ui.New(store.Runs{Blob: blob}, ui.Options{LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	resp, err := hs.Client().Get(hs.URL + "/api/runs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var v struct {
		Pareto *ui.ParetoPlot `json:"pareto"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Pareto == nil {
		t.Fatalf("%v: %s", err, body)
	}
	p := v.Pareto
	var got, dotted []string
	for _, r := range p.Front {
		got = append(got, r.Trial)
		if len(r.Values) != 2 || r.Params["tag"] == "" {
			t.Errorf("front row %+v", r)
		}
	}
	infeasible := 0
	for _, d := range p.Dots {
		if d.Front {
			dotted = append(dotted, d.Trial)
		}
		if !d.Feasible {
			infeasible++
			if d.Front {
				t.Errorf("%s breaks the constraint and is on the front", d.Trial)
			}
		}
	}
	if !slices.Equal(got, want) || !slices.Equal(dotted, want) {
		t.Errorf("the page's front %v, its dots %v; jikken results prints %v", got, dotted, want)
	}
	if p.Completed != 40 || len(p.Dots) != 40 || infeasible == 0 || p.Step == "" || p.X.Metric != "<script>alert(1)</script>" || p.X.Max || !p.Y.Max {
		t.Errorf("plot: %d completed, %d dots, %d infeasible, step %q, axes %+v %+v", p.Completed, len(p.Dots), infeasible, p.Step, p.X, p.Y)
	}
}

// A metric named <script>... and a param valued <img onerror=...> are text on the run page:
// in the plot's labels and titles, and in the front's table.
func TestParetoPageEscapesNames(t *testing.T) {
	storeDir, id := paretoRun(t)
	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ui.New(store.Runs{Blob: blob}, ui.Options{LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	resp, err := hs.Client().Get(hs.URL + "/runs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	page := string(b)
	_, section, ok := strings.Cut(page, `<section id="pareto">`)
	section, _, _ = strings.Cut(section, "</section>")
	if !ok || !strings.Contains(section, `<svg class="pareto-plot"`) || !strings.Contains(section, `<table class="front"`) {
		t.Fatalf("no Pareto section on the page:\n%s", page)
	}
	for _, bad := range []string{"<script", "<img"} {
		if strings.Contains(section, bad) {
			t.Errorf("the section holds %q as markup", bad)
		}
	}
	for _, text := range []string{
		`&lt;script&gt;alert(1)&lt;/script&gt; (min)`,                       // the x axis and the table's header
		`&lt;script&gt;alert(1)&lt;/script&gt; 0.`,                          // a dot's title
		`<td>&lt;img src=x onerror=alert(2)&gt;</td>`,                       // a param in the front's table
		`aria-label="trials on &lt;script&gt;alert(1)&lt;/script&gt; (min)`, // an attribute
	} {
		if !strings.Contains(section, text) {
			t.Errorf("the section lacks %s", text)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("policy %q", csp)
	}
}
