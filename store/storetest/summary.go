package storetest

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/store"
)

// RunSummary checks that a run's summary round-trips through b (NaN and infinite metrics
// included) and is returned only while the run's state names the time it was written for.
// b must not hold run 20261128-120000-summary-0001.
func RunSummary(t *testing.T, b store.Blob) {
	ctx := context.Background()
	runs := store.Runs{Blob: b}
	const run = "20261128-120000-summary-0001"
	fresh := func() *store.Summary {
		t.Helper()
		s, err := runs.Summary(ctx, run)
		if err != nil {
			t.Fatalf("Summary: %v", err)
		}
		return s
	}
	end := time.Date(2026, 11, 28, 12, 0, 5, 123456789, time.UTC)
	seed := int64(7)
	want := &store.Summary{Finished: end, Trials: []store.SummaryTrial{
		{Name: "a", Index: 0, Status: store.Succeeded, Params: map[string]any{"lr": 0.1, "algo": "名前"}, Seed: &seed,
			Metrics: store.Metrics{"loss": 0.25, "nan": math.NaN(), "inf": math.Inf(1), "ninf": math.Inf(-1), "eval.acc": 1e-300}},
		{Name: "b c", Index: 1, Status: store.Failed},
	}}
	if s := fresh(); s != nil {
		t.Fatalf("Summary of a run with nothing stored = %+v, want nil", s)
	}
	if err := runs.WriteSummary(ctx, run, want); err != nil {
		t.Fatal(err)
	}
	if s := fresh(); s != nil {
		t.Fatalf("Summary with no state = %+v, want nil", s)
	}
	running := &store.RunState{Status: store.Running, Started: end.Add(-time.Hour)}
	if err := runs.WriteState(ctx, run, running); err != nil {
		t.Fatal(err)
	}
	if s := fresh(); s != nil {
		t.Fatalf("Summary of a running run = %+v, want nil", s)
	}
	ended := &store.RunState{Status: store.Succeeded, Started: end.Add(-time.Hour), Finished: &end}
	if err := runs.WriteState(ctx, run, ended); err != nil {
		t.Fatal(err)
	}
	got := fresh()
	if got == nil {
		t.Fatal("Summary of the ended run = nil, want the summary written for its state")
	}
	nan := got.Trials[0].Metrics["nan"]
	if !math.IsNaN(nan) {
		t.Errorf("metric nan = %v, want NaN", nan)
	}
	delete(got.Trials[0].Metrics, "nan")
	delete(want.Trials[0].Metrics, "nan")
	if !got.Finished.Equal(want.Finished) || !reflect.DeepEqual(got.Trials, want.Trials) {
		t.Errorf("Summary = %+v\nwant %+v", got, want)
	}
	// A resume or a kill ends the run again at another time: the old summary no longer holds.
	later := end.Add(time.Minute)
	ended.Finished = &later
	if err := runs.WriteState(ctx, run, ended); err != nil {
		t.Fatal(err)
	}
	if s := fresh(); s != nil {
		t.Fatalf("Summary after the run ended again = %+v, want nil", s)
	}
}
