package results

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// Point is one line of a trial's metrics.jsonl as the curves read it.
type Point struct {
	Metric string
	// Step is the line's step, or, when it has none, its index among the trial's lines of this
	// metric (0, 1, 2, ... in the order logged).
	Step  int64
	Value float64
	// Time is the seconds since the trial's first line that carries a timestamp (of any
	// metric), or NaN when this line has none.
	Time float64
}

// Curve is a trial's row of the results table and every point it logged, in logged order.
type Curve struct {
	Row    Row
	Points []Point
}

// LoadCurves reads the results of a run with every trial's metrics.jsonl, in plan order.
func LoadCurves(ctx context.Context, runs store.Runs, run string) ([]Curve, error) {
	rows, err := Load(ctx, runs, run)
	if err != nil {
		return nil, err
	}
	out := make([]Curve, len(rows))
	for i, r := range rows {
		pts, err := TrialPoints(ctx, runs.Blob, run, r.Trial)
		if err != nil {
			return nil, fmt.Errorf("curves of %s: trial %s: %w", run, r.Trial, err)
		}
		out[i] = Curve{Row: r, Points: pts}
	}
	return out, nil
}

// TrialPoints reads one trial's metrics.jsonl; a trial without one logged nothing.
func TrialPoints(ctx context.Context, b store.Blob, run, trial string) ([]Point, error) {
	data, err := store.ReadAll(ctx, b, store.TrialKey(run, trial, "metrics.jsonl"))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ms, err := track.ReadMetrics(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return points(ms), nil
}

func points(ms []track.Metric) []Point {
	t0 := int64(math.MaxInt64)
	for _, m := range ms {
		if m.TS != 0 {
			t0 = min(t0, m.TS)
		}
	}
	next := map[string]int64{}
	out := make([]Point, len(ms))
	for i, m := range ms {
		p := Point{Metric: m.Name, Value: m.Value, Time: math.NaN()}
		if m.Step != nil {
			p.Step = *m.Step
		} else {
			p.Step = next[m.Name]
		}
		next[m.Name]++
		if m.TS != 0 {
			p.Time = float64(m.TS-t0) / 1000
		}
		out[i] = p
	}
	return out
}

// CurvesTable lays curves out in long format, one row per logged point: trial, status, each
// param, seed, metric, step, value, time. Only the metrics in keep are written (all when keep is
// empty).
func CurvesTable(cs []Curve, keep []string) *Table {
	l := planColumns(rows(cs))
	t := &Table{Columns: append(l.head(), "metric", "step", "value", "time")}
	for _, c := range cs {
		head := l.headCells(c.Row)
		for _, p := range c.Points {
			if len(keep) > 0 && !slices.Contains(keep, p.Metric) {
				continue
			}
			tm := ""
			if !math.IsNaN(p.Time) {
				tm = strconv.FormatFloat(p.Time, 'g', -1, 64)
			}
			t.Rows = append(t.Rows, append(slices.Clone(head), p.Metric, strconv.FormatInt(p.Step, 10),
				strconv.FormatFloat(p.Value, 'g', -1, 64), tm))
		}
	}
	return t
}

// CurveRecords is CurvesTable as JSON objects with typed values (time is null when the line had
// no timestamp; NaN and infinite values are the strings of metrics.jsonl).
func CurveRecords(cs []Curve, keep []string) []map[string]any {
	l := planColumns(rows(cs))
	out := []map[string]any{}
	for _, c := range cs {
		for _, p := range c.Points {
			if len(keep) > 0 && !slices.Contains(keep, p.Metric) {
				continue
			}
			rec := l.headRecord(c.Row)
			rec["metric"], rec["step"], rec["value"], rec["time"] = p.Metric, p.Step, record.EncodeFloat(p.Value), nil
			if !math.IsNaN(p.Time) {
				rec["time"] = p.Time
			}
			out = append(out, rec)
		}
	}
	return out
}

func rows(cs []Curve) []Row {
	out := make([]Row, len(cs))
	for i, c := range cs {
		out[i] = c.Row
	}
	return out
}
