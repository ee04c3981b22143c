package ui

import (
	"fmt"
	"math"
	"strings"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

// SearchPlot is a run's search as its page draws it: each trial's final value of the first
// objective, by trial number, and the best value so far as a line.
type SearchPlot struct {
	Name   string  `json:"name"`
	Metric string  `json:"metric"`
	Max    bool    `json:"maximize"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Trials int     `json:"trials"`
	// Dots are the trials with a value, in the plot's box (plotW x plotH); Best is the best-so-far
	// line as SVG polyline points.
	Dots []SearchDot `json:"dots"`
	Best string      `json:"best_line"`
}

// SearchDot is one trial in the plot.
type SearchDot struct {
	Trial  string  `json:"trial"`
	Value  float64 `json:"value"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Pruned bool    `json:"pruned"`
}

// The plot's box, in SVG units: a margin on the left for the axis labels.
const (
	plotW, plotH       = 600.0, 200.0
	plotLeft, plotPadY = 60.0, 10.0
)

// searchPlot lays out the history of search s from its trials' records (by name), up to the first
// number without one. Trials without a finite value of the objective are left out of the dots.
func searchPlot(s *experiment.Search, recs map[string]*store.TrialRecord) *SearchPlot {
	if len(s.Objectives) == 0 {
		return nil
	}
	obj := s.Objectives[0]
	p := &SearchPlot{Name: s.Name, Metric: obj.Metric, Max: obj.Direction.String() == "max", Low: math.Inf(1), High: math.Inf(-1)}
	type point struct {
		n      int
		v      float64
		pruned bool
		name   string
	}
	var pts []point
	for n := 0; ; n++ {
		rec := recs[s.TrialName(n)]
		if rec == nil {
			break
		}
		p.Trials = n + 1
		v, ok := rec.Values[obj.Metric]
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) || (rec.Status != store.Succeeded && rec.Status != store.Pruned) {
			continue
		}
		pts = append(pts, point{n: n, v: v, pruned: rec.Status == store.Pruned, name: rec.Name})
		p.Low, p.High = min(p.Low, v), max(p.High, v)
	}
	if len(pts) == 0 {
		p.Low, p.High = 0, 0 // JSON has no infinities: the live page's poll would get nothing
		return p
	}
	span := p.High - p.Low
	if span == 0 {
		span = 1
	}
	x := func(n int) float64 {
		return plotLeft + float64(n)/float64(max(1, p.Trials-1))*(plotW-plotLeft-plotPadY)
	}
	y := func(v float64) float64 { return plotPadY + (p.High-v)/span*(plotH-2*plotPadY) }
	var line []string
	best := math.NaN()
	for _, pt := range pts {
		p.Dots = append(p.Dots, SearchDot{Trial: pt.name, Value: pt.v, X: x(pt.n), Y: y(pt.v), Pruned: pt.pruned})
		if pt.pruned {
			continue // a pruned trial's value is where it stopped, not what it would have reached
		}
		if math.IsNaN(best) || (p.Max && pt.v > best) || (!p.Max && pt.v < best) {
			if !math.IsNaN(best) {
				line = append(line, fmt.Sprintf("%.1f,%.1f", x(pt.n), y(best)))
			}
			best = pt.v
		}
		line = append(line, fmt.Sprintf("%.1f,%.1f", x(pt.n), y(best)))
	}
	if !math.IsNaN(best) {
		line = append(line, fmt.Sprintf("%.1f,%.1f", x(p.Trials-1), y(best)))
	}
	p.Best = strings.Join(line, " ")
	return p
}
