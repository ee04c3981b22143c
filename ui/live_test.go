package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// TestRunLive: the run-level live endpoint answers, for each trial asked about that has
// started, the points of its primary metric (the first it logged) after the page's cursor, and
// leaves out trials that have not started; a bad cursor or name is the page's error.
func TestRunLive(t *testing.T) {
	ctx := context.Background()
	runs, id := fixture(t)
	s, err := New(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	appendLive := func(from int64, names ...string) {
		t.Helper()
		var pts []store.LivePoint
		for i, n := range names {
			pts = append(pts, store.LivePoint{Seq: from + int64(i), Metric: track.Metric{Name: n, Value: float64(from) + float64(i)}})
		}
		if err := runs.AppendLive(ctx, id, "t-run", 1, pts, nil); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(cursors map[string]LiveCursor) map[string]TrialLive {
		t.Helper()
		q, _ := json.Marshal(cursors)
		w := get(t, s, "GET", "/api/runs/"+id+"/live?after="+url.QueryEscape(string(q)))
		if w.Code != http.StatusOK {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		var out RunLive
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		got := map[string]TrialLive{}
		for _, tl := range out.Trials {
			got[tl.Trial] = tl
		}
		return got
	}
	seqs := func(tl TrialLive) []int64 {
		var out []int64
		for _, p := range tl.Points {
			out = append(out, p.Seq)
		}
		return out
	}

	appendLive(1, "loss", "acc", "loss")
	got := ask(map[string]LiveCursor{"t-run": {}, "t-ok": {}, "not-a-trial": {}})
	if len(got) != 2 {
		t.Fatalf("answered %v, want t-run and t-ok only", got)
	}
	run := got["t-run"]
	if !run.Running || run.Attempt != 1 || run.Metric != "loss" || run.After != 3 || !slices.Equal(seqs(run), []int64{1, 3}) {
		t.Errorf("t-run: %+v, want attempt 1 running, loss points 1 and 3, after 3", run)
	}
	if ok := got["t-ok"]; ok.Running || len(ok.Points) != 0 {
		t.Errorf("t-ok: %+v, want ended with no live points", ok)
	}

	appendLive(4, "acc", "loss")
	run = ask(map[string]LiveCursor{"t-run": run.LiveCursor})["t-run"]
	if run.After != 5 || !slices.Equal(seqs(run), []int64{5}) {
		t.Errorf("t-run after 3: %+v, want loss point 5 only", run)
	}
	// A cursor of another attempt starts again from the first point.
	run = ask(map[string]LiveCursor{"t-run": {Attempt: 2, After: 5, Metric: "acc"}})["t-run"]
	if run.Metric != "loss" || !slices.Equal(seqs(run), []int64{1, 3, 5}) {
		t.Errorf("t-run from another attempt: %+v, want every loss point", run)
	}

	for _, q := range []string{"not json", `{"../x":{}}`} {
		if w := get(t, s, "GET", "/api/runs/"+id+"/live?after="+url.QueryEscape(q)); w.Code != http.StatusBadRequest {
			t.Errorf("after=%s: status %d, want 400", q, w.Code)
		}
	}
	if w := get(t, s, "GET", "/api/runs/20990101-000000-none-abcd/live"); w.Code != http.StatusNotFound {
		t.Errorf("a run not stored: status %d, want 404", w.Code)
	}
}
