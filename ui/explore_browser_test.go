package ui_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/ui"
)

// Artifacts a trial may store that try to run script wherever they are shown.
const (
	hostileSVG  = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80" onload="alert('svg onload')"><script>alert('svg script')</script><rect width="120" height="80" fill="#3b5bdb"/></svg>`
	hostileHTML = `<h1>report</h1><script>alert('html script')</script><img src="x" onerror="alert('html onerror')">`
	hostileText = `<script>alert('text')</script> loss fell`
)

// exploreRun writes an ended run of n trials (algo a, b or c; lr one of five; a loss and an
// accuracy) into a folder store; its first trial stores the hostile artifacts.
func exploreRun(t *testing.T, n int) (store.Runs, string) {
	t.Helper()
	ctx := context.Background()
	blob, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	const id = "20261128-120000-explore-0001"
	put := func(key, s string) {
		if err := blob.Put(ctx, key, strings.NewReader(s), int64(len(s))); err != nil {
			t.Fatal(err)
		}
	}
	trials := make([]experiment.Trial, n)
	for i := range trials {
		trials[i] = experiment.Trial{Name: fmt.Sprintf("t%04d", i), Index: i, Params: exploreParams(i)}
	}
	if err := runs.CreateManifest(ctx, &store.Manifest{RunID: id, Experiment: "explore", Created: time.Now(), Trials: trials}); err != nil {
		t.Fatal(err)
	}
	end := time.Now().UTC()
	recs := make([]*store.TrialRecord, n)
	for i, tr := range trials {
		recs[i] = &store.TrialRecord{Run: id, Name: tr.Name, Index: i, Status: store.Succeeded, Params: tr.Params, Finished: &end}
		loss := exploreLoss(i)
		put(store.TrialKey(id, tr.Name, "result.json"), fmt.Sprintf(`{"loss": %v, "acc": %v}`, loss, 1-loss/10))
	}
	for _, err := range runs.WriteTrials(ctx, recs) {
		if err != nil {
			t.Fatal(err)
		}
	}
	put(store.TrialKey(id, "t0000", "artifacts/plot.svg"), hostileSVG)
	put(store.TrialKey(id, "t0000", "artifacts/page.html"), hostileHTML)
	put(store.TrialKey(id, "t0000", "artifacts/notes.txt"), hostileText)
	if err := runs.WriteState(ctx, id, &store.RunState{Status: store.Succeeded, Started: end, Finished: &end}); err != nil {
		t.Fatal(err)
	}
	return runs, id
}

var exploreLRs = []float64{0.001, 0.003, 0.01, 0.03, 0.1}

func exploreParams(i int) map[string]any {
	return map[string]any{"algo": string(rune('a' + i%3)), "lr": exploreLRs[i/3%5]}
}

func exploreLoss(i int) float64 { return float64(i%97)/97 + float64(i/3%5) }

