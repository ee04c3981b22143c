package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/jikken-dev/jikken/internal/safecsv"
)

// Significant reports whether the pair's Holm-adjusted p-value is below the comparison's alpha.
func (c *Comparison) Significant(p Pair) bool { return p.PAdjusted < c.Alpha }

// NemenyiDiffer returns how far apart the pair's mean ranks are and whether that exceeds the
// critical difference (false when there is none).
func (c *Comparison) NemenyiDiffer(p Pair) (float64, bool) {
	if c.CriticalDifference == nil {
		return 0, false
	}
	d := math.Abs(c.group(p.A).MeanRank - c.group(p.B).MeanRank)
	return d, d > *c.CriticalDifference
}

// Magnitude names the size of an effect with the usual thresholds: Vargha and Delaney's for A12
// (0.56, 0.64, 0.71), Romano et al.'s for Cliff's delta, applied to the rank-biserial correlation
// which shares its scale (0.147, 0.33, 0.474).
func Magnitude(e Effect) string {
	d := math.Abs(e.Value)
	cuts := [3]float64{0.147, 0.33, 0.474}
	if e.Name == EffectA12 {
		d = math.Abs(e.Value - 0.5)
		cuts = [3]float64{0.06, 0.14, 0.21}
	}
	switch {
	case d < cuts[0]:
		return "negligible"
	case d < cuts[1]:
		return "small"
	case d < cuts[2]:
		return "medium"
	}
	return "large"
}

// aLarger reports whether the pair's first group tends to have the larger values: from the effect
// size, or from the medians when the effect size is neutral.
func (c *Comparison) aLarger(p Pair) (larger, known bool) {
	neutral := 0.0
	if p.EffectSize.Name == EffectA12 {
		neutral = 0.5
	}
	if p.EffectSize.Value != neutral {
		return p.EffectSize.Value > neutral, true
	}
	ma, mb := c.group(p.A).Median, c.group(p.B).Median
	if ma != mb {
		return ma > mb, true
	}
	return false, false
}

func (c *Comparison) group(name string) Group {
	for _, g := range c.Groups {
		if g.Name == name {
			return g
		}
	}
	return Group{}
}

// Verdict is a one-line plain-language conclusion about a pair.
func (c *Comparison) Verdict(p Pair) string {
	eff := fmt.Sprintf("%s = %.3f, %s", effectLabel(p.EffectSize.Name), p.EffectSize.Value, Magnitude(p.EffectSize))
	if !c.Significant(p) {
		return fmt.Sprintf("no significant difference between %s and %s on %s (p = %s after Holm, alpha %g; %s)",
			p.A, p.B, c.Metric, fmtP(p.PAdjusted), c.Alpha, eff)
	}
	larger, known := c.aLarger(p)
	if !known {
		return fmt.Sprintf("%s and %s differ on %s (p = %s after Holm) but neither tends to be better", p.A, p.B, c.Metric, fmtP(p.PAdjusted))
	}
	better, worse := p.A, p.B
	if larger == c.LowerIsBetter {
		better, worse = p.B, p.A
	}
	dir := "higher"
	if c.LowerIsBetter {
		dir = "lower"
	}
	return fmt.Sprintf("%s is better than %s on %s (%s is better; p = %s after Holm; %s)",
		better, worse, c.Metric, dir, fmtP(p.PAdjusted), eff)
}

func effectLabel(name string) string {
	if name == EffectA12 {
		return "A12"
	}
	return "rank-biserial r"
}

// effectCell writes an effect size for a table; A12 comes with Cliff's delta (2·A12 − 1), the
// same effect on the [−1, 1] scale of the paired rank-biserial correlation.
func effectCell(e Effect) string {
	if e.Name == EffectA12 {
		return fmt.Sprintf("A12 %.3f, Cliff's delta %.3f (%s)", e.Value, 2*e.Value-1, Magnitude(e))
	}
	return fmt.Sprintf("%s %.3f (%s)", effectLabel(e.Name), e.Value, Magnitude(e))
}

func testLabel(name string) string {
	switch name {
	case TestKruskalWallis:
		return "Kruskal-Wallis"
	case TestFriedman:
		return "Friedman"
	case TestMannWhitney:
		return "Mann-Whitney U"
	case TestSignedRank:
		return "Wilcoxon signed-rank"
	}
	return name
}

