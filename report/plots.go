package report

import (
	"fmt"
	"sort"

	"gonum.org/v1/plot"

	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/stats"
)

// BoxPlot draws the comparison's groups as boxes with their observations over them.
func (c *Comparison) BoxPlot() (*plot.Plot, error) {
	groups := make([]chart.Group, len(c.Groups))
	for i, g := range c.Groups {
		groups[i] = chart.Group{Name: g.Name, Values: g.Values}
	}
	return chart.Box(fmt.Sprintf("%s by %s (%s)", c.Metric, c.By, c.direction()), c.Metric, groups)
}

// CDPlot draws the critical-difference diagram of a paired comparison of three or more groups.
func (c *Comparison) CDPlot() (*plot.Plot, error) {
	if c.CriticalDifference == nil {
		return nil, fmt.Errorf("a critical-difference diagram needs a paired comparison (--pair-by) of at least 3 groups")
	}
	names := make([]string, len(c.Groups))
	ranks := make([]float64, len(c.Groups))
	for i, g := range c.Groups {
		names[i], ranks[i] = g.Name, g.MeanRank
	}
	title := fmt.Sprintf("%s: Nemenyi critical difference at alpha %g over %d blocks", c.Metric, c.Alpha, c.Blocks)
	return chart.CD(title, names, ranks, *c.CriticalDifference)
}

// Series is one trial's values of a metric over steps.
type Series struct {
	Steps, Values []float64
}

// Bands reduces each group's trials to a convergence band: at every step some trial of the group
// logged, the median and quartiles over the trials that logged it (a trial logging a step twice
// counts with its last value). Groups without any point are left out.
func Bands(names []string, groups [][]Series) []chart.Band {
	var out []chart.Band
	for g, trials := range groups {
		at := map[float64][]float64{}
		for _, s := range trials {
			last := map[float64]float64{}
			for i, step := range s.Steps {
				last[step] = s.Values[i]
			}
			for step, v := range last {
				at[step] = append(at[step], v)
			}
		}
		if len(at) == 0 {
			continue
		}
		b := chart.Band{Name: names[g]}
		for step := range at {
			b.Steps = append(b.Steps, step)
		}
		sort.Float64s(b.Steps)
		for _, step := range b.Steps {
			vs := at[step]
			b.Median = append(b.Median, stats.Median(vs))
			b.Q1 = append(b.Q1, stats.Quantile(vs, 0.25))
			b.Q3 = append(b.Q3, stats.Quantile(vs, 0.75))
		}
		out = append(out, b)
	}
	return out
}

// CurvePlot draws the bands of metric over steps.
func CurvePlot(metric, by string, bands []chart.Band) (*plot.Plot, error) {
	return chart.Curves(fmt.Sprintf("%s over steps by %s (median and inter-quartile band)", metric, by), metric, bands)
}
