package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/internal/safecsv"
	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/stats"
)

// Series is one trial's values of a metric over x (steps, or seconds), in the order logged.
type Series struct {
	X, Values []float64
}

// CurveGroup is one group's convergence curve on the common grid.
type CurveGroup struct {
	Name string
	// X is the grid; Median, Q1 and Q3 (R's type-7 quantiles) are taken at each point over the N
	// trials that have logged at or before it.
	X, Median, Q1, Q3 []float64
	N                 []int
	// Trials is the number of trials in the group.
	Trials int
}

// Curves are the convergence curves of every group on one grid.
type Curves struct {
	Metric, By string
	// Time says that x is seconds since each trial's first timestamped line, not steps.
	Time   bool
	Groups []CurveGroup
	// FirstStart, LastStart, FirstEnd and LastEnd are the smallest and largest first and last x
	// over all trials.
	FirstStart, LastStart, FirstEnd, LastEnd float64
	// LeftOut are the trials the failure policy gives no value to draw (see Select), failures
	// ranked worst by compare included.
	LeftOut []LeftOut
	// OffFinal counts the trials whose curve ends on another value than the final one of the
	// results table (result.json said otherwise): there the last point need not be compare's
	// median.
	OffFinal int
}

// LeftOut is a trial the curves do not draw, and why.
type LeftOut struct {
	Trial  string `json:"trial"`
	Reason string `json:"reason"`
	// Worst says that compare ranks it worst (a failure under --failed worst).
	Worst bool `json:"ranked_worst,omitempty"`
}

// LeftOutOf lists the rows a selection gives no value, worst ones first, each row once.
func LeftOutOf(s *Selection) []LeftOut {
	var out []LeftOut
	seen := map[int]bool{}
	for _, l := range []struct {
		rows  []Dropped
		worst bool
	}{{s.Worst, true}, {s.Dropped, false}} {
		for _, r := range l.rows {
			if !seen[r.Row] {
				seen[r.Row] = true
				out = append(out, LeftOut{Trial: r.Trial, Reason: r.Reason, Worst: l.worst})
			}
		}
	}
	return out
}

// BuildCurves turns each group's trials into a convergence curve, by the rule docs/analysis.md
// states for R users:
//
//   - a trial's series is a step function: at x its value is that of its last observation at or
//     before x (the last one logged when an x was logged twice), carried forward past its last
//     observation to the end of the grid; before its first observation it has no value and does
//     not count;
//   - the grid is the union of every x any trial logged (all groups share it), or, when points
//     is 2 or more, R's seq(lo, hi, length.out = points) from the smallest first x to the largest
//     last x;
//   - at each grid point, the median and quartiles over the group's trials that have a value.
//
// Non-finite values are not observations. Groups without any observation are left out.
func BuildCurves(names []string, groups [][]Series, points int) (*Curves, error) {
	if points == 1 || points < 0 {
		return nil, fmt.Errorf("a grid of %d point(s); ask for at least 2, or 0 for every step logged", points)
	}
	c := &Curves{FirstStart: math.Inf(1), LastStart: math.Inf(-1), FirstEnd: math.Inf(1), LastEnd: math.Inf(-1)}
	steps := make([][]stepFn, len(groups))
	var union []float64
	for g, trials := range groups {
		for _, s := range trials {
			f := newStepFn(s)
			if len(f.x) == 0 {
				continue
			}
			steps[g] = append(steps[g], f)
			union = append(union, f.x...)
			c.FirstStart, c.LastStart = min(c.FirstStart, f.x[0]), max(c.LastStart, f.x[0])
			c.FirstEnd, c.LastEnd = min(c.FirstEnd, f.x[len(f.x)-1]), max(c.LastEnd, f.x[len(f.x)-1])
		}
	}
	if len(union) == 0 {
		return c, nil
	}
	slices.Sort(union)
	grid := slices.Compact(union)
	if points >= 2 {
		grid = seq(c.FirstStart, c.LastEnd, points)
	}
	for g, fs := range steps {
		if len(fs) == 0 {
			continue
		}
		cg := CurveGroup{Name: names[g], Trials: len(fs)}
		at := make([]int, len(fs)) // per trial: index of its last observation at or before x
		for i := range at {
			at[i] = -1
		}
		vs := make([]float64, 0, len(fs))
		for _, x := range grid {
			vs = vs[:0]
			for i, f := range fs {
				for at[i]+1 < len(f.x) && f.x[at[i]+1] <= x {
					at[i]++
				}
				if at[i] >= 0 {
					vs = append(vs, f.v[at[i]])
				}
			}
			if len(vs) == 0 {
				continue
			}
			slices.Sort(vs)
			q1, med, q3 := stats.SortedQuartiles(vs)
			cg.X = append(cg.X, x)
			cg.N = append(cg.N, len(vs))
			cg.Median, cg.Q1, cg.Q3 = append(cg.Median, med), append(cg.Q1, q1), append(cg.Q3, q3)
		}
		c.Groups = append(c.Groups, cg)
	}
	return c, nil
}

