package analysiscmd

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

// errNoCurve says no trial logged the metric over steps (it may come only from result.json).
var errNoCurve = errors.New("no succeeded trial logged it to metrics.jsonl")

// curveOptions say how curves are laid out: over steps or seconds, on which grid.
type curveOptions struct {
	x    string // "step" or "time"
	grid int    // 0: every x logged; else that many evenly spaced points
}

func (o curveOptions) check() error {
	if o.x != "step" && o.x != "time" {
		return fmt.Errorf("--x %q: use step or time", o.x)
	}
	if o.grid < 0 || o.grid == 1 {
		return fmt.Errorf("--grid %d: ask for at least 2 points, or 0 for every step logged", o.grid)
	}
	return nil
}

// buildCurves reads every succeeded trial's metrics.jsonl and reduces the values of metric, per
// group of column by, to convergence curves on a common grid (report.BuildCurves has the rule).
func buildCurves(ctx context.Context, runs store.Runs, id string, t *results.Table, by, metric string, co curveOptions) (*report.Curves, error) {
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
		pts, err := results.TrialPoints(ctx, runs.Blob, id, row[trialCol])
		if err != nil {
			return nil, fmt.Errorf("trial %s: %w", row[trialCol], err)
		}
		var s report.Series
		for _, p := range pts {
			if p.Metric != metric {
				continue
			}
			x := float64(p.Step)
			if co.x == "time" {
				x = p.Time
			}
			if !math.IsNaN(x) {
				s.X, s.Values = append(s.X, x), append(s.Values, p.Value)
			}
		}
		groups[g] = append(groups[g], s)
	}
	c, err := report.BuildCurves(names, groups, co.grid)
	if err != nil {
		return nil, err
	}
	if len(c.Groups) == 0 {
		if co.x == "time" {
			return nil, fmt.Errorf("metric %q of %s: %w with a timestamp (ts); --x time needs them", metric, id, errNoCurve)
		}
		return nil, fmt.Errorf("metric %q of %s: %w; check the name with 'jikken results %s'", metric, id, errNoCurve, id)
	}
	c.Metric, c.By, c.Time = metric, by, co.x == "time"
	return c, nil
}
