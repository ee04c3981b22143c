package report

import (
	"fmt"
	"math"

	"github.com/jikken-dev/jikken/stats"
)

// Significant reports whether the pair's Holm-adjusted p-value is below the comparison's alpha.
func (c *Comparison) Significant(p Pair) bool { return p.PAdjusted < c.Alpha }

// OmnibusSignificant reports whether the test of all groups at once rejects at alpha; it is true
// for two groups, which have no omnibus test.
func (c *Comparison) OmnibusSignificant() bool {
	return c.Omnibus == nil || c.Omnibus.PValue < c.Alpha
}

// NemenyiApplies reports whether Nemenyi's post-hoc test (and its critical-difference diagram)
// is read: a paired design of three or more groups whose Friedman test rejects. As Demšar (2006)
// says, the post-hoc test only follows a significant omnibus test.
func (c *Comparison) NemenyiApplies() bool {
	return c.CriticalDifference != nil && c.OmnibusSignificant()
}

// NemenyiSkipped says why Nemenyi's test is not applied to a paired design of three or more
// groups ("Friedman is not significant (p = 0.2842, alpha 0.05)"), or "" when it is.
func (c *Comparison) NemenyiSkipped() string {
	if c.CriticalDifference == nil || c.NemenyiApplies() {
		return ""
	}
	return fmt.Sprintf("%s is not significant (p = %s, alpha %g)", testLabel(c.Omnibus.Test), fmtP(c.Omnibus.PValue), c.Alpha)
}

// NemenyiDiffer returns how far apart the pair's mean ranks are and whether that exceeds the
// critical difference (false when there is none).
func (c *Comparison) NemenyiDiffer(p Pair) (float64, bool) {
	if c.CriticalDifference == nil {
		return 0, false
	}
	d := math.Abs(c.group(p.A).MeanRank - c.group(p.B).MeanRank)
	return d, d > *c.CriticalDifference
}

