package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

const hostile = `<script>alert(1)</script>`

// fixture writes a run of three trials into a folder store: one succeeded whose param value
// and output are hostile HTML, one failed after two attempts, one still running.
func fixture(t *testing.T) (store.Runs, string) {
	t.Helper()
	b, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return fixtureIn(t, b)
}

func fixtureIn(t *testing.T, b store.Blob) (store.Runs, string) {
	t.Helper()
	ctx := context.Background()
	runs := store.Runs{Blob: b}
	id := "20260101-120000-demo-abcd"
	seed := func(n int64) *int64 { return &n }
	trials := []experiment.Trial{
		{Name: "t-ok", Index: 0, Params: map[string]any{"algo": hostile, "lr": 0.1}, Seed: seed(1)},
		{Name: "t-bad", Index: 1, Params: map[string]any{"algo": "sgd", "lr": 0.1}, Seed: seed(1)},
		{Name: "t-run", Index: 2, Params: map[string]any{"algo": "adam", "lr": 0.1}, Seed: seed(1)},
	}
	m := &store.Manifest{RunID: id, Experiment: "demo", Created: time.Now(), Host: "h", User: "u", Trials: trials}
	if err := runs.CreateManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	end := start.Add(10 * time.Second)
	one, two := 1, 2
	put := func(key, s string) {
		if err := b.Put(ctx, key, strings.NewReader(s), int64(len(s))); err != nil {
			t.Fatal(err)
		}
	}
	zero := 0
	for _, rec := range []*store.TrialRecord{
		{Run: id, Name: "t-ok", Status: store.Succeeded, ExitCode: &zero, Started: &start, Finished: &end,
			Attempts: []store.Attempt{{N: 1, Started: start, Finished: end, ExitCode: &zero}}},
		{Run: id, Name: "t-bad", Status: store.Failed, ExitCode: &two, Reason: "exit status 2", Started: &start, Finished: &end,
			Attempts: []store.Attempt{{N: 1, Started: start, Finished: end, ExitCode: &one, Reason: "exit status 1"}, {N: 2, Started: start, Finished: end, ExitCode: &two, Reason: "exit status 2"}}},
		{Run: id, Name: "t-run", Status: store.Running, Started: &start, Attempts: []store.Attempt{{N: 1, Started: start}}},
	} {
		if err := runs.WriteTrial(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	put(store.TrialKey(id, "t-ok", "stdout.log"), "hello "+hostile+"\n")
	put(store.TrialKey(id, "t-ok", "metrics.jsonl"), `{"name":"loss","value":0.5,"step":1}`+"\n"+`{"name":"loss","value":0.25,"step":2}`+"\n")
	put(store.TrialKey(id, "t-ok", "artifacts/page.html"), hostile)
	put(store.TrialKey(id, "t-bad", "attempts/1/stderr.log"), "first try failed\n")
	put(store.TrialKey(id, "t-bad", "stderr.log"), "second try failed\n")
	// Its runner works on another machine.
	if _, err := runs.Lock(ctx, id, store.LockInfo{Host: "elsewhere", PID: 42, Started: start}, false); err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteState(ctx, id, &store.RunState{Status: store.Running, Started: start,
		Counts: map[store.Status]int{store.Running: 3}}); err != nil { // stale: the runner rewrites it less often
		t.Fatal(err)
	}
	return runs, id
}

func server(t *testing.T, opts Options) (*Server, string) {
	runs, id := fixture(t)
	s, err := New(runs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, id
}

func get(t *testing.T, h http.Handler, method, url string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, url, nil)
	req.Host = "127.0.0.1:8080"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestPagesEscapeWhatTrialsPrintAndName(t *testing.T) {
	s, id := server(t, Options{LoopbackOnly: true})
	for _, url := range []string{"/", "/runs/" + id, "/runs/" + id + "/trials/t-ok", "/runs/" + id + "/stats?by=algo&metric=loss"} {
		w := get(t, s, "GET", url)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", url, w.Code, w.Body)
		}
		body := w.Body.String()
		if strings.Contains(body, "<script>alert") {
			t.Errorf("%s: a trial's text reached the page as HTML:\n%s", url, body)
		}
		if url != "/" && !strings.Contains(url, "stats") && !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: the hostile value is not shown as text", url)
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: CSP = %q", url, csp)
		}
	}
}

func TestTrialPageShowsEveryAttemptsLog(t *testing.T) {
	s, id := server(t, Options{})
	body := get(t, s, "GET", "/runs/"+id+"/trials/t-bad").Body.String()
	for _, want := range []string{"first try failed", "second try failed", "attempt 1", "attempt 2", "exit status 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("trial page lacks %q", want)
		}
	}
	w := get(t, s, "GET", "/runs/"+id+"/trials/t-bad/log/stderr?attempt=1")
	if w.Body.String() != "first try failed\n" || w.Header().Get("X-Log-Size") != "17" {
		t.Errorf("attempt 1's log = %q (size %s)", w.Body, w.Header().Get("X-Log-Size"))
	}
	w = get(t, s, "GET", "/runs/"+id+"/trials/t-bad/log/stderr?offset=7")
	if w.Body.String() != "try failed\n" {
		t.Errorf("latest log from offset 7 = %q", w.Body)
	}
}

