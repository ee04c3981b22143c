package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/results"
)

// Selection is what the failure policy (Options.Failed, Options.Incomplete, the direction) makes
// of each row of a table for one metric. Compare, the curves, the plots, the report and the
// browser all take it from here, so a trial counts the same way in each.
type Selection struct {
	// Values are the 0-based rows whose finite values the groups' medians describe, in order.
	Values []int
	// Worst are the failures the tests rank worst (FailedWorst); they have no value to draw.
	Worst []Dropped
	// Dropped are the rows left out, with why (as Comparison.Dropped).
	Dropped []Dropped
	// DroppedBlocks are the incomplete blocks of a paired design left out.
	DroppedBlocks []DroppedBlock
}

// Select applies the failure policy of opts to t's rows for opts.Metric grouped by opts.By,
// as Compare does, without refusing what only a test cannot take (one group, a group without a
// value, too few blocks).
func Select(t *results.Table, opts Options) (*Selection, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	d, err := extract(t, opts, false)
	if err != nil {
		return nil, err
	}
	out := map[int]bool{}
	for _, l := range [][]Dropped{d.dropped, d.worst} {
		for _, r := range l {
			out[r.Row-1] = true
		}
	}
	s := &Selection{Worst: d.worst, Dropped: d.dropped, DroppedBlocks: d.droppedBlocks}
	for r := range t.Rows {
		if !out[r] {
			s.Values = append(s.Values, r)
		}
	}
	return s, nil
}

// PointsOf returns the points each of rows (0-based rows of the table) logged, in that order:
// for a run, results.TrialPoints of each row's trial.
type PointsOf func(rows []int) ([][]results.Point, error)

// CurvesFor builds the convergence curves of opts.Metric per group of opts.By from the trials
// Select gives a value, so each group's last point is compare's median under the same policy:
// a failed trial, one whose final value is NaN or infinite (ranked worst by compare) or one in a
// dropped block is listed in LeftOut, not drawn at its last finite value. x is "step" or "time";
// grid as for BuildCurves. The curves have no group when no such trial logged the metric.
func CurvesFor(t *results.Table, opts Options, x string, grid int, points PointsOf) (*Curves, error) {
	trial, by, metric := t.Col("trial"), t.Col(opts.By), t.Col(opts.Metric)
	if trial < 0 || by < 0 || metric < 0 {
		return nil, fmt.Errorf("curves of %s by %s need the columns trial, %s and %s; the table has %s", opts.Metric, opts.By, opts.By, opts.Metric, strings.Join(t.Columns, ", "))
	}
	sel, err := Select(t, opts)
	if err != nil {
		return nil, err
	}
	pts, err := points(sel.Values)
	if err != nil {
		return nil, err
	}
	var names []string
	var groups [][]Series
	index := map[string]int{}
	var unlogged []LeftOut
	offFinal := 0
	for i, r := range sel.Values {
		row := t.Rows[r]
		g, ok := index[row[by]]
		if !ok {
			g = len(names)
			index[row[by]] = g
			names = append(names, row[by])
			groups = append(groups, nil)
		}
		s, last := seriesOf(pts[i], opts.Metric, x)
		if math.IsNaN(last) {
			// Its final value came from result.json alone: compare has it, no curve can.
			unlogged = append(unlogged, LeftOut{Trial: row[trial], Reason: "no point in metrics.jsonl"})
		} else if final, err := strconv.ParseFloat(row[metric], 64); err == nil && last != final {
			offFinal++
		}
		groups[g] = append(groups[g], s)
	}
	c, err := BuildCurves(names, groups, grid)
	if err != nil {
		return nil, err
	}
	c.Metric, c.By, c.Time = opts.Metric, opts.By, x == "time"
	c.LeftOut, c.OffFinal = append(LeftOutOf(sel), unlogged...), offFinal
	return c, nil
}

// seriesOf picks a trial's points of metric over x ("step" or "time"), and the value its curve
// ends on: its finite value at the largest x, the last logged there (NaN when it has none).
func seriesOf(pts []results.Point, metric, x string) (Series, float64) {
	var s Series
	last, lastX := math.NaN(), math.Inf(-1)
	for _, p := range pts {
		if p.Metric != metric {
			continue
		}
		px := float64(p.Step)
		if x == "time" {
			px = p.Time
		}
		if math.IsNaN(px) {
			continue
		}
		s.X, s.Values = append(s.X, px), append(s.Values, p.Value)
		if !math.IsNaN(p.Value) && !math.IsInf(p.Value, 0) && px >= lastX {
			last, lastX = p.Value, px
		}
	}
	return s, last
}
