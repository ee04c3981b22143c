package ui

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

// The exploration data is the run's results table kept to the rows that meet conditions of
// 'jikken results --where', parsed as the command parses them; a bad condition is a 400 that
// says what to write.
func TestExploreFiltersAsResultsWhere(t *testing.T) {
	s, id := server(t, Options{})
	explore := func(conds ...string) (int, Explore, string) {
		q := url.Values{"where": conds}
		w := get(t, s, "GET", "/api/runs/"+id+"/explore?"+q.Encode())
		var v Explore
		if w.Code == 200 {
			if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
		}
		return w.Code, v, w.Body.String()
	}
	code, all, body := explore()
	if code != 200 || all.Total != 3 || len(all.Rows) != 3 || strings.Join(all.Params, ",") != "algo,lr" || strings.Join(all.Metrics, ",") != "loss" {
		t.Fatalf("unfiltered: %d %+v %s", code, all, body)
	}
	trial := func(v Explore) string {
		var names []string
		for _, r := range v.Rows {
			names = append(names, r[0])
		}
		return strings.Join(names, ",")
	}
	for _, c := range []struct {
		where []string
		want  string
	}{
		{[]string{"loss<0.3"}, "t-ok"},
		{[]string{"lr=0.10", "status!=failed"}, "t-ok,t-run"},
		{[]string{"algo == sgd"}, "t-bad"},
		{[]string{"loss>1"}, ""},
	} {
		code, v, body := explore(c.where...)
		if code != 200 || trial(v) != c.want || v.Total != 3 {
			t.Errorf("where %q: %d rows %q, want %q (%s)", c.where, code, trial(v), c.want, body)
		}
	}
	if code, _, body := explore("lr<low"); code != 400 || !strings.Contains(body, "compares numbers") {
		t.Errorf("a condition comparing text: %d %s", code, body)
	}
	if code, _, body := explore("nope=1"); code != 400 || !strings.Contains(body, `no column \"nope\"`) {
		t.Errorf("a condition on no column: %d %s", code, body)
	}
}

// An SVG or HTML artifact asked for inline (the trial page's preview) is served as what it is,
// in a sandbox without scripts, that only this site may frame; asked for plainly it stays a
// download.
func TestInlineArtifactsAreSandboxed(t *testing.T) {
	s, id := server(t, Options{})
	w := get(t, s, "GET", "/runs/"+id+"/trials/t-ok/files/artifacts/page.html?view=inline")
	h := w.Header()
	csp := h.Get("Content-Security-Policy")
	if w.Code != 200 || h.Get("Content-Type") != "text/html; charset=utf-8" || !strings.HasPrefix(csp, "sandbox;") ||
		strings.Contains(csp, "allow-scripts") || !strings.Contains(csp, "default-src 'none'") || h.Get("X-Frame-Options") != "SAMEORIGIN" ||
		strings.Contains(csp, "frame-ancestors") || // refuses every parent of a sandboxed document, the trial page too
		h.Get("Content-Disposition") != "" {
		t.Errorf("an HTML artifact inline: %d %v", w.Code, h)
	}
	w = get(t, s, "GET", "/runs/"+id+"/trials/t-ok")
	if !strings.Contains(w.Body.String(), `<iframe sandbox src="/runs/`+id+`/trials/t-ok/files/artifacts/page.html?view=inline"`) {
		t.Errorf("the trial page does not preview its HTML artifact in a sandboxed frame:\n%s", w.Body)
	}
}