// stepFn is a trial's observations sorted by x, one per x.
type stepFn struct{ x, v []float64 }

func newStepFn(s Series) stepFn {
	type obs struct {
		x, v float64
		i    int
	}
	var os []obs
	for i, x := range s.X {
		if v := s.Values[i]; !math.IsNaN(v) && !math.IsInf(v, 0) && !math.IsNaN(x) {
			os = append(os, obs{x, v, i})
		}
	}
	// By x, and for an x logged twice the last logged last, so it wins below.
	slices.SortFunc(os, func(a, b obs) int {
		if c := cmp.Compare(a.x, b.x); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	var f stepFn
	for _, o := range os {
		if n := len(f.x); n > 0 && f.x[n-1] == o.x {
			f.v[n-1] = o.v
			continue
		}
		f.x, f.v = append(f.x, o.x), append(f.v, o.v)
	}
	return f
}

// seq is R's seq(from, to, length.out = n) for n >= 2, with R's arithmetic: the ends exactly,
// from + i * ((to - from) / (n - 1)) between them.
func seq(from, to float64, n int) []float64 {
	if from == to {
		return []float64{from}
	}
	out := make([]float64, n)
	by := (to - from) / float64(n-1)
	for i := range out {
		out[i] = from + float64(i)*by
	}
	out[n-1] = to
	return out
}

// Warnings say which trials the curves leave out, and where they rest on carried-forward values
// or on fewer trials.
func (c *Curves) Warnings() []string {
	var w []string
	if len(c.LeftOut) > 0 {
		w = append(w, "the curves leave out "+leftOutSummary(c.LeftOut))
	}
	if c.OffFinal > 0 {
		w = append(w, fmt.Sprintf("%d trial(s) end their curve on another value than their final %s (result.json gives another): the last point may differ from compare's median", c.OffFinal, c.Metric))
	}
	if len(c.Groups) == 0 {
		return w
	}
	unit, suffix := "steps", ""
	if c.Time {
		unit, suffix = "times", " s"
	}
	if c.FirstEnd != c.LastEnd {
		w = append(w, fmt.Sprintf("trials end at different %s (from %g%s to %g%s): after its last observation a trial's last value is carried forward to the end",
			unit, c.FirstEnd, suffix, c.LastEnd, suffix))
	}
	if c.FirstStart != c.LastStart {
		w = append(w, fmt.Sprintf("trials start at different %s (from %g%s to %g%s): before its first observation a trial does not count, so fewer trials make the early points",
			unit, c.FirstStart, suffix, c.LastStart, suffix))
	}
	return w
}

// leftOutSummary counts the trials left out by reason, in order of first appearance, naming
// up to 3 of each: "24 trial(s): trial failed, ranked worst by compare (opt-de-1, ...); ...".
func leftOutSummary(l []LeftOut) string {
	type reason struct {
		text   string
		trials []string
	}
	var rs []*reason
	index := map[string]*reason{}
	for _, x := range l {
		text := x.Reason
		if strings.HasPrefix(text, "block ") {
			text = "in an incomplete block"
		}
		if x.Worst {
			text += ", ranked worst by compare"
		}
		r := index[text]
		if r == nil {
			r = &reason{text: text}
			index[text] = r
			rs = append(rs, r)
		}
		r.trials = append(r.trials, x.Trial)
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		names := r.trials[:min(3, len(r.trials))]
		more := ""
		if len(r.trials) > 3 {
			more = ", ..."
		}
		parts[i] = fmt.Sprintf("%d: %s (%s%s)", len(r.trials), r.text, strings.Join(names, ", "), more)
	}
	return fmt.Sprintf("%d trial(s) without a value to draw: %s", len(l), strings.Join(parts, "; "))
}

// Bands are the curves as the chart draws them.
func (c *Curves) Bands() []chart.Band {
	out := make([]chart.Band, len(c.Groups))
	for i, g := range c.Groups {
		out[i] = chart.Band{Name: g.Name, Steps: g.X, Median: g.Median, Q1: g.Q1, Q3: g.Q3}
	}
	return out
}

// Plot draws the curves: per group the median line over the inter-quartile band.
func (c *Curves) Plot(s chart.Style) (*chart.Figure, error) {
	over, x := "steps", "step"
	if c.Time {
		over, x = "time", "time (s)"
	}
	return chart.Curves(s, fmt.Sprintf("%s over %s by %s (median and inter-quartile band)", c.Metric, over, c.By), x, c.Metric, c.Bands())
}

// WriteCSV writes the curves in long format, one row per group and grid point: group, x (step or
// time), n (trials counted), median, q1, q3, at full precision.
func (c *Curves) WriteCSV(w io.Writer) error {
	cw := safecsv.NewWriter(w)
	x := "step"
	if c.Time {
		x = "time"
	}
	_ = cw.Write([]string{c.By, x, "n", "median", "q1", "q3"})
	for _, g := range c.Groups {
		for i := range g.X {
			_ = cw.Write([]string{g.Name, full(g.X[i]), strconv.Itoa(g.N[i]), full(g.Median[i]), full(g.Q1[i]), full(g.Q3[i])})
		}
	}
	cw.Flush()
	return cw.Error()
}

// MarshalJSON writes the curves as one document: metric, by, x ("step" or "time"), the warnings
// and per group its points.
func (c *Curves) MarshalJSON() ([]byte, error) {
	type point struct {
		X      float64 `json:"x"`
		N      int     `json:"n"`
		Median float64 `json:"median"`
		Q1     float64 `json:"q1"`
		Q3     float64 `json:"q3"`
	}
	type group struct {
		Name   string  `json:"name"`
		Trials int     `json:"trials"`
		Points []point `json:"points"`
	}
	doc := struct {
		Metric   string    `json:"metric"`
		By       string    `json:"by"`
		X        string    `json:"x"`
		Warnings []string  `json:"warnings"`
		LeftOut  []LeftOut `json:"left_out"`
		Groups   []group   `json:"groups"`
	}{Metric: c.Metric, By: c.By, X: "step", Warnings: c.Warnings(), LeftOut: c.LeftOut, Groups: []group{}}
	if doc.LeftOut == nil {
		doc.LeftOut = []LeftOut{}
	}
	if c.Time {
		doc.X = "time"
	}
	if doc.Warnings == nil {
		doc.Warnings = []string{}
	}
	for _, g := range c.Groups {
		gj := group{Name: g.Name, Trials: g.Trials, Points: []point{}}
		for i := range g.X {
			gj.Points = append(gj.Points, point{g.X[i], g.N[i], g.Median[i], g.Q1[i], g.Q3[i]})
		}
		doc.Groups = append(doc.Groups, gj)
	}
	return json.Marshal(doc)
}