func TestNoPathTraversal(t *testing.T) {
	s, id := server(t, Options{})
	base := "/runs/" + id + "/trials/t-ok"
	for _, url := range []string{
		"/runs/..%2f..%2f..%2fetc",
		"/runs/" + id + "/trials/..%2f..%2fmanifest.json",
		"/runs/" + id + "/trials/..%2F" + id + "/files/state.json",
		"/runs/" + id + "/trials/t-ok%2f..%2f..%2f/files/state.json",
		base + "/files/..%2f..%2f..%2fstate.json",
		base + "/files/artifacts%2f..%2f..%2f..%2fmanifest.json",
		base + "/files/%2e%2e/%2e%2e/%2e%2e/state.json",
		base + "/files/a%5c..%5c..%5cstate.json",
		base + "/log/..%2fmanifest",
		"/runs/" + id + "/trials/not-planned/files/stdout.log",
		"/api/runs/%2e%2e",
	} {
		w := get(t, s, "GET", url)
		if w.Code == 200 || w.Code/100 == 3 {
			t.Errorf("%s: %d; want it refused:\n%s", url, w.Code, w.Body)
		}
		if strings.Contains(w.Body.String(), `"run_id"`) || strings.Contains(w.Body.String(), `"counts"`) {
			t.Errorf("%s leaked a file outside the trial: %s", url, w.Body)
		}
	}
	if w := get(t, s, "GET", base+"/files/stdout.log"); w.Code != 200 || !strings.Contains(w.Body.String(), "hello") {
		t.Errorf("a trial's own file: %d %s", w.Code, w.Body)
	}
}

func TestFilesAreDownloadsInASandbox(t *testing.T) {
	s, id := server(t, Options{})
	w := get(t, s, "GET", "/runs/"+id+"/trials/t-ok/files/artifacts/page.html")
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	h := w.Header()
	if h.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") ||
		h.Get("Content-Security-Policy") != "sandbox" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("an HTML artifact is served with %v", h)
	}
}

func TestReadOnlyAndLoopbackOnly(t *testing.T) {
	s, id := server(t, Options{LoopbackOnly: true})
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		if w := get(t, s, m, "/runs/"+id); w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d; want 405", m, w.Code)
		}
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "attacker.example:8080"
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	if w.Code != http.StatusForbidden {
		t.Errorf("a rebound host name: %d; want 403", w.Code)
	}
	for _, host := range []string{"localhost:8080", "[::1]:8080", "127.0.0.1"} {
		req.Host = host
		w = httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Errorf("host %s: %d", host, w.Code)
		}
	}
}