func fmtP(p float64) string {
	if p < 1e-3 {
		return strconv.FormatFloat(p, 'e', 2, 64)
	}
	return strconv.FormatFloat(p, 'f', 4, 64)
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', 5, 64) }

func (c *Comparison) direction() string {
	if c.LowerIsBetter {
		return "lower is better"
	}
	return "higher is better"
}

func (c *Comparison) design() string {
	if c.PairBy != "" {
		return fmt.Sprintf("paired by %s (%d blocks)", c.PairBy, c.Blocks)
	}
	return "unpaired"
}

// Ranked returns the groups from best to worst mean rank, ties in group order.
func (c *Comparison) Ranked() []Group {
	out := slices.Clone(c.Groups)
	slices.SortStableFunc(out, func(a, b Group) int { return cmp.Compare(a.MeanRank, b.MeanRank) })
	return out
}

// WriteText writes the comparison for a person: the groups ranked best first, the omnibus test,
// the pairwise tests with significance marks, and a verdict per pair.
func (c *Comparison) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("%s by %s: %d groups, %s, %s, alpha %g\n\n", c.Metric, c.By, len(c.Groups), c.design(), c.direction(), c.Alpha)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tgroup\tn\tmedian\t95% CI of median\tmean\tIQR\tmean rank")
	for i, gr := range c.Ranked() {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t[%s, %s]\t%s\t%s\t%.2f\n", i+1, gr.Name, gr.N, fmtNum(gr.Median),
			fmtNum(gr.MedianCI.Lo), fmtNum(gr.MedianCI.Hi), fmtNum(gr.Mean), fmtNum(gr.IQR), gr.MeanRank)
	}
	tw.Flush()
	ew.printf("\n")
	if o := c.Omnibus; o != nil {
		concl := "no evidence that the groups differ"
		if o.PValue < c.Alpha {
			concl = "the groups differ"
		}
		ew.printf("%s: chi-squared = %s, df = %d, p = %s: %s\n", testLabel(o.Test), fmtNum(o.Statistic), o.DF, fmtP(o.PValue), concl)
	}
	if c.CriticalDifference != nil {
		ew.printf("Nemenyi critical difference: %.3f mean ranks (groups whose mean ranks differ by more differ at alpha %g)\n",
			*c.CriticalDifference, c.Alpha)
		for _, p := range c.Pairwise {
			if d, ok := c.NemenyiDiffer(p); ok {
				ew.printf("  %s and %s differ by Nemenyi: mean ranks %.2f apart\n", p.A, p.B, d)
			}
		}
	}
	if c.Omnibus != nil || c.CriticalDifference != nil {
		ew.printf("\n")
	}
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "a\tb\ttest\tstatistic\tp\tp (Holm)\teffect size")
	for _, p := range c.Pairwise {
		adj := fmtP(p.PAdjusted)
		if c.Significant(p) {
			adj += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.A, p.B, testLabel(p.Test), fmtNum(p.Statistic),
			fmtP(p.PValue), adj, effectCell(p.EffectSize))
	}
	tw.Flush()
	ew.printf("(* significant at alpha %g after Holm's adjustment)\n\n", c.Alpha)
	for _, p := range c.Pairwise {
		ew.printf("- %s\n", c.Verdict(p))
	}
	c.writeDropped(ew)
	return ew.err
}

func (c *Comparison) writeDropped(ew *errWriter) {
	if len(c.Dropped) == 0 {
		return
	}
	ew.printf("\n%d row(s) left out:\n", len(c.Dropped))
	for _, d := range c.Dropped {
		ew.printf("  %s\n", d)
	}
}

func (d Dropped) String() string {
	if d.Trial != "" {
		return fmt.Sprintf("row %d (trial %s): %s", d.Row, d.Trial, d.Reason)
	}
	return fmt.Sprintf("row %d: %s", d.Row, d.Reason)
}

// WriteMarkdown writes the comparison as Markdown tables and a list of verdicts.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("**%s** by **%s**: %d groups, %s, %s, alpha %g\n\n", c.Metric, c.By, len(c.Groups), c.design(), c.direction(), c.Alpha)
	ew.printf("| rank | group | n | median | 95%% CI of median | mean | IQR | mean rank |\n|---:|---|---:|---:|---|---:|---:|---:|\n")
	for i, gr := range c.Ranked() {
		ew.printf("| %d | %s | %d | %s | [%s, %s] | %s | %s | %.2f |\n", i+1, mdEscape(gr.Name), gr.N, fmtNum(gr.Median),
			fmtNum(gr.MedianCI.Lo), fmtNum(gr.MedianCI.Hi), fmtNum(gr.Mean), fmtNum(gr.IQR), gr.MeanRank)
	}
	if o := c.Omnibus; o != nil {
		ew.printf("\n%s: chi-squared = %s, df = %d, p = %s\n", testLabel(o.Test), fmtNum(o.Statistic), o.DF, fmtP(o.PValue))
	}
	if c.CriticalDifference != nil {
		ew.printf("\nNemenyi critical difference: %.3f mean ranks\n", *c.CriticalDifference)
	}
	ew.printf("\n| a | b | test | statistic | p | p (Holm) | effect size |\n|---|---|---|---:|---:|---:|---|\n")
	for _, p := range c.Pairwise {
		adj := fmtP(p.PAdjusted)
		if c.Significant(p) {
			adj = "**" + adj + "**"
		}
		ew.printf("| %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(p.A), mdEscape(p.B), testLabel(p.Test),
			fmtNum(p.Statistic), fmtP(p.PValue), adj, effectCell(p.EffectSize))
	}
	ew.printf("\n")
	for _, p := range c.Pairwise {
		ew.printf("- %s\n", mdEscape(c.Verdict(p)))
	}
	if len(c.Dropped) > 0 {
		ew.printf("\n%d row(s) left out:\n\n", len(c.Dropped))
		for _, d := range c.Dropped {
			ew.printf("- %s\n", mdEscape(d.String()))
		}
	}
	return ew.err
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`).Replace(s)
}

// WriteCSV writes one row per pair with full-precision numbers, for spreadsheets and scripts.
func (c *Comparison) WriteCSV(w io.Writer) error {
	cw := safecsv.NewWriter(w)
	_ = cw.Write([]string{"metric", "a", "b", "test", "statistic", "p_value", "p_adjusted", "significant",
		"effect_size", "effect_value", "median_a", "median_b", "better"})
	for _, p := range c.Pairwise {
		better := ""
		if c.Significant(p) {
			if larger, known := c.aLarger(p); known {
				better = p.A
				if larger == c.LowerIsBetter {
					better = p.B
				}
			}
		}
		_ = cw.Write([]string{c.Metric, p.A, p.B, p.Test, full(p.Statistic), full(p.PValue), full(p.PAdjusted),
			strconv.FormatBool(c.Significant(p)), p.EffectSize.Name, full(p.EffectSize.Value),
			full(c.group(p.A).Median), full(c.group(p.B).Median), better})
	}
	cw.Flush()
	return cw.Error()
}

func full(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// errWriter keeps the first write error so the writers above read as straight-line prose.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
