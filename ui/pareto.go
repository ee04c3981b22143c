package ui

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/runner/plan"
	"github.com/jikken-dev/jikken/search"
	"github.com/jikken-dev/jikken/store"
)

// ParetoPlot is a search of several objectives as its run page draws it: the trials that
// completed, on the first two objectives, and its Pareto front as a table. The front is
// plan.Best's, the one 'jikken results' prints.
type ParetoPlot struct {
	// Objectives are every objective of the search; the plot's axes are the first two.
	Objectives []ParetoAxis `json:"objectives"`
	X          ParetoAxis   `json:"x"`
	Y          ParetoAxis   `json:"y"`
	// Dots are the completed trials with a finite value of both axes' metrics, in number
	// order, placed in the plot's box (frontW x frontH).
	Dots []ParetoDot `json:"dots"`
	// Step is the front as a staircase, SVG polyline points (two objectives only: with more,
	// the front's projection on two of them is not a staircase).
	Step string `json:"step_line,omitempty"`
	// Front is the front's trials, in number order.
	Front []FrontRow `json:"front"`
	// Params are the params the front's trials have, sorted: the table's columns.
	Params []string `json:"params"`
	// Infeasible is true when no trial met the constraints: the front is of the trials that
	// violate them least.
	Infeasible bool `json:"infeasible,omitempty"`
	// Breaking counts the dots of trials that break a constraint.
	Breaking int `json:"breaking"`
	// Completed counts the completed trials: those without a finite value of both axes'
	// metrics are in the table only.
	Completed int `json:"completed"`
}

// Better says where the plot's better trials lie: the corner both axes' directions point to.
func (p *ParetoPlot) Better() string {
	v, h := "lower", "left"
	if p.Y.Max {
		v = "upper"
	}
	if p.X.Max {
		h = "right"
	}
	return v + " " + h
}