func TestToken(t *testing.T) {
	s, _ := server(t, Options{Token: "s3cret"})
	if w := get(t, s, "GET", "/api/runs"); w.Code != http.StatusUnauthorized {
		t.Errorf("without a token: %d", w.Code)
	}
	if w := get(t, s, "GET", "/api/runs?token=wrong"); w.Code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", w.Code)
	}
	w := get(t, s, "GET", "/?token=s3cret")
	if w.Code != http.StatusSeeOther || strings.Contains(w.Header().Get("Location"), "s3cret") {
		t.Fatalf("the token URL: %d to %q", w.Code, w.Header().Get("Location"))
	}
	req := httptest.NewRequest("GET", "/api/runs", nil)
	for _, c := range w.Result().Cookies() {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("with the cookie: %d", rec.Code)
	}
	req = httptest.NewRequest("GET", "/api/runs", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("with a bearer header: %d", rec.Code)
	}
}

func TestRunJSON(t *testing.T) {
	s, id := server(t, Options{})
	w := get(t, s, "GET", "/api/runs/"+id)
	var v RunView
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	if !v.Live || len(v.Trials) != 3 || v.Trials[0].Params["algo"] != hostile || v.Trials[1].Attempts != 2 || v.Trials[2].Status != store.Running {
		t.Errorf("run JSON = %+v", v)
	}
	if v.Trials[0].Metrics["loss"] != 0.25 {
		t.Errorf("final loss = %v", v.Trials[0].Metrics)
	}
	if !bytes.Contains(w.Body.Bytes(), []byte(`\u003cscript\u003e`)) {
		t.Errorf("JSON should escape < and > so it is inert if sniffed as HTML")
	}
	w = get(t, s, "GET", "/api/runs/nope")
	if w.Code != 404 || !strings.Contains(w.Body.String(), "error") {
		t.Errorf("a missing run: %d %s", w.Code, w.Body)
	}
	_ = io.Discard
}

func TestRunsFilter(t *testing.T) {
	s, id := server(t, Options{})
	for url, want := range map[string]int{"/api/runs": 1, "/api/runs?status=running": 1, "/api/runs?status=failed": 0, "/api/runs?q=DEMO": 1, "/api/runs?q=nope": 0} {
		var p RunsPage
		w := get(t, s, "GET", url)
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Total != want || len(p.Runs) != want {
			t.Errorf("%s: %v, %d runs; want %d", url, err, p.Total, want)
		}
		if want == 1 && p.Runs[0].ID != id {
			t.Errorf("%s: %+v", url, p.Runs)
		}
	}
	// While the run runs, its counts come from the trials' records.
	var p RunsPage
	_ = json.Unmarshal(get(t, s, "GET", "/api/runs").Body.Bytes(), &p)
	if c := p.Runs[0].Counts; c[store.Running] != 1 || c[store.Failed] != 1 || c[store.Succeeded] != 1 {
		t.Errorf("counts = %v", c)
	}
}

func TestCurvesLayout(t *testing.T) {
	cs := curves([]results.Point{{Metric: "loss", Step: 0, Value: 1}, {Metric: "loss", Step: 10, Value: 1e-6}, {Metric: "acc", Step: 0, Value: 0.5}})
	if len(cs) != 1 || cs[0].Metric != "loss" || !cs[0].Log || cs[0].Points != "4.0,4.0 356.0,116.0" {
		t.Errorf("curves = %+v; want loss only (acc has one point), on a log scale", cs)
	}
}

