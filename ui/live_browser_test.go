package ui_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jikken-dev/jikken/internal/cli"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/ui"
)

// liveExperiment logs a loss point every 0.2 s until the gate exists; the gate is the only way
// it ends.
const liveExperiment = `function(gate, image="") {
  name: "live",
  trials: [{
    name: "ticker",
    [if image != "" then "image"]: image,
    cmd: "i=0; while [ ! -f " + gate + " ]; do i=$((i+1)); echo \"{\\\"name\\\":\\\"loss\\\",\\\"value\\\":$((1000/i)),\\\"step\\\":$i}\" >> $JIKKEN_OUTPUT_DIR/metrics.jsonl; sleep 0.2; done",
  }],
}
`

// TestBrowserLiveCurve: in real Chromium, the trial page of a running trial draws its curve and
// the curve gains at least three points while the trial still runs, without a reload; so does
// the trial's line on the run page; once the trial ends, both hold every point it logged. On
// the local backend and on Docker.
func TestBrowserLiveCurve(t *testing.T) {
	t.Run("local", func(t *testing.T) { testLiveCurve(t, nil) })
	t.Run("docker", func(t *testing.T) {
		bb, err := exec.LookPath("busybox")
		if err != nil || exec.Command("docker", "version").Run() != nil {
			t.Skip("needs a Docker engine, the docker CLI and busybox-static")
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(bb)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "busybox"), data, 0o755); err != nil {
			t.Fatal(err)
		}
		tag := "jikken-ui-live:" + strconv.Itoa(os.Getpid())
		build := exec.Command("docker", "build", "-q", "-t", tag, dir)
		build.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build the image: %v\n%s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })
		testLiveCurve(t, []string{"--backend", "docker", "--tla-str", "image=" + tag})
	})
}

func testLiveCurve(t *testing.T, args []string) {
	exe := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	// The gate is seen by the trial where it runs: a container sees its output folder only, so
	// the gate is a file the test puts there.
	file := filepath.Join(dir, "live.jsonnet")
	if err := os.WriteFile(file, []byte(liveExperiment), 0o644); err != nil {
		t.Fatal(err)
	}
	gate := "$JIKKEN_OUTPUT_DIR/gate"
	runDone := make(chan int, 1)
	go func() {
		ios, _, _, _ := iostreams.Test()
		runDone <- cli.Run(ctx, ios, append([]string{"--store", storeDir, "run", file, "--tla-str", "gate=" + gate}, args...))
	}()
	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	var id string
	var rec *store.TrialRecord
	waitFor(ctx, t, "the trial to run", func() bool {
		ids, _ := runs.RunIDs(ctx)
		if len(ids) != 1 {
			return false
		}
		id = ids[0]
		rec, _ = runs.Trial(ctx, id, "ticker")
		return rec != nil && rec.Status == store.Running && rec.Live != nil && rec.Live.Dir != ""
	})
	open := func() {
		// The trial's output folder is the attempt's out/ (bound into the container on Docker).
		_ = os.WriteFile(filepath.Join(rec.Live.Dir, "out", "gate"), nil, 0o644)
	}
	ended := false
	defer func() {
		open()
		if !ended {
			<-runDone
		}
	}()

	host, _ := os.Hostname()
	srv, err := ui.New(runs, ui.Options{LoopbackOnly: true, Host: host, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	b, _, closeTab := browserTab(ctx, t, exe, false)
	defer closeTab()

	count := func(tab context.Context, sel string) int {
		t.Helper()
		n, err := chromedp.Run(tab, chromedp.Evaluate[string](`(document.querySelector(`+strconv.Quote(sel)+`) || {dataset: {}}).dataset.n || "0"`))
		must(t, err)
		k, _ := strconv.Atoi(n)
		return k
	}
	const trialCurve, runCurve = `#live-curves figure[data-metric="loss"]`, `#run-live figure[data-metric="loss"] polyline[data-series="ticker"]`
	points := func() int { return count(b, trialCurve) }
	must(t, chromedp.Do(b, chromedp.Navigate(hs.URL+"/runs/"+id+"/trials/ticker"),
		chromedp.WaitVisible(chromedp.CSS(`#live-curves figure[data-metric="loss"] polyline`))))
	must(t, chromedp.Do(b, chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`)))
	first := points()
	waitFor(ctx, t, "three more points on the curve", func() bool { return points() >= first+3 })
	if got, _ := runs.Trial(ctx, id, "ticker"); got == nil || got.Status != store.Running {
		t.Fatalf("the trial is no longer running: %+v", got)
	}
	if still, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !still {
		t.Errorf("the page was reloaded: %v", err)
	}

	// The run page, in a second tab: the trial's line of the run's primary metric grows too.
	r, rcancel := chromedp.NewContext(b)
	defer rcancel()
	must(t, chromedp.Do(r, chromedp.Navigate(hs.URL+"/runs/"+id),
		chromedp.WaitVisible(chromedp.CSS(runCurve)),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`)))
	runFirst := count(r, runCurve)
	waitFor(ctx, t, "three more points on the run page's curve", func() bool { return count(r, runCurve) >= runFirst+3 })
	if got, _ := runs.Trial(ctx, id, "ticker"); got == nil || got.Status != store.Running {
		t.Fatalf("the trial is no longer running: %+v", got)
	}
	if still, err := chromedp.Run(r, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !still {
		t.Errorf("the run page was reloaded: %v", err)
	}

	open()
	code := <-runDone
	ended = true
	if code != 0 {
		t.Fatalf("jikken run exited %d", code)
	}
	if _, err := chromedp.Run(b, chromedp.Poll[bool](`document.getElementById("live-curves").dataset.done === "true"`)); err != nil {
		t.Fatalf("the page did not see the trial end: %v", err)
	}
	data, err := store.ReadAll(ctx, blob, store.TrialKey(id, "ticker", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Count(data, []byte("\n")); points() != want {
		t.Errorf("the curve has %d points, the trial logged %d", points(), want)
	}
	if _, err := chromedp.Run(r, chromedp.Poll[bool](`document.getElementById("run-live").dataset.done === "true"`)); err != nil {
		t.Fatalf("the run page did not see the run end: %v", err)
	}
	if want := bytes.Count(data, []byte("\n")); count(r, runCurve) != want {
		t.Errorf("the run page's curve has %d points, the trial logged %d", count(r, runCurve), want)
	}
	t.Logf("live curve: %d points on first draw, %d in all; run page: %d on first draw", first, points(), runFirst)
}
