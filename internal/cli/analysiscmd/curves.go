package analysiscmd

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// errNoCurve says no trial logged the metric over steps (it may come only from result.json).
var errNoCurve = errors.New("no succeeded trial logged it to metrics.jsonl")

// curveBands reads every succeeded trial's metrics.jsonl and reduces the values of metric, per
// group of column by, to convergence bands. Lines without a step count as steps 0, 1, 2, ... in
// the order the trial logged them; NaN and infinite values are skipped.
func curveBands(ctx context.Context, runs store.Runs, id string, t *results.Table, by, metric string) ([]chart.Band, error) {
	trialCol, statusCol, byCol := t.Col("trial"), t.Col("status"), t.Col(by)
	if byCol < 0 {
		return nil, fmt.Errorf("no column %q (--by) in the results of %s; it has columns %v", by, id, t.Columns)
	}
	if trialCol < 0 {
		return nil, fmt.Errorf("the results of %s have no trial column", id)
	}
	var names []string
	var groups [][]report.Series
	index := map[string]int{}
	for _, row := range t.Rows {
		if statusCol >= 0 && row[statusCol] != string(store.Succeeded) {
			continue
		}
		g, ok := index[row[byCol]]
		if !ok {
			g = len(names)
			index[row[byCol]] = g
			names = append(names, row[byCol])
			groups = append(groups, nil)
		}
		s, err := trialSeries(ctx, runs.Blob, id, row[trialCol], metric)
		if err != nil {
			return nil, err
		}
		if len(s.Steps) > 0 {
			groups[g] = append(groups[g], s)
		}
	}
	bands := report.Bands(names, groups)
	if len(bands) == 0 {
		return nil, fmt.Errorf("metric %q of %s: %w; check the name with 'jikken results %s'", metric, id, errNoCurve, id)
	}
	return bands, nil
}

func trialSeries(ctx context.Context, b store.Blob, run, trial, metric string) (report.Series, error) {
	rc, err := b.Get(ctx, store.TrialKey(run, trial, "metrics.jsonl"))
	if errors.Is(err, store.ErrNotFound) {
		return report.Series{}, nil
	}
	if err != nil {
		return report.Series{}, fmt.Errorf("trial %s: %w", trial, err)
	}
	defer rc.Close()
	ms, err := track.ReadMetrics(rc)
	if err != nil {
		return report.Series{}, fmt.Errorf("trial %s: %w", trial, err)
	}
	var s report.Series
	n := 0
	for _, m := range ms {
		if m.Name != metric {
			continue
		}
		step := float64(n)
		if m.Step != nil {
			step = float64(*m.Step)
		}
		n++
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			continue
		}
		s.Steps = append(s.Steps, step)
		s.Values = append(s.Values, m.Value)
	}
	return s, nil
}
