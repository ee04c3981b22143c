package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/store"
)

// The statistics page applies compare's failure policy to its curves too, lists what they leave
// out, and takes --failed and --incomplete as compare does.
func TestStatsPageSharesTheFailurePolicy(t *testing.T) {
	runs, id := fixture(t)
	// The running trial ends, so that two groups have a value and one a failure.
	ctx := context.Background()
	if err := runs.WriteTrial(ctx, &store.TrialRecord{Run: id, Name: "t-run", Status: store.Succeeded}); err != nil {
		t.Fatal(err)
	}
	line := `{"name":"loss","value":0.75,"step":1}` + "\n"
	if err := runs.Blob.Put(ctx, store.TrialKey(id, "t-run", "metrics.jsonl"), strings.NewReader(line), int64(len(line))); err != nil {
		t.Fatal(err)
	}
	s, err := New(runs, Options{LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	page := func(query string) string {
		w := get(t, s, "GET", "/runs/"+id+"/stats?by=algo&metric=loss"+query)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", query, w.Code, w.Body)
		}
		return w.Body.String()
	}
	body := page("&dir=min")
	if !strings.Contains(body, "1: trial failed, ranked worst by compare (t-bad)") {
		t.Errorf("the curves do not list the failed trial as ranked worst:\n%s", body)
	}
	body = page("&dir=min&failed=drop&incomplete=error")
	if !strings.Contains(body, "--lower-is-better --failed drop --incomplete error") {
		t.Errorf("the command does not carry the policy:\n%s", body)
	}
	if body = page("&failed=worst"); !strings.Contains(body, "failed trials can rank worst only when the metric&#39;s direction is known") {
		t.Errorf("worst without a direction is not refused:\n%s", body)
	}
}
