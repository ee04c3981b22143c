package report

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/jikken-dev/jikken/stats"
)

// goldenCompare is testdata/golden_compare.json, written by testdata/gen/compare.R, which
// follows the rules of docs/analysis.md in plain R: failures replaced by ±1e300, blocks with a
// missing value removed with complete.cases, medians over the finite values.
type goldenCompare struct {
	Cases []struct {
		File, By, Metric    string
		PairBy              *string `json:"pair_by"`
		Direction           string
		Failed, Alternative string
		Blocks              *int
		Groups              []struct {
			Name                      string
			N, Failed                 int
			Median, Mean, IQR, Lo, Hi *float64
			MeanRank                  float64 `json:"mean_rank"`
		}
		Omnibus *struct {
			Statistic float64
			PValue    float64 `json:"p_value"`
		}
		CriticalDifference *float64 `json:"critical_difference"`
		Pairs              []struct {
			A, B      string
			Statistic float64
			PValue    float64 `json:"p_value"`
			PAdjusted float64 `json:"p_adjusted"`
			Effect    float64
		}
	}
}

func nearOrMissing(got float64, want *float64) bool {
	if want == nil {
		return math.IsNaN(got)
	}
	return near(got, *want) || got == *want
}

// Every number of Compare under the failed-trial, incomplete-block, n = 1 and one-sided rules
// equals what R computes by the recipe in docs/analysis.md.
func TestCompareMatchesRRecipe(t *testing.T) {
	b, err := os.ReadFile("testdata/golden_compare.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenCompare
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]Direction{"lower": LowerIsBetter, "higher": HigherIsBetter, "unknown": DirectionUnknown}
	alts := map[string]stats.Alternative{"two.sided": stats.TwoSided, "less": stats.Less, "greater": stats.Greater}
	for _, w := range g.Cases {
		opts := Options{By: w.By, Metric: w.Metric, Direction: dirs[w.Direction], Failed: w.Failed, Alternative: alts[w.Alternative]}
		if w.PairBy != nil {
			opts.PairBy = *w.PairBy
		}
		name := w.File + " " + opts.PairBy + " " + w.Direction + " " + w.Failed + " " + w.Alternative
		c, err := Compare(readTable(t, w.File), opts)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if w.Blocks != nil && c.Blocks != *w.Blocks {
			t.Errorf("%s: %d blocks; R keeps %d", name, c.Blocks, *w.Blocks)
		}
		for i, wg := range w.Groups {
			gr := c.Groups[i]
			if gr.Name != wg.Name || gr.N != wg.N || gr.Failed != wg.Failed || !nearOrMissing(gr.Median, wg.Median) ||
				!nearOrMissing(gr.Mean, wg.Mean) || !nearOrMissing(gr.IQR, wg.IQR) || !nearOrMissing(gr.MedianCI.Lo, wg.Lo) ||
				!nearOrMissing(gr.MedianCI.Hi, wg.Hi) || !near(gr.MeanRank, wg.MeanRank) {
				t.Errorf("%s: group %+v; R: %+v", name, gr, wg)
			}
		}
		switch {
		case (c.Omnibus == nil) != (w.Omnibus == nil):
			t.Errorf("%s: omnibus %+v; R: %+v", name, c.Omnibus, w.Omnibus)
		case c.Omnibus != nil && (!near(c.Omnibus.Statistic, w.Omnibus.Statistic) || !near(c.Omnibus.PValue, w.Omnibus.PValue)):
			t.Errorf("%s: omnibus %+v; R: %+v", name, *c.Omnibus, *w.Omnibus)
		}
		if (c.CriticalDifference == nil) != (w.CriticalDifference == nil) ||
			(c.CriticalDifference != nil && math.Abs(*c.CriticalDifference-*w.CriticalDifference) > 1e-4) {
			t.Errorf("%s: critical difference %v; R (qtukey, good to about 1e-4) %v", name, c.CriticalDifference, w.CriticalDifference)
		}
		if len(c.Pairwise) != len(w.Pairs) {
			t.Fatalf("%s: %d pairs; R %d", name, len(c.Pairwise), len(w.Pairs))
		}
		for i, wp := range w.Pairs {
			p := c.Pairwise[i]
			if p.A != wp.A || p.B != wp.B || !near(p.Statistic, wp.Statistic) || !near(p.PValue, wp.PValue) ||
				!near(p.PAdjusted, wp.PAdjusted) || !near(p.EffectSize.Value, wp.Effect) {
				t.Errorf("%s: pair %+v; R: %+v", name, p, wp)
			}
		}
	}
}
