package ui

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/results"
)

// Curve is one metric of a trial drawn as a small SVG line: the points are laid out here so the
// page needs no plotting script.
type Curve struct {
	Metric           string
	Points           string // SVG polyline points in a curveW x curveH box
	N                int
	First, Last      float64
	Min, Max         float64
	MinStep, MaxStep int64
	// Log is set when the values are positive and span more than three decades: they are drawn
	// on a log scale, or all but the first would lie on the axis.
	Log bool
}

const curveW, curveH = 360.0, 120.0

// curves lays out every metric a trial logged more than once.
func curves(pts []results.Point) []Curve {
	by := map[string][]results.Point{}
	for _, p := range pts {
		if !math.IsNaN(p.Value) && !math.IsInf(p.Value, 0) {
			by[p.Metric] = append(by[p.Metric], p)
		}
	}
	var out []Curve
	for _, name := range slices.Sorted(maps.Keys(by)) {
		ps := by[name]
		if len(ps) < 2 {
			continue
		}
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Step < ps[j].Step })
		c := Curve{Metric: name, N: len(ps), First: ps[0].Value, Last: ps[len(ps)-1].Value,
			Min: math.Inf(1), Max: math.Inf(-1), MinStep: ps[0].Step, MaxStep: ps[len(ps)-1].Step}
		for _, p := range ps {
			c.Min, c.Max = math.Min(c.Min, p.Value), math.Max(c.Max, p.Value)
		}
		c.Log = c.Min > 0 && c.Max/c.Min > 1000
		y := func(v float64) float64 {
			if c.Log {
				return curveH - 4 - (curveH-8)*frac(math.Log10(v), math.Log10(c.Min), math.Log10(c.Max))
			}
			return curveH - 4 - (curveH-8)*frac(v, c.Min, c.Max)
		}
		// A long curve is thinned to about one point per pixel.
		stride := max(1, len(ps)/int(curveW))
		var b strings.Builder
		for i := 0; i < len(ps); i += stride {
			p := ps[i]
			x := 4 + (curveW-8)*frac(float64(p.Step), float64(c.MinStep), float64(c.MaxStep))
			b.WriteString(strconv.FormatFloat(x, 'f', 1, 64))
			b.WriteByte(',')
			b.WriteString(strconv.FormatFloat(y(p.Value), 'f', 1, 64))
			b.WriteByte(' ')
		}
		c.Points = strings.TrimSpace(b.String())
		out = append(out, c)
	}
	return out
}

func frac(v, lo, hi float64) float64 {
	if hi <= lo {
		return 0.5
	}
	return (v - lo) / (hi - lo)
}
