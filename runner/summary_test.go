//go:build unix

package runner_test

import (
	"context"
	"math"
	"testing"

	"github.com/jikken-dev/jikken/store"
)

// TestRunEndsWithAFreshSummary: a run that ends leaves the summary of its trials' final results
// that its state names, so that readers open one file instead of three per trial.
func TestRunEndsWithAFreshSummary(t *testing.T) {
	spec := `[
	  {"name":"svc","cmd":"sleep 60","service":true},
	  {"name":"a","cmd":"echo '{\"name\":\"loss\",\"value\":2}' >> $JIKKEN_OUTPUT_DIR/metrics.jsonl; echo '{\"acc\":\"NaN\",\"eval\":{\"f1\":0.5}}' > $JIKKEN_OUTPUT_DIR/result.json","depends":["svc"],"params":{"lr":0.1}},
	  {"name":"b","cmd":"exit 3"}
	]`
	_, runs, _ := run(t, spec, nil)
	ids, err := runs.RunIDs(context.Background())
	if err != nil || len(ids) != 1 {
		t.Fatalf("runs %v, %v", ids, err)
	}
	s, err := runs.Summary(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		t.Fatal("the ended run has no fresh summary")
	}
	if len(s.Trials) != 3 || s.Trials[0].Name != "svc" || s.Trials[1].Name != "a" || s.Trials[2].Name != "b" {
		t.Fatalf("summary trials %+v, want svc, a and b", s.Trials)
	}
	a, b := s.Trials[1], s.Trials[2]
	if a.Status != store.Succeeded || a.Params["lr"] != 0.1 || a.Metrics["loss"] != 2 || a.Metrics["eval.f1"] != 0.5 || !math.IsNaN(a.Metrics["acc"]) {
		t.Errorf("trial a in the summary: %+v", a)
	}
	if b.Status != store.Failed || len(b.Metrics) != 0 {
		t.Errorf("trial b in the summary: %+v", b)
	}
}
