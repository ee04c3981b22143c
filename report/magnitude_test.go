package report

import "testing"

// Each effect size is labelled on its own published scale: Vargha and Delaney's for A12,
// Romano et al.'s for Cliff's delta (and the rank-biserial correlation). The case: A12
// 0.35 is medium for Vargha and Delaney, its delta -0.30 small for Romano.
func TestMagnitudeOnEachScale(t *testing.T) {
	for _, c := range []struct {
		e    Effect
		want string
	}{
		{Effect{EffectA12, 0.35}, "medium"},
		{CliffsDelta(Effect{EffectA12, 0.35}), "small"},
		{Effect{EffectCliffsDelta, -0.299}, "small"},
		{Effect{EffectCliffsDelta, 0.146}, "negligible"},
		{Effect{EffectCliffsDelta, 0.147}, "small"},
		{Effect{EffectCliffsDelta, 0.33}, "medium"},
		{Effect{EffectCliffsDelta, -0.474}, "large"},
		{Effect{EffectA12, 0.55}, "negligible"},
		{Effect{EffectA12, 0.56}, "small"},
		{Effect{EffectA12, 0.36}, "medium"},
		{Effect{EffectA12, 0.71}, "large"},
		{Effect{EffectRankBiser, 0.4}, "medium"},
	} {
		if got := Magnitude(c.e); got != c.want {
			t.Errorf("Magnitude(%s %v) = %s; want %s", c.e.Name, c.e.Value, got, c.want)
		}
	}
	if got := effectCell(Effect{EffectA12, 0.35}); got != "A12 0.350 (medium), Cliff's delta -0.300 (small)" {
		t.Errorf("effect cell = %q", got)
	}
}
