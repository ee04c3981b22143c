package analysiscmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// curvesRun stores a run of 3 algorithms x 8 seeds whose trials log "best" at uneven steps.
// Among them: failed trials that logged finite values before failing, trials whose last value
// is NaN (compare ranks them worst) and a killed trial.
func curvesRun(t *testing.T) (store.Runs, string) {
	t.Helper()
	ctx := context.Background()
	blob, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	const run = "20261128-150000-curves"
	var trials []experiment.Trial
	for _, algo := range []string{"a", "b", "c"} {
		for s := range 8 {
			seed := int64(s)
			trials = append(trials, experiment.Trial{Name: fmt.Sprintf("%s-%d", algo, s), Index: len(trials),
				Cmd: experiment.Command{Shell: "x"}, Params: map[string]any{"algo": algo}, Seed: &seed})
		}
	}
	if err := runs.CreateManifest(ctx, &store.Manifest{RunID: run, Experiment: "curves", Created: time.Now(), Trials: trials}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i, tr := range trials {
		status := store.Succeeded
		switch i {
		case 2, 13:
			status = store.Failed
		case 20:
			status = store.Killed
		}
		if err := runs.WriteTrial(ctx, &store.TrialRecord{Run: run, Name: tr.Name, Index: i, Status: status, Params: tr.Params, Seed: tr.Seed}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		v, steps := 100*rng.Float64(), 3+rng.IntN(6)
		for s := range steps {
			v *= 0.4 + rng.Float64()/2
			if (i == 5 || i == 17) && s == steps-1 {
				v = math.NaN()
			}
			b, _ := json.Marshal(track.Metric{Name: "best", Value: v, Step: ptr(int64(rng.IntN(3) + 3*s))})
			buf.Write(append(b, '\n'))
		}
		put(t, blob, store.TrialKey(run, tr.Name, "metrics.jsonl"), buf.Bytes())
	}
	return runs, run
}

func ptr[T any](v T) *T { return &v }

func put(t *testing.T, b store.Blob, key string, data []byte) {
	t.Helper()
	if err := b.Put(context.Background(), key, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
}

// TestCurvesEndOnCompareMedians checks one failure policy: under every policy, each group's last
// curve point is the median 'jikken compare' reports for it, failed trials and trials ending on
// NaN being left out of both (and listed), not drawn at their last finite value.
func TestCurvesEndOnCompareMedians(t *testing.T) {
	ctx := context.Background()
	runs, run := curvesRun(t)
	table, err := results.LoadTable(ctx, runs, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []report.Options{
		{Direction: report.LowerIsBetter},
		{Direction: report.LowerIsBetter, Failed: report.FailedDrop},
		{},
		{Direction: report.HigherIsBetter, PairBy: "seed"},
		{Direction: report.LowerIsBetter, Failed: report.FailedDrop, PairBy: "seed"},
	} {
		o.By, o.Metric = "algo", "best"
		name := fmt.Sprintf("%v/failed=%q/pair-by=%q", o.Direction, o.Failed, o.PairBy)
		c, err := report.Compare(table, o)
		if err != nil {
			t.Fatalf("%s: compare: %v", name, err)
		}
		cs, err := buildCurves(ctx, runs, run, table, o, curveOptions{x: "step"})
		if err != nil {
			t.Fatalf("%s: curves: %v", name, err)
		}
		if len(cs.Groups) != len(c.Groups) {
			t.Fatalf("%s: %d curves, %d groups compared", name, len(cs.Groups), len(c.Groups))
		}
		for i, g := range cs.Groups {
			last := g.Median[len(g.Median)-1]
			if g.Name != c.Groups[i].Name || last != c.Groups[i].Median {
				t.Errorf("%s: group %s ends its curve at %v; compare's median of %s is %v", name, g.Name, last, c.Groups[i].Name, c.Groups[i].Median)
			}
		}
		// Everything compare does not describe with a value is listed, with why.
		listed := map[string]string{}
		for _, l := range cs.LeftOut {
			listed[l.Trial] = l.Reason
		}
		for trial, want := range map[string]string{"a-2": "trial failed", "a-5": "best is NaN", "c-4": "trial killed"} {
			if !strings.Contains(listed[trial], want) {
				t.Errorf("%s: trial %s listed as left out with %q; want %q", name, trial, listed[trial], want)
			}
		}
		w := strings.Join(cs.Warnings(), "\n")
		if o.Failed != report.FailedDrop && o.Direction != report.DirectionUnknown && !strings.Contains(w, "ranked worst by compare (a-2") {
			t.Errorf("%s: warnings do not say the failures are ranked worst:\n%s", name, w)
		}
	}
}