// Magnitude names the size of an effect on its measure's own published scale:
//
//   - Vargha-Delaney A12: max(A12, 1 − A12) below 0.56 negligible, 0.64 small, 0.71 medium,
//     else large (Vargha and Delaney 2000, "A critique and improvement of the CL
//     common language effect size statistics of McGraw and Wong", JEBS 25(2), p. 106);
//   - Cliff's delta: |d| below 0.147 negligible, 0.33 small, 0.474 medium, else large (Romano,
//     Kromrey, Coraggio and Skowronek 2006, "Appropriate statistics for ordinal level data",
//     annual meeting of the Florida Association of Institutional Research);
//   - the matched-pairs rank-biserial correlation, which has no scale of its own (Kerby 2014
//     gives none) and is Cliff's delta of the paired differences' signed ranks: Romano's.
//
// The A12 and delta cut-offs do not map onto each other (A12 0.64 is delta 0.28, small for
// Romano), so a pair reported with both gets one label for each.
func Magnitude(e Effect) string {
	d := math.Abs(e.Value)
	cuts := [3]float64{0.147, 0.33, 0.474}
	if e.Name == EffectA12 {
		// Compared as A itself, not |A − 0.5|, so 0.71 is large as published, not 0.2099...
		d = max(e.Value, 1-e.Value)
		cuts = [3]float64{0.56, 0.64, 0.71}
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

// CliffsDelta is an unpaired pair's A12 on Cliff's delta scale (2·A12 − 1), named so that
// Magnitude reads it on Romano's thresholds.
func CliffsDelta(a12 Effect) Effect { return Effect{Name: EffectCliffsDelta, Value: 2*a12.Value - 1} }

// aLarger reports whether the pair's first group tends to have the larger values: from a
// one-sided alternative, else from the effect size, else from the medians.
func (c *Comparison) aLarger(p Pair) (larger, known bool) {
	switch c.Alternative {
	case stats.Greater:
		return true, true
	case stats.Less:
		return false, true
	}
	neutral := 0.0
	if p.EffectSize.Name == EffectA12 {
		neutral = 0.5
	}
	if p.EffectSize.Value != neutral {
		return p.EffectSize.Value > neutral, true
	}
	ma, mb := c.group(p.A).Median, c.group(p.B).Median
	if ma != mb && !math.IsNaN(ma) && !math.IsNaN(mb) {
		return ma > mb, true
	}
	return false, false
}

// Better returns the better group of a significant pair, or "" when the pair is not significant,
// the direction is unknown or neither group tends to be better.
func (c *Comparison) Better(p Pair) string {
	if !c.Significant(p) || c.Direction == DirectionUnknown {
		return ""
	}
	larger, known := c.aLarger(p)
	if !known {
		return ""
	}
	if larger == (c.Direction == LowerIsBetter) {
		return p.B
	}
	return p.A
}

func (c *Comparison) group(name string) Group {
	for _, g := range c.Groups {
		if g.Name == name {
			return g
		}
	}
	return Group{}
}

// sided names the alternative in a verdict, empty for two-sided tests.
func (c *Comparison) sided(p Pair) string {
	switch c.Alternative {
	case stats.Greater:
		return fmt.Sprintf("one-sided test that %s is larger; ", p.A)
	case stats.Less:
		return fmt.Sprintf("one-sided test that %s is smaller; ", p.A)
	}
	return ""
}

// Verdict is a one-line plain-language conclusion about a pair.
func (c *Comparison) Verdict(p Pair) string {
	eff := fmt.Sprintf("%s = %.3f, %s", effectLabel(p.EffectSize.Name), p.EffectSize.Value, Magnitude(p.EffectSize))
	if !c.Significant(p) {
		switch c.Alternative {
		case stats.Greater, stats.Less:
			word := "larger"
			if c.Alternative == stats.Less {
				word = "smaller"
			}
			return fmt.Sprintf("no evidence that %s tends to be %s than %s on %s (one-sided; p = %s after Holm, alpha %g; %s)",
				p.A, word, p.B, c.Metric, fmtP(p.PAdjusted), c.Alpha, eff)
		}
		return fmt.Sprintf("no significant difference between %s and %s on %s (p = %s after Holm, alpha %g; %s)",
			p.A, p.B, c.Metric, fmtP(p.PAdjusted), c.Alpha, eff)
	}
	larger, known := c.aLarger(p)
	if !known {
		return fmt.Sprintf("%s and %s differ on %s (p = %s after Holm) but neither tends to be larger", p.A, p.B, c.Metric, fmtP(p.PAdjusted))
	}
	big, small := p.A, p.B
	if !larger {
		big, small = p.B, p.A
	}
	if c.Direction == DirectionUnknown {
		return fmt.Sprintf("%s tends to be larger than %s on %s (%sp = %s after Holm; %s)",
			big, small, c.Metric, c.sided(p), fmtP(p.PAdjusted), eff)
	}
	better, worse := big, small
	if c.Direction == LowerIsBetter {
		better, worse = small, big
	}
	return fmt.Sprintf("%s is better than %s on %s (%s; %sp = %s after Holm; %s)",
		better, worse, c.Metric, c.direction(), c.sided(p), fmtP(p.PAdjusted), eff)
}

// ReadingNotes explain results that look contradictory: Nemenyi and the pairwise tests
// disagreeing on a pair, or pairs that differ although the omnibus test finds nothing.
func (c *Comparison) ReadingNotes() []string {
	var notes []string
	if c.NemenyiApplies() {
		for _, p := range c.Pairwise {
			d, nem := c.NemenyiDiffer(p)
			if nem == c.Significant(p) {
				continue
			}
			if nem {
				notes = append(notes, fmt.Sprintf("%s and %s: Nemenyi says they differ (mean ranks %.2f apart, more than the critical difference %.3f) but the Holm-adjusted %s test does not (p = %s).",
					p.A, p.B, d, *c.CriticalDifference, testLabel(p.Test), fmtP(p.PAdjusted)))
			} else {
				notes = append(notes, fmt.Sprintf("%s and %s: the Holm-adjusted %s test says they differ (p = %s) but Nemenyi does not (mean ranks %.2f apart, within the critical difference %.3f).",
					p.A, p.B, testLabel(p.Test), fmtP(p.PAdjusted), d, *c.CriticalDifference))
			}
		}
		if len(notes) > 0 {
			why := "Why they can disagree: they are different tests with different power. "
			if c.Alternative != stats.TwoSided {
				why = "Why they can disagree: the pairwise tests here are one-sided and Nemenyi is not; and they are different tests with different power. "
			}
			notes = append(notes, why+"Nemenyi compares mean ranks within blocks against one critical difference for all groups at once; the signed-rank test uses only the two groups' paired differences, sizes included, with Holm's adjustment over all pairs. Near the threshold one may reject and the other not. The verdicts follow the pairwise tests; the critical-difference diagram follows Nemenyi.")
		}
	}
	if !c.OmnibusSignificant() {
		for _, p := range c.Pairwise {
			if c.Significant(p) {
				notes = append(notes, fmt.Sprintf("%s finds no difference among all groups (p = %s), yet %s and %s differ by their pairwise test (p = %s after Holm): the omnibus test looks at all groups at once and can miss a difference between two of them; read that pair's verdict with care.",
					testLabel(c.Omnibus.Test), fmtP(c.Omnibus.PValue), p.A, p.B, fmtP(p.PAdjusted)))
			}
		}
	}
	return notes
}

// HowToRead is one paragraph for a reader who does not know the tests.
func (c *Comparison) HowToRead() string {
	rank := "1 = best"
	if c.Direction == DirectionUnknown {
		rank = "1 = smallest value, as no direction was given"
	}
	s := fmt.Sprintf("How to read this: groups are listed by mean rank (%s). ", rank)
	if c.Omnibus != nil {
		s += fmt.Sprintf("The %s test asks whether any group differs at all. ", testLabel(c.Omnibus.Test))
	}
	s += fmt.Sprintf("Each pair is then tested on its own; a pair differs when its Holm-adjusted p-value is below %g (marked *), and the effect size says by how much (negligible, small, medium, large).", c.Alpha)
	if c.failures() > 0 {
		s += " Failed trials count as worse than every real value."
	}
	if c.NemenyiApplies() {
		s += " In the critical-difference diagram, groups joined by a bar are not significantly different by Nemenyi's test."
	}
	return s
}

func (c *Comparison) failures() int {
	n := 0
	for _, g := range c.Groups {
		n += g.Failed
	}
	return n
}