// The statistics of an ended run are kept until the run ends again (a new state): a changed
// metric without a new state is not seen, a trial run again and the run's new end are.
func TestStatsOfAnEndedRunAreKeptPerEnd(t *testing.T) {
	runs, id := fixture(t)
	ctx := context.Background()
	end := time.Now().UTC()
	ended := func() {
		t.Helper()
		if err := runs.WriteState(ctx, id, &store.RunState{Status: store.Succeeded, Started: end.Add(-time.Hour), Finished: &end}); err != nil {
			t.Fatal(err)
		}
	}
	// The running trial ends, so that two groups have a value.
	if err := runs.WriteTrial(ctx, &store.TrialRecord{Run: id, Name: "t-run", Status: store.Succeeded}); err != nil {
		t.Fatal(err)
	}
	put := func(trial, line string) {
		t.Helper()
		if err := runs.Blob.Put(ctx, store.TrialKey(id, trial, "metrics.jsonl"), strings.NewReader(line), int64(len(line))); err != nil {
			t.Fatal(err)
		}
	}
	put("t-run", `{"name":"loss","value":0.75}`+"\n")
	ended()
	s, err := New(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	median := func() string {
		t.Helper()
		w := get(t, s, "GET", "/api/runs/"+id+"/stats?by=algo&metric=loss&where=status%21%3Dfailed")
		if w.Code != 200 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	first := median()
	if !strings.Contains(first, `"median": 0.25`) {
		t.Fatalf("stats of the fixture: %s", first)
	}
	put("t-ok", `{"name":"loss","value":0.125}`+"\n")
	if again := median(); again != first {
		t.Errorf("the stats of the ended run were computed again:\n%s\nthen\n%s", first, again)
	}
	// A resume runs the trial again: a new record, then a new end of the run.
	later := end.Add(time.Second)
	zero := 0
	if err := runs.WriteTrial(ctx, &store.TrialRecord{Run: id, Name: "t-ok", Status: store.Succeeded, ExitCode: &zero, Finished: &later,
		Attempts: []store.Attempt{{N: 1}, {N: 2}}}); err != nil {
		t.Fatal(err)
	}
	end = later
	ended()
	if now := median(); !strings.Contains(now, `"median": 0.125`) {
		t.Errorf("after the run ended again the stats still say:\n%s", now)
	}
}

// countingBlob counts the trial records read through it.
type countingBlob struct {
	store.Blob
	records atomic.Int64
}

func (b *countingBlob) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if strings.HasSuffix(key, "/trial.json") {
		b.records.Add(1)
	}
	return b.Blob.Get(ctx, key)
}

// The page of an ended run is read once per end: looking again, or exploring it, reads no
// trial record; a new end (a resume) reads them again.
func TestAnEndedRunIsReadOncePerEnd(t *testing.T) {
	folder, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cb := &countingBlob{Blob: folder}
	runs, id := fixtureIn(t, cb)
	ctx := context.Background()
	end := time.Now().UTC()
	if err := runs.WriteState(ctx, id, &store.RunState{Status: store.Failed, Started: end, Finished: &end}); err != nil {
		t.Fatal(err)
	}
	s, err := New(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	look := func(url string) {
		t.Helper()
		if w := get(t, s, "GET", url); w.Code != 200 {
			t.Fatalf("%s: %d %s", url, w.Code, w.Body)
		}
	}
	look("/runs/" + id)
	first := cb.records.Load()
	if first == 0 {
		t.Fatal("the first look read no record")
	}
	look("/runs/" + id)
	look("/api/runs/" + id + "/explore?where=lr%3D0.1")
	if n := cb.records.Load() - first; n != 0 {
		t.Errorf("looking again at the ended run read %d records", n)
	}
	later := end.Add(time.Second)
	if err := runs.WriteState(ctx, id, &store.RunState{Status: store.Failed, Started: end, Finished: &later}); err != nil {
		t.Fatal(err)
	}
	look("/runs/" + id)
	if n := cb.records.Load() - first; n == 0 {
		t.Error("the run ended again, and its page was not read again")
	}
}

// The runs list shows, for an ended run with a summary, each metric's median over its
// succeeded trials; a run resumed (running again) shows none until it ends again.
func TestRunsListMedians(t *testing.T) {
	runs, id := fixture(t)
	ctx := context.Background()
	end := time.Now().UTC()
	sum, err := results.Summarize(ctx, runs, id, end)
	if err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteSummary(ctx, id, sum); err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteState(ctx, id, &store.RunState{Status: store.Failed, Started: end, Finished: &end}); err != nil {
		t.Fatal(err)
	}
	s, err := New(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var p RunsPage
	if err := json.Unmarshal(get(t, s, "GET", "/api/runs").Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.Metrics, ",") != "loss" || len(p.Runs) != 1 || p.Runs[0].Medians["loss"] != 0.25 {
		t.Errorf("runs list: metrics %q, runs %+v", p.Metrics, p.Runs)
	}
	body := get(t, s, "GET", "/").Body.String()
	if !strings.Contains(body, `<th class="metric" title="median over the run's succeeded trials">loss</th>`) || !strings.Contains(body, `<td class="n">0.25</td>`) {
		t.Errorf("the runs page has no loss column:\n%s", body)
	}
	// A numeric filter on the metric columns, in the language of 'jikken results --where'.
	for where, n := range map[string]int{"loss<0.3": 1, "loss>0.3": 0, "loss%3E%3D0.25,+loss!%3D1": 1, "loss=0.25": 1} {
		p = RunsPage{}
		if err := json.Unmarshal(get(t, s, "GET", "/api/runs?where="+where).Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if p.Total != n || len(p.Runs) != n {
			t.Errorf("where=%s: %d run(s) (%+v), want %d", where, p.Total, p.Runs, n)
		}
	}
	for where, msg := range map[string]string{"los<1": `no run listed has a metric \"los\"; the metrics are loss`, "loss<low": `\"low\" is not one`} {
		if w := get(t, s, "GET", "/api/runs?where="+where); w.Code != 400 || !strings.Contains(w.Body.String(), msg) {
			t.Errorf("where=%s: %d %s, want 400 saying %s", where, w.Code, w.Body, msg)
		}
	}
	body = get(t, s, "GET", "/?where=loss%3C0.3&status=failed").Body.String()
	if !strings.Contains(body, `name="where" value="loss&lt;0.3"`) || !strings.Contains(body, `<td class="n">0.25</td>`) || !strings.Contains(body, "where loss&lt;0.3") {
		t.Errorf("the filtered runs page lacks the filter or the run:\n%s", body)
	}
	if err := runs.WriteState(ctx, id, &store.RunState{Status: store.Running, Started: end}); err != nil {
		t.Fatal(err)
	}
	p = RunsPage{}
	if err := json.Unmarshal(get(t, s, "GET", "/api/runs").Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Metrics) != 0 || p.Runs[0].Medians != nil {
		t.Errorf("a resumed run still shows medians: %q %+v", p.Metrics, p.Runs[0].Medians)
	}
}
