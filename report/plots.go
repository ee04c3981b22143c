package report

import (
	"fmt"

	"gonum.org/v1/plot"

	"github.com/jikken-dev/jikken/report/chart"
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
