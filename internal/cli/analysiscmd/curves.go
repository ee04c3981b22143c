package analysiscmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

// errNoCurve says no trial logged the metric over steps (it may come only from result.json).
var errNoCurve = errors.New("no trial with a finite final value logged it to metrics.jsonl")

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

// buildCurves reduces the values of a metric, per group of column by, to convergence curves on
// a common grid, drawing the trials compare describes under the same policy (report.CurvesFor).
func buildCurves(ctx context.Context, runs store.Runs, id string, t *results.Table, policy report.Options, co curveOptions) (*report.Curves, error) {
	if t.Col(policy.By) < 0 {
		return nil, fmt.Errorf("no column %q (--by) in the results of %s; it has columns %v", policy.By, id, t.Columns)
	}
	trial := t.Col("trial")
	if trial < 0 {
		return nil, fmt.Errorf("the results of %s have no trial column", id)
	}
	noCurve := fmt.Errorf("metric %q of %s: %w; check the name with 'jikken results %s'", policy.Metric, id, errNoCurve, id)
	if t.Col(policy.Metric) < 0 {
		return nil, noCurve
	}
	c, err := report.CurvesFor(t, policy, co.x, co.grid, func(rows []int) ([][]results.Point, error) {
		out := make([][]results.Point, len(rows))
		for i, r := range rows {
			pts, err := results.TrialPoints(ctx, runs.Blob, id, t.Rows[r][trial])
			if err != nil {
				return nil, fmt.Errorf("trial %s: %w", t.Rows[r][trial], err)
			}
			out[i] = pts
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("curves of %s: %w", id, err)
	}
	if len(c.Groups) == 0 {
		if co.x == "time" {
			return nil, fmt.Errorf("metric %q of %s: %w with a timestamp (ts); --x time needs them", policy.Metric, id, errNoCurve)
		}
		return nil, noCurve
	}
	return c, nil
}