func TestARunWhoseRunnerIsGone(t *testing.T) {
	runs, id := fixture(t)
	s, err := New(runs, Options{Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	var v RunView
	_ = json.Unmarshal(get(t, s, "GET", "/api/runs/"+id).Body.Bytes(), &v)
	if v.Status != store.Running || !v.Live || !strings.Contains(v.Note, "runner pid 42 on elsewhere") {
		t.Errorf("a run with a runner elsewhere: %s, live %v, note %q", v.Status, v.Live, v.Note)
	}
	if err := runs.Blob.Delete(context.Background(), store.RunKey(id, "lock")); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(get(t, s, "GET", "/api/runs/"+id).Body.Bytes(), &v)
	if v.Status != store.Killed || v.Live || !strings.Contains(v.Note, "jikken resume "+id) {
		t.Errorf("a run without its runner: %s, live %v, note %q; want killed, not live, how to resume", v.Status, v.Live, v.Note)
	}
	if body := get(t, s, "GET", "/runs/"+id).Body.String(); !strings.Contains(body, "the runner is gone") {
		t.Error("the run page does not say the runner is gone")
	}
}

func TestPairingOnAFirstLook(t *testing.T) {
	tb := &results.Table{Columns: []string{"trial", "status", "algo", "fn", "lr", "seed", "loss"}, Rows: [][]string{
		{"a", "succeeded", "x", "f", "0.1", "1", "1"}, {"b", "succeeded", "y", "g", "0.1", "2", "2"},
	}}
	if got := pairing(tb, []string{"algo", "fn", "lr"}, "algo"); !slices.Equal(got, []string{"fn", "seed"}) {
		t.Errorf("pairing = %v; want fn and seed (lr does not vary, algo is the groups)", got)
	}
}

func TestTailTextStartsOnACharacter(t *testing.T) {
	b := []byte("実験 done")
	if got := tailText(b[1:], true); got != "験 done" {
		t.Errorf("tailText = %q", got)
	}
	if got := tailText(b[1:], false); got != string(b[1:]) {
		t.Errorf("an uncut log must stay as it is: %q", got)
	}
}

func TestRunCountsFromRecords(t *testing.T) {
	s, id := server(t, Options{})
	var v RunView
	if err := json.Unmarshal(get(t, s, "GET", "/api/runs/"+id).Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if c := v.Counts; c[store.Running] != 1 || c[store.Failed] != 1 || c[store.Succeeded] != 1 {
		t.Errorf("run page counts = %v; want those of the trials' records", c)
	}
}

// TestTableAsResults checks the statistics read the table 'jikken results' gives.
func TestTableAsResults(t *testing.T) {
	runs, id := fixture(t)
	want, err := results.LoadTable(context.Background(), runs, id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := newReader(runs, "").loadTable(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Columns, want.Columns) || !slices.EqualFunc(got.Rows, want.Rows, slices.Equal) {
		t.Errorf("table = %v %v\nwant %v %v", got.Columns, got.Rows, want.Columns, want.Rows)
	}
}

func TestAPendingTrialOfAStoppedRun(t *testing.T) {
	runs, id := fixture(t)
	ctx := context.Background()
	if err := runs.Blob.Delete(ctx, store.TrialKey(id, "t-run", "trial.json")); err != nil {
		t.Fatal(err)
	}
	s, err := New(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if body := get(t, s, "GET", "/runs/"+id+"/trials/t-run").Body.String(); !strings.Contains(body, `id="no-attempts"`) {
		t.Errorf("a pending trial of a live run should wait for its start:\n%s", body)
	}
	if err := runs.Blob.Delete(ctx, store.RunKey(id, "lock")); err != nil {
		t.Fatal(err)
	}
	body := get(t, s, "GET", "/runs/"+id+"/trials/t-run").Body.String()
	if strings.Contains(body, `id="no-attempts"`) || !strings.Contains(body, "jikken resume "+id) {
		t.Errorf("a pending trial of a stopped run waits for nothing:\n%s", body)
	}
}

// A trial its search pruned has its own status everywhere the browser shows one: the counts,
// its badge (a colour of its own), the status filter, and its metrics are shown.
func TestAPrunedTrial(t *testing.T) {
	runs, id := fixture(t)
	ctx := context.Background()
	start := time.Now().Add(-time.Minute)
	end := start.Add(5 * time.Second)
	rec := &store.TrialRecord{Run: id, Name: "t-bad", Status: store.Pruned, Reason: "pruned at step 2: 0.9 ranks 3 of 3 trials at rung 2, outside the top 1",
		Started: &start, Finished: &end, Attempts: []store.Attempt{{N: 1, Started: start, Finished: end}}}
	if err := runs.WriteTrial(ctx, rec); err != nil {
		t.Fatal(err)
	}
	line := `{"name":"loss","value":0.9,"step":2}` + "\n"
	if err := runs.Blob.Put(ctx, store.TrialKey(id, "t-bad", "metrics.jsonl"), strings.NewReader(line), int64(len(line))); err != nil {
		t.Fatal(err)
	}
	s, err := New(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var v RunView
	if err := json.Unmarshal(get(t, s, "GET", "/api/runs/"+id).Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Counts[store.Pruned] != 1 || v.Trials[1].Status != store.Pruned || v.Trials[1].Metrics["loss"] != 0.9 {
		t.Errorf("counts %v, trial %+v", v.Counts, v.Trials[1])
	}
	if got := countsLine(v.RunSummary); got != "1 succeeded · 1 pruned · 1 running" {
		t.Errorf("counts line %q", got)
	}
	page := get(t, s, "GET", "/runs/"+id).Body.String()
	for _, want := range []string{`<span class="badge s-pruned">pruned</span>`, `<option>pruned</option>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks %s", want)
		}
	}
	css := get(t, s, "GET", "/static/app.css").Body.String()
	if !strings.Contains(css, ".s-pruned {") || !strings.Contains(css, ".p-pruned {") {
		t.Error("app.css has no colour for pruned")
	}
	for _, file := range []string{"/static/app.js", "/static/live.js"} {
		if js := get(t, s, "GET", file).Body.String(); !strings.Contains(js, `"pruned"`) {
			t.Errorf("%s does not know a pruned trial has ended", file)
		}
	}
}

// A trial a race eliminated has its own status where the browser shows one: the counts, its
// badge (a colour of its own, the test that eliminated it as its title), the status filter, and
// its page gives the reason.
func TestAnEliminatedTrial(t *testing.T) {
	runs, id := fixture(t)
	ctx := context.Background()
	end := time.Now()
	why := "c=3 eliminated by F-race after 5 blocks: Friedman T = 16.5, p = 0.00244 (best: c=1)"
	if err := runs.WriteTrial(ctx, &store.TrialRecord{Run: id, Name: "t-bad", Status: store.Eliminated, Reason: why, Finished: &end}); err != nil {
		t.Fatal(err)
	}
	s, err := New(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var v RunView
	if err := json.Unmarshal(get(t, s, "GET", "/api/runs/"+id).Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Counts[store.Eliminated] != 1 || v.Trials[1].Status != store.Eliminated {
		t.Errorf("counts %v, trial %+v", v.Counts, v.Trials[1])
	}
	if got := countsLine(v.RunSummary); got != "1 succeeded · 1 eliminated · 1 running" {
		t.Errorf("counts line %q", got)
	}
	page := get(t, s, "GET", "/runs/"+id).Body.String()
	for _, want := range []string{`<span class="badge s-eliminated" title="c=3 eliminated by F-race`, `>eliminated</span>`, `<option>eliminated</option>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks %s", want)
		}
	}
	if page := get(t, s, "GET", "/runs/"+id+"/trials/t-bad").Body.String(); !strings.Contains(page, "eliminated by F-race after 5 blocks") {
		t.Error("the trial page does not say what eliminated it")
	}
	css := get(t, s, "GET", "/static/app.css").Body.String()
	if !strings.Contains(css, ".s-eliminated {") || !strings.Contains(css, ".p-eliminated {") {
		t.Error("app.css has no colour for eliminated")
	}
	for _, file := range []string{"/static/app.js", "/static/live.js"} {
		if js := get(t, s, "GET", file).Body.String(); !strings.Contains(js, `"eliminated"`) {
			t.Errorf("%s does not know an eliminated trial has ended", file)
		}
	}
}

// An answer JSON cannot hold is a 500 that says why, not a 200 with an empty body that leaves a
// polling page blank without a word.
func TestJSONAnswerThatCannotBeEncoded(t *testing.T) {
	s, _ := server(t, Options{})
	w := httptest.NewRecorder()
	s.writeJSON(w, httptest.NewRequest("GET", "/api/runs/x", nil), map[string]float64{"loss": math.NaN()})
	if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), "unsupported value") || !json.Valid(w.Body.Bytes()) {
		t.Errorf("%d %s", w.Code, w.Body)
	}
}