// ParetoAxis is an objective and, on an axis, the range its dots span.
type ParetoAxis struct {
	Metric string  `json:"metric"`
	Max    bool    `json:"maximize"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
}

// Label is how an objective is named on the page: its metric and direction.
func (a ParetoAxis) Label() string {
	if a.Max {
		return a.Metric + " (max)"
	}
	return a.Metric + " (min)"
}

// ParetoDot is one completed trial in the plot.
type ParetoDot struct {
	Trial    string  `json:"trial"`
	VX       float64 `json:"x_value"`
	VY       float64 `json:"y_value"`
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
	Front    bool    `json:"front"`
	Feasible bool    `json:"feasible"`
}

// Cross is the SVG path of the cross that marks an infeasible trial.
func (d ParetoDot) Cross() string {
	const r = 3.5
	return fmt.Sprintf("M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f", d.X-r, d.Y-r, d.X+r, d.Y+r, d.X-r, d.Y+r, d.X+r, d.Y-r)
}

// FrontRow is a trial of the front: its params as the trials table shows them and its value of
// each objective.
type FrontRow struct {
	Trial  string            `json:"trial"`
	Number int               `json:"number"`
	Params map[string]string `json:"params"`
	Values []number          `json:"values"`
}

// number is a value JSON writes as metrics.jsonl does, NaN and infinities as the strings
// "NaN", "Infinity" and "-Infinity" (JSON has no word for them, and one such value would void
// the whole answer), and the page as fmtMetric does.
type number float64

func (n number) MarshalJSON() ([]byte, error) { return record.EncodeFloat(float64(n)), nil }

// UnmarshalJSON reads what MarshalJSON writes (a client of /api/runs/RUN).
func (n *number) UnmarshalJSON(b []byte) error {
	v, err := record.DecodeFloat(b)
	if err != nil {
		return err
	}
	*n = number(v)
	return nil
}

func (n number) String() string { return fmtMetric(float64(n)) }

// The front plot's box, in SVG units: margins for the ticks and the axes' names.
const (
	frontW, frontH        = 600.0, 380.0
	frontLeft, frontRight = 78.0, 16.0
	frontTop, frontBot    = 14.0, 50.0
)

// paretoPlot lays out the front of search s, from its trials' records (by name), when s has two
// objectives or more.
func paretoPlot(s *experiment.Search, recs map[string]*store.TrialRecord) *ParetoPlot {
	if len(s.Objectives) < 2 {
		return nil
	}
	hist := plan.History(s, recs)
	best := plan.Best(s, hist)
	axis := func(o search.Objective) ParetoAxis {
		return ParetoAxis{Metric: o.Metric, Max: o.Direction == search.Maximize}
	}
	p := &ParetoPlot{X: axis(s.Objectives[0]), Y: axis(s.Objectives[1]), Front: []FrontRow{}, Dots: []ParetoDot{}, Params: []string{}}
	for _, o := range s.Objectives {
		p.Objectives = append(p.Objectives, axis(o))
	}
	p.X.Low, p.X.High, p.Y.Low, p.Y.High = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	onFront := map[int]bool{}
	for _, n := range best {
		onFront[n] = true
	}
	params := map[string]bool{}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	for _, e := range hist {
		o := &e.Observation
		if o.State != search.Complete || !e.Status.Final() {
			continue
		}
		p.Completed++
		if onFront[e.Number] {
			row := FrontRow{Trial: e.Name, Number: e.Number, Params: map[string]string{}}
			for _, v := range o.Values[:len(s.Objectives)] {
				row.Values = append(row.Values, number(v))
			}
			for k, v := range o.Params {
				row.Params[k] = cell(v)
				params[k] = true
			}
			p.Front = append(p.Front, row)
			p.Infeasible = !o.Feasible()
		}
		if vx, vy := o.Values[0], o.Values[1]; finite(vx) && finite(vy) {
			p.Dots = append(p.Dots, ParetoDot{Trial: e.Name, VX: vx, VY: vy, Front: onFront[e.Number], Feasible: o.Feasible()})
			if !o.Feasible() {
				p.Breaking++
			}
			p.X.Low, p.X.High = min(p.X.Low, vx), max(p.X.High, vx)
			p.Y.Low, p.Y.High = min(p.Y.Low, vy), max(p.Y.High, vy)
		}
	}
	p.Params = slices.Sorted(maps.Keys(params))
	if len(p.Dots) == 0 {
		p.X.Low, p.X.High, p.Y.Low, p.Y.High = 0, 0, 0, 0 // JSON has no infinities
		return p
	}
	x := scale(p.X.Low, p.X.High, frontLeft, frontW-frontRight)
	y := scale(p.Y.Low, p.Y.High, frontH-frontBot, frontTop)
	var front []ParetoDot
	for i := range p.Dots {
		d := &p.Dots[i]
		d.X, d.Y = x(d.VX), y(d.VY)
		if d.Front {
			front = append(front, *d)
		}
	}
	if len(s.Objectives) == 2 && len(front) > 0 {
		p.Step = staircase(front, p.X.Max, p.Y.Max)
	}
	return p
}

// scale maps [lo, hi] onto [from, to]; a range of one value lands in the middle.
func scale(lo, hi, from, to float64) func(float64) float64 {
	if hi == lo {
		return func(float64) float64 { return (from + to) / 2 }
	}
	return func(v float64) float64 { return from + (v-lo)/(hi-lo)*(to-from) }
}

// staircase joins the points of a two-objective front by the edge of the region they dominate:
// sorted from the best of the first objective to its worst, each step keeps the second
// objective's value until the next point's first objective is reached.
func staircase(front []ParetoDot, maxX, maxY bool) string {
	better := func(a, b float64, max bool) int {
		if max {
			return cmp.Compare(b, a)
		}
		return cmp.Compare(a, b)
	}
	slices.SortFunc(front, func(a, b ParetoDot) int {
		if c := better(a.VX, b.VX, maxX); c != 0 {
			return c
		}
		return better(a.VY, b.VY, maxY)
	})
	var pts []string
	for i, d := range front {
		if i > 0 {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", d.X, front[i-1].Y))
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", d.X, d.Y))
	}
	return strings.Join(pts, " ")
}
