package ui_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/jikken-dev/jikken/internal/cli"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/ui"
)

// chromium finds a Chromium to drive, or skips (fails under CI=true) with how to get one.
func chromium(t *testing.T) string {
	for _, name := range []string{os.Getenv("JIKKEN_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium for the browser tests: install it (Debian: apt-get install chromium) or point JIKKEN_CHROMIUM at one"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// The experiment: a matrix of three algorithms x four seeds whose loss ranks them the same way
// in every block, a trial that prints HTML, one that fails, and one that waits for a file the
// test creates, so the test decides when it ends.
const experimentFile = `function(gate) {
  name: "uitest",
  trials: [
    { name: "hostile", cmd: "echo '<script>alert(1)</script>'; echo '<img src=x onerror=alert(2)>' >&2" },
    { name: "broken", cmd: "echo 'disk on fire' >&2; exit 3" },
    { name: "gated", cmd: "echo waiting; while [ ! -f '" + gate + "' ]; do sleep 0.05; done; echo opened" },
  ],
  matrix: {
    name: "m",
    params: { algo: ["a", "b", "c"] },
    seeds: 4,
    cmd: "case $JIKKEN_PARAM_ALGO in a) o=1;; b) o=5;; *) o=9;; esac; echo \"::metric loss=$((JIKKEN_SEED * 2 + o))\"",
  },
}
`

func TestBrowser(t *testing.T) {
	exe := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	storeDir, gate := filepath.Join(dir, "store"), filepath.Join(dir, "gate")
	file := filepath.Join(dir, "uitest.jsonnet")
	if err := os.WriteFile(file, []byte(experimentFile), 0o644); err != nil {
		t.Fatal(err)
	}

	// A real run, by the real runner, in the background: it ends when the gate opens.
	runDone := make(chan int, 1)
	go func() {
		ios, _, _, _ := iostreams.Test()
		runDone <- cli.Run(ctx, ios, []string{"--store", storeDir, "run", file, "-j", "3", "--tla-str", "gate=" + gate})
	}()
	defer func() {
		_ = os.WriteFile(gate, nil, 0o644)
		<-runDone
	}()
	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	var id string
	waitFor(ctx, t, "the gated trial to run with every other trial done", func() bool {
		ids, _ := runs.RunIDs(ctx)
		if len(ids) != 1 {
			return false
		}
		id = ids[0]
		recs, _ := runs.Trials(ctx, id)
		done := 0
		for _, r := range recs {
			if r.Status.Final() {
				done++
			}
		}
		return recs["gated"] != nil && recs["gated"].Status == store.Running && done == 14
	})

	host, _ := os.Hostname()
	srv, err := ui.New(runs, ui.Options{LoopbackOnly: true, Host: host, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()

	b, dialogs, closeTab := browserTab(ctx, t, exe, false, chromedp.WindowSize(1400, 1000))
	defer closeTab()
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		must(t, chromedp.Do(b, steps...))
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(sel)))
		must(t, err)
		return s
	}
	count := func(expr string) int {
		t.Helper()
		n, err := chromedp.Run(b, chromedp.Evaluate[int](expr))
		must(t, err)
		return n
	}
	shots := os.Getenv("JIKKEN_UI_SCREENSHOTS") // a folder: the docs' screenshots are taken here
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644))
	}
	base := hs.URL
	run := base + "/runs/" + id
	visible := func(sel string) chromedp.Action[chromedp.Void] { return chromedp.WaitVisible(chromedp.CSS(sel)) }

	// The runs page lists the run.
	do(chromedp.Navigate(base+"/"), visible("#runs"))
	if s := text("#runs"); !strings.Contains(s, id) || !strings.Contains(s, "uitest") || !strings.Contains(s, "running") {
		t.Errorf("runs page: %q", s)
	}
	shot("runs")

	// The run page: the gated trial runs; a filter narrows the table.
	do(chromedp.Navigate(run), visible(`#trials tr[data-trial="gated"]`))
	// The rows are redrawn on every poll: read them in one script, not node by node.
	if s, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector('#trials tr[data-trial="gated"] .badge').textContent`)); err != nil || s != "running" {
		t.Errorf("gated trial shows %q (%v); want running", s, err)
	}
	shown := count(`window.notReloaded = true;
		const s = document.querySelector('select[data-param="algo"]'); s.value = "b"; s.dispatchEvent(new Event("input"));
		document.querySelectorAll("#trials tbody tr:not(.hidden)").length`)
	if shown != 4 {
		t.Errorf("filtering algo=b shows %d rows; want 4", shown)
	}
	count(`s.value = ""; s.dispatchEvent(new Event("input")); 0`)
	// A header sorts the rows: twice on loss, the largest loss comes first.
	do(chromedp.Click(chromedp.CSS(`#trials th[data-sort="m:loss"]`)))
	do(chromedp.Click(chromedp.CSS(`#trials th[data-sort="m:loss"]`)))
	if _, err := chromedp.Run(b, chromedp.Poll[bool](`document.querySelector("#trials th.sorted-desc") !== null &&
		document.querySelector("#trials tbody tr").dataset.trial === "m-c-s3"`)); err != nil {
		t.Errorf("sorting by loss, descending: %v", err)
	}
	do(chromedp.Click(chromedp.CSS(`#trials th[data-sort="name"]`)))
	shot("run")

	// A second tab follows the running trial's log.
	tab, tabCancel := chromedp.NewContext(b)
	defer tabCancel()
	must(t, chromedp.Do(tab, chromedp.Navigate(run+"/trials/gated"), visible(`pre.logtext[data-follow="true"]`)))
	if s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("pre.logtext"))); err != nil || !strings.Contains(s, "waiting") {
		t.Errorf("the running trial's log shows %q, %v; want its first line", s, err)
	}

	// A third tab shows the runs list, where the run's status changes when it ends.
	list, listCancel := chromedp.NewContext(b)
	defer listCancel()
	must(t, chromedp.Do(list, chromedp.Navigate(base+"/"), visible(`#runs .s-running`)))

	// The gate opens: the page shows the trial succeed without a reload.
	must(t, os.WriteFile(gate, nil, 0o644))
	do(visible(`#trials tr[data-trial="gated"][data-status="succeeded"]`),
		visible(`#run-status.s-failed`)) // the run ends failed: "broken" failed
	if count(`window.notReloaded === true ? 1 : 0`) != 1 {
		t.Error("the page reloaded to show the change")
	}
	// The followed log gets the trial's last line, and its badge the end, without a reload.
	must(t, chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS(`#trial-status.s-succeeded`))))
	if s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("pre.logtext"))); err != nil || !strings.Contains(s, "waiting\nopened") {
		t.Errorf("the followed log shows %q, %v; want waiting then opened", s, err)
	}
	must(t, chromedp.Do(list, visible(`#runs [data-field="status"].s-failed`)))
	if code := <-runDone; code != 3 {
		t.Errorf("the run exited %d; want 3 (a trial failed)", code)
	}
	runDone <- 0

	// A failed trial's log shows, with its exit code.
	do(chromedp.Navigate(run+"/trials/broken"), visible("pre.logtext"))
	if s := text("main"); !strings.Contains(s, "disk on fire") || !strings.Contains(s, "exit 3") {
		t.Errorf("failed trial page: %q", s)
	}
	shot("trial")

	// What a trial prints is text, not markup: no script ran, no element was made.
	do(chromedp.Navigate(run+"/trials/hostile"), visible("pre.logtext"))
	if s := text("main"); !strings.Contains(s, "<script>alert(1)</script>") || !strings.Contains(s, "<img src=x onerror=alert(2)>") {
		t.Errorf("the hostile output is not shown as text: %q", s)
	}
	if n := count(`document.querySelectorAll("main script, main img[src=x]").length`); n != 0 || dialogs.Load() != 0 {
		t.Errorf("the hostile output became markup: %d elements, %d dialogs", n, dialogs.Load())
	}

	// The statistics page gives the Friedman p-value 'jikken compare' gives.
	do(chromedp.Navigate(run+"/stats?by=algo&metric=loss&pair_by=seed&dir=min"), visible(".section table"))
	page := text("main")
	shot("stats")
	ios, _, out, errOut := iostreams.Test()
	if code := cli.Run(ctx, ios, []string{"--store", storeDir, "compare", id, "--by", "algo", "--metric", "loss", "--pair-by", "seed", "--lower-is-better"}); code != 0 {
		t.Fatalf("jikken compare: %d %s", code, errOut)
	}
	friedman := regexp.MustCompile(`Friedman: chi-squared = [^,]+, df = \d+, p = [0-9][0-9.e+-]*[0-9]`)
	want := friedman.FindString(out.String())
	if want == "" || friedman.FindString(page) != want {
		t.Errorf("stats page %q; jikken compare %q", friedman.FindString(page), want)
	}

	// A second run of the same experiment; the compare page pools both under a column "run" and
	// pairs the algorithms' trials by run and seed.
	ios2, _, _, errOut2 := iostreams.Test()
	if code := cli.Run(ctx, ios2, []string{"--store", storeDir, "run", file, "-j", "3", "--tla-str", "gate=" + gate}); code != 3 {
		t.Fatalf("second run: exit %d; want 3 (a trial failed): %s", code, errOut2)
	}
	ids, err := runs.RunIDs(ctx)
	if err != nil || len(ids) != 2 {
		t.Fatalf("runs %v, %v", ids, err)
	}
	do(chromedp.Navigate(base+"/compare?run="+ids[0]+"&run="+ids[1]+"&by=algo&metric=loss&pair_by=run&pair_by=seed&dir=min"), visible(".section table"))
	if s := text("main"); !strings.Contains(s, "paired by run,seed (8 blocks)") || !strings.Contains(s, "Friedman") {
		t.Errorf("compare page: %q", s)
	}
	shot("compare")

	// The same data is JSON for scripts.
	do(chromedp.Navigate(base + "/api/runs/" + id))
	var v struct {
		Status string `json:"status"`
		Rows   []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"trial_rows"`
	}
	if err := json.Unmarshal([]byte(text("body")), &v); err != nil || v.Status != "failed" || len(v.Rows) != 15 {
		t.Errorf("run JSON: %v %+v", err, v)
	}

	// With --allow-delete, the run is deleted from its page after typing its id: the browser's
	// own form passes the origin checks that refuse other sites.
	del, err := ui.New(runs, ui.Options{LoopbackOnly: true, Host: host, AllowDelete: true})
	if err != nil {
		t.Fatal(err)
	}
	ds := httptest.NewServer(del)
	defer ds.Close()
	for i, step := range []chromedp.Action[chromedp.Void]{chromedp.Navigate(ds.URL + "/runs/" + id), chromedp.Click(chromedp.CSS(`a.danger`)), visible(`input[name="confirm"]`),
		chromedp.SendKeys(chromedp.CSS(`input[name="confirm"]`), id), chromedp.Click(chromedp.CSS(`button.danger`)),
		visible(`#runs`)} {
		sctx, c := context.WithTimeout(b, 15*time.Second)
		err := chromedp.Do(sctx, step)
		c()
		if err != nil {
			loc, _ := chromedp.Run(b, chromedp.Location())
			body, _ := chromedp.Run(b, chromedp.Text(chromedp.CSS("body")))
			t.Fatalf("step %d: %v at %s: %s", i, err, loc, body)
		}
	}
	if s := text("main"); !strings.Contains(s, "Deleted run "+id) || count(`document.querySelectorAll("#runs tr[data-run]").length`) != 1 {
		t.Errorf("after deleting: %q", s)
	}
	if _, err := runs.Manifest(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the run is still in the store: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or ctx ends: no assertion on how long it takes.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, errors.New(fmt.Sprint(ctx.Err())))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// browserTab starts a headless Chromium (exe) under ctx and returns a tab in it, the number of
// JavaScript dialogs the tab has opened (each also a test error when failOnDialog is set: no
// page of the UI opens one, so one means a value ran as script), and the function that closes
// both, to defer before the test server's Close.
func browserTab(ctx context.Context, t *testing.T, exe string, failOnDialog bool, opts ...chromedp.ExecAllocatorOption) (context.Context, *atomic.Int32, func()) {
	t.Helper()
	actx, acancel := chromedp.NewExecAllocator(ctx, append(append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU), opts...)...)
	b, bcancel := chromedp.NewContext(actx)
	var dialogs atomic.Int32
	must(t, chromedp.Listen(b, func(ev any) {
		if e, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
			if failOnDialog {
				t.Errorf("a dialog opened: %q", e.Message)
			}
		}
	}))
	return b, &dialogs, func() { bcancel(); acancel() }
}