// shot saves a screenshot of the element sel (the page: "") as NAME.png in
// $JIKKEN_UI_SCREENSHOTS, when set (the docs' pictures are taken so).
func shot(t *testing.T, b context.Context, sel, name string) {
	t.Helper()
	dir := os.Getenv("JIKKEN_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	time.Sleep(time.Second)             // for a picture, not an assertion: frames paint after they load
	act := chromedp.FullScreenshot(100) // a frame's content shows only in a whole-page capture
	if sel != "" {
		act = chromedp.Screenshot(chromedp.CSS(sel))
	}
	png, err := chromedp.Run(b, act)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

func TestBrowserExplore(t *testing.T) {
	exe := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 1000
	runs, id := exploreRun(t, n)
	srv, err := ui.New(runs, ui.Options{LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()

	// Sandboxed frames stay in the page's process: a dialog one opened would then reach this
	// session (an isolated frame reports to its own target), and screenshots show its content.
	// The sandbox itself (unique origin, no script) is the same either way.
	b, dialogs, closeTab := browserTab(ctx, t, exe, true, chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-features", "IsolateSandboxedIframes"))
	defer closeTab()
	count := func(expr string) int {
		t.Helper()
		v, err := chromedp.Run(b, chromedp.Evaluate[int](expr))
		must(t, err)
		return v
	}
	until := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(b, chromedp.Poll[bool](expr)); err != nil {
			t.Fatalf("waiting for %s (%s): %v", what, expr, err)
		}
	}
	points := `document.querySelectorAll("#x-scatter circle.pt").length`
	lines := `document.querySelectorAll("#x-parallel path.pc-line").length`

	// Every trial is a point of the scatter and a line of the parallel coordinates.
	must(t, chromedp.Do(b, chromedp.Navigate(hs.URL+"/runs/"+id)))
	until("the views of 1,000 trials", points+` === 1000 && `+lines+` === 1000`)
	if axes := count(`document.querySelectorAll("#x-parallel line.pc-axis").length`); axes != 4 {
		t.Errorf("parallel coordinates have %d axes; want 4 (algo, lr, acc, loss)", axes)
	}
	// Grouped by algo: three groups, coloured.
	must(t, chromedp.Do(b, chromedp.Evaluate[chromedp.Void](`const g = document.getElementById("x-group"); g.value = "algo"; g.dispatchEvent(new Event("input"))`)))
	until("three groups", `document.querySelectorAll("#x-groups tbody tr").length === 3`)
	shot(t, b, "#explore", "explore")

	// A filter in the language of 'jikken results --where' keeps the same trials in the views
	// and the table.
	want := 0
	for i := range n {
		p := exploreParams(i)
		if p["algo"] == "a" && p["lr"].(float64) < 0.005 && exploreLoss(i) <= 0.5 {
			want++
		}
	}
	must(t, chromedp.Do(b, chromedp.SendKeys(chromedp.CSS("#x-where"), "algo=a, lr<0.005, loss<=0.5"), chromedp.Click(chromedp.CSS("#x-form button"))))
	until("the filtered views", fmt.Sprintf(`%s === %d && %s === %d`, points, want, lines, want))
	if rows := count(`document.querySelectorAll("#trials tbody tr[data-trial]:not(.xhidden)").length`); rows != want {
		t.Errorf("the table shows %d trials; the filter keeps %d", rows, want)
	}

	// The filter leaves one group; the scatter's axes follow the choice.
	must(t, chromedp.Do(b, chromedp.Evaluate[chromedp.Void](`const x = document.getElementById("x-x"); x.value = "acc"; x.dispatchEvent(new Event("input"))`)))
	until("one group", `document.querySelectorAll("#x-groups tbody tr").length === 1`)
	if s, err := chromedp.Run(b, chromedp.Evaluate[string](`document.getElementById("x-scatter").textContent`)); err != nil || !strings.Contains(s, "acc") {
		t.Errorf("the scatter's labels after choosing x = acc: %q, %v", s, err)
	}

	// A condition jikken refuses is refused here with its message, the views unchanged.
	must(t, chromedp.Do(b, chromedp.Evaluate[chromedp.Void](`document.getElementById("x-where").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#x-where"), "lr<low"), chromedp.Click(chromedp.CSS("#x-form button"))))
	until("the error", `!document.getElementById("x-error").hidden`)
	if s, err := chromedp.Run(b, chromedp.Text(chromedp.CSS("#x-error"))); err != nil || !strings.Contains(s, "compares numbers") {
		t.Errorf("the error shown: %q, %v", s, err)
	}

	// The hostile artifacts run nothing opened alone, nor previewed on the trial page. An alert
	// would block a page before its load event, which Navigate waits for: once each page has
	// loaded, any script it ran has shown its dialog.
	trial := hs.URL + "/runs/" + id + "/trials/t0000"
	for _, f := range []string{"plot.svg", "page.html"} {
		must(t, chromedp.Do(b, chromedp.Navigate(trial+"/files/artifacts/"+f+"?view=inline")))
		until(f+" to load", `document.readyState === "complete"`)
	}
	must(t, chromedp.Do(b, chromedp.Navigate(trial)))
	until("the SVG preview to load", `(() => { const i = document.querySelector('figure.preview img'); return i !== null && i.complete && i.naturalWidth === 120; })()`)
	until("the HTML preview to load", `document.querySelector('figure.preview iframe[sandbox=""]') !== null &&
		performance.getEntriesByType("resource").some(e => e.initiatorType === "iframe" && e.name.includes("page.html?view=inline") && e.responseEnd > 0)`)
	if s, err := chromedp.Run(b, chromedp.Text(chromedp.CSS("pre.filetext"))); err != nil || s != hostileText {
		t.Errorf("the text preview shows %q, %v; want the file as text", s, err)
	}
	if n := count(`document.querySelectorAll("main script").length`); n != 0 {
		t.Errorf("the trial page holds %d scripts in main", n)
	}
	shot(t, b, "", "previews")
	if d := dialogs.Load(); d != 0 {
		t.Errorf("%d dialogs opened: an artifact ran script", d)
	}
}
