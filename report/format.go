package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/internal/safecsv"
	"github.com/jikken-dev/jikken/internal/texttable"
	"github.com/jikken-dev/jikken/stats"
)

func effectLabel(name string) string {
	if name == EffectA12 {
		return "A12"
	}
	return "rank-biserial r"
}

// effectCell writes an effect size for a table; A12 comes with Cliff's delta (2·A12 − 1), the
// same effect on the [−1, 1] scale of the paired rank-biserial correlation, each labelled on
// its own scale (Magnitude).
func effectCell(e Effect) string {
	if e.Name == EffectA12 {
		d := CliffsDelta(e)
		return fmt.Sprintf("A12 %.3f (%s), Cliff's delta %.3f (%s)", e.Value, Magnitude(e), d.Value, Magnitude(d))
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

// fmtNum writes a number for a person: five significant digits, "-" for a missing one.
func fmtNum(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 5, 64)
}

func (c *Comparison) direction() string {
	switch c.Direction {
	case LowerIsBetter:
		return "lower is better"
	case HigherIsBetter:
		return "higher is better"
	}
	return "direction not given"
}

func (c *Comparison) design() string {
	if c.PairBy != "" {
		return fmt.Sprintf("paired by %s (%d blocks)", c.PairBy, c.Blocks)
	}
	return "unpaired"
}

// headline is the first line of the text forms: what was compared and how.
func (c *Comparison) headline() string {
	s := fmt.Sprintf("%d groups, %s, %s, alpha %g", len(c.Groups), c.design(), c.direction(), c.Alpha)
	switch c.Alternative {
	case stats.Greater:
		s += ", one-sided pairwise tests (H1: the first group of a pair is larger)"
	case stats.Less:
		s += ", one-sided pairwise tests (H1: the first group of a pair is smaller)"
	}
	if n := c.failures(); n > 0 {
		s += fmt.Sprintf(", %d failure(s) ranked worst", n)
	}
	return s
}

// Ranked returns the groups from best to worst mean rank, ties in group order.
func (c *Comparison) Ranked() []Group {
	out := slices.Clone(c.Groups)
	slices.SortStableFunc(out, func(a, b Group) int { return cmp.Compare(a.MeanRank, b.MeanRank) })
	return out
}

// groupHeader and groupCells lay out the groups table; the failed column appears only when some
// failure was ranked worst.
func (c *Comparison) groupHeader() []string {
	h := []string{"rank", "group", "n"}
	if c.failures() > 0 {
		h = append(h, "failed")
	}
	rank := "mean rank"
	if c.Direction == DirectionUnknown {
		rank = "mean rank (1 = smallest)"
	}
	return append(h, "median", "95% CI of median", "mean", "IQR", rank)
}

func (c *Comparison) groupCells(i int, gr Group) []string {
	row := []string{strconv.Itoa(i + 1), gr.Name, strconv.Itoa(gr.N)}
	if c.failures() > 0 {
		row = append(row, strconv.Itoa(gr.Failed))
	}
	return append(row, fmtNum(gr.Median), fmt.Sprintf("[%s, %s]", fmtNum(gr.MedianCI.Lo), fmtNum(gr.MedianCI.Hi)),
		fmtNum(gr.Mean), fmtNum(gr.IQR), fmt.Sprintf("%.2f", gr.MeanRank))
}

// nemenyiLine says what Nemenyi's test concludes, or why it is not applied.
func (c *Comparison) nemenyiLine() string {
	if c.CriticalDifference == nil {
		return ""
	}
	if !c.NemenyiApplies() {
		return fmt.Sprintf("Nemenyi post-hoc test not applied: %s is not significant at alpha %g (the critical difference would be %.3f mean ranks)",
			testLabel(c.Omnibus.Test), c.Alpha, *c.CriticalDifference)
	}
	return fmt.Sprintf("Nemenyi critical difference: %.3f mean ranks (groups whose mean ranks differ by more differ at alpha %g)",
		*c.CriticalDifference, c.Alpha)
}

// WriteText writes the comparison for a person: the groups ranked best first, the omnibus test,
// the pairwise tests with significance marks, a verdict per pair, notes on apparent
// contradictions and what was left out.
func (c *Comparison) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("%s by %s: %s\n\n", c.Metric, c.By, c.headline())
	var groups texttable.Table
	groups.Row(c.groupHeader()...)
	for i, gr := range c.Ranked() {
		groups.Row(c.groupCells(i, gr)...)
	}
	_ = groups.Write(ew)
	ew.printf("\n")
	if o := c.Omnibus; o != nil {
		concl := "no evidence that the groups differ"
		if o.PValue < c.Alpha {
			concl = "the groups differ"
		}
		ew.printf("%s: chi-squared = %s, df = %d, p = %s: %s\n", testLabel(o.Test), fmtNum(o.Statistic), o.DF, fmtP(o.PValue), concl)
	}
	if line := c.nemenyiLine(); line != "" {
		ew.printf("%s\n", line)
		if c.NemenyiApplies() {
			for _, p := range c.Pairwise {
				if d, ok := c.NemenyiDiffer(p); ok {
					ew.printf("  %s and %s differ by Nemenyi: mean ranks %.2f apart\n", p.A, p.B, d)
				}
			}
		}
	}
	if c.Omnibus != nil || c.CriticalDifference != nil {
		ew.printf("\n")
	}
	var pairs texttable.Table
	pairs.Row("a", "b", "test", "statistic", "p", "p (Holm)", "effect size")
	for _, p := range c.Pairwise {
		adj := fmtP(p.PAdjusted)
		if c.Significant(p) {
			adj += " *"
		}
		pairs.Row(p.A, p.B, testLabel(p.Test), fmtNum(p.Statistic), fmtP(p.PValue), adj, effectCell(p.EffectSize))
	}
	_ = pairs.Write(ew)
	ew.printf("(* significant at alpha %g after Holm's adjustment)\n\n", c.Alpha)
	for _, p := range c.Pairwise {
		ew.printf("- %s\n", c.Verdict(p))
	}
	if notes := c.ReadingNotes(); len(notes) > 0 {
		ew.printf("\nNote:\n")
		for _, n := range notes {
			ew.printf("  %s\n", n)
		}
	}
	c.writeLeftOut(ew, "  %s\n")
	return ew.err
}

