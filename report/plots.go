package report

import (
	"fmt"
	"math"

	"github.com/jikken-dev/jikken/report/chart"
)

// BoxPlot draws the comparison's groups as boxes with their observations over them; failures,
// which have no value, are counted in the group's label.
func (c *Comparison) BoxPlot(s chart.Style) (*chart.Figure, error) {
	groups := make([]chart.Group, len(c.Groups))
	for i, g := range c.Groups {
		groups[i] = chart.Group{Name: g.Name, Failed: g.Failed}
		for _, v := range g.Values {
			if !math.IsInf(v, 0) {
				groups[i].Values = append(groups[i].Values, v)
			}
		}
	}
	return chart.Box(s, fmt.Sprintf("%s by %s (%s)", c.Metric, c.By, c.direction()), c.Metric, groups)
}

// CDPlot draws the critical-difference diagram of a paired comparison of three or more groups.
// Its title says so when Friedman is not significant (the diagram was asked for anyway).
func (c *Comparison) CDPlot(s chart.Style) (*chart.Figure, error) {
	if c.CriticalDifference == nil {
		return nil, fmt.Errorf("a critical-difference diagram needs a paired comparison (--pair-by) of at least 3 groups")
	}
	names := make([]string, len(c.Groups))
	ranks := make([]float64, len(c.Groups))
	for i, g := range c.Groups {
		names[i], ranks[i] = g.Name, g.MeanRank
	}
	title := fmt.Sprintf("%s: Nemenyi critical difference at alpha %g over %d blocks", c.Metric, c.Alpha, c.Blocks)
	if !c.NemenyiApplies() {
		title += fmt.Sprintf(" (Friedman not significant, p = %s)", fmtP(c.Omnibus.PValue))
	}
	axis := "mean rank (1 = best)"
	if c.Direction == DirectionUnknown {
		axis = "mean rank (1 = smallest)"
	}
	return chart.CD(s, title, axis, names, ranks, *c.CriticalDifference)
}
