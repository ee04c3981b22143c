package report

import (
	"math"
	"testing"
)

// rTol is the acceptance bound against R: relative error.
const rTol = 1e-9

func near(got, want float64) bool {
	return math.Abs(got-want) <= rTol*math.Abs(want)
}

// Compare end to end against R on testdata/three-algos.csv: grouping in order of appearance, the
// first group of a pair as the first sample, Holm over all pairs. The values were printed by R
// 4.2.2 with sprintf("%.17g") from friedman.test, kruskal.test, wilcox.test, p.adjust, median,
// IQR and mean (qtukey for the critical difference, which R gets to about 1e-4).
func TestCompareMatchesR(t *testing.T) {
	type pair struct {
		a, b         string
		stat, p, adj float64
	}
	for _, c := range []struct {
		name    string
		opts    Options
		omnibus [2]float64
		pairs   []pair
	}{
		{"paired", Options{By: "algo", Metric: "loss", PairBy: "seed", Direction: LowerIsBetter},
			[2]float64{12.6, 0.0018363047770289071},
			[]pair{
				{"sgd", "adam", 55, 0.001953125, 0.005859375},
				{"sgd", "rmsprop", 54, 0.00390625, 0.0078125},
				{"adam", "rmsprop", 14, 0.193359375, 0.193359375},
			}},
		{"unpaired", Options{By: "algo", Metric: "loss"},
			[2]float64{18.614193548387107, 9.077771116932974e-05},
			[]pair{
				{"sgd", "adam", 99, 2.1650176448938059e-05, 6.4950529346814178e-05},
				{"sgd", "rmsprop", 98, 4.3300352897876119e-05, 8.6600705795752237e-05},
				{"adam", "rmsprop", 38, 0.39304812834224606, 0.39304812834224606},
			}},
	} {
		cmp, err := Compare(readTable(t, "three-algos.csv"), c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if o := cmp.Omnibus; !near(o.Statistic, c.omnibus[0]) || !near(o.PValue, c.omnibus[1]) || o.DF != 2 {
			t.Errorf("%s omnibus = %+v; R: statistic %v, p %v", c.name, o, c.omnibus[0], c.omnibus[1])
		}
		for i, w := range c.pairs {
			p := cmp.Pairwise[i]
			if p.A != w.a || p.B != w.b || !near(p.Statistic, w.stat) || !near(p.PValue, w.p) || !near(p.PAdjusted, w.adj) {
				t.Errorf("%s pair %d = %+v; R: %+v", c.name, i, p, w)
			}
		}
	}

	cmp, _ := Compare(readTable(t, "three-algos.csv"), Options{By: "algo", Metric: "loss", PairBy: "seed"})
	want := []struct{ median, iqr, mean float64 }{
		{0.29454999999999998, 0.025175000000000003, 0.29385},
		{0.19190000000000002, 0.038449999999999984, 0.19397999999999999},
		{0.20715, 0.052699999999999969, 0.21071999999999999},
	}
	for i, w := range want {
		g := cmp.Groups[i]
		if !near(g.Median, w.median) || !near(g.IQR, w.iqr) || !near(g.Mean, w.mean) {
			t.Errorf("group %s = %+v; R: %+v", g.Name, g, w)
		}
	}
	if cd := *cmp.CriticalDifference; math.Abs(cd-1.0481347666910821) > 1e-4 {
		t.Errorf("critical difference = %v; R (qtukey) 1.0481", cd)
	}
}