// writeLeftOut lists the rows ranked worst, the blocks and the rows left out, each line written
// with format (an indent or a list marker).
func (c *Comparison) writeLeftOut(ew *errWriter, format string) {
	if len(c.Worst) > 0 {
		ew.printf("\n%d row(s) ranked worst (failed or not a finite number; --failed worst):\n", len(c.Worst))
		for _, d := range c.Worst {
			ew.printf(format, d)
		}
	}
	if len(c.DroppedBlocks) > 0 {
		ew.printf("\n%d incomplete block(s) left out (--incomplete drop, as R's friedman.test):\n", len(c.DroppedBlocks))
		for _, b := range c.DroppedBlocks {
			ew.printf(format, b.Block+": "+b.Reason)
		}
	}
	if len(c.Dropped) > 0 {
		ew.printf("\n%d row(s) left out:\n", len(c.Dropped))
		for _, d := range c.Dropped {
			ew.printf(format, d)
		}
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
	ew.printf("**%s** by **%s**: %s\n\n", mdEscape(c.Metric), mdEscape(c.By), mdEscape(c.headline()))
	head := c.groupHeader()
	ew.printf("| %s |\n|", strings.Join(head, " | "))
	for _, h := range head {
		if h == "group" || h == "95% CI of median" {
			ew.printf("---|")
		} else {
			ew.printf("---:|")
		}
	}
	ew.printf("\n")
	for i, gr := range c.Ranked() {
		cells := c.groupCells(i, gr)
		cells[1] = mdEscape(cells[1])
		ew.printf("| %s |\n", strings.Join(cells, " | "))
	}
	if o := c.Omnibus; o != nil {
		ew.printf("\n%s: chi-squared = %s, df = %d, p = %s\n", testLabel(o.Test), fmtNum(o.Statistic), o.DF, fmtP(o.PValue))
	}
	if line := c.nemenyiLine(); line != "" {
		ew.printf("\n%s\n", line)
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
	if notes := c.ReadingNotes(); len(notes) > 0 {
		ew.printf("\n")
		for _, n := range notes {
			ew.printf("> %s\n>\n", mdEscape(n))
		}
	}
	mw := &errWriter{w: mdEscaper{ew}}
	c.writeLeftOut(mw, "- %s\n")
	return ew.err
}

// mdEscaper escapes Markdown in everything written through it.
type mdEscaper struct{ w io.Writer }

func (m mdEscaper) Write(b []byte) (int, error) {
	if _, err := io.WriteString(m.w, mdEscape(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
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
		_ = cw.Write([]string{c.Metric, p.A, p.B, p.Test, full(p.Statistic), full(p.PValue), full(p.PAdjusted),
			strconv.FormatBool(c.Significant(p)), p.EffectSize.Name, full(p.EffectSize.Value),
			full(c.group(p.A).Median), full(c.group(p.B).Median), c.Better(p)})
	}
	cw.Flush()
	return cw.Error()
}

// full writes a number at full precision, and nothing for a missing one (a group of failures
// has no median).
func full(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

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
