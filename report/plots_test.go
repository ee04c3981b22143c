package report

import (
	"github.com/jikken-dev/jikken/report/chart"
	"math"
	"reflect"
	"strings"
	"testing"
)

// Irregular logging (best logged only when it improves) and early stopping, checked against
// values worked out by hand. Trials a1, a2, a3 of group a log best at:
//
//	a1: step 0 → 10, 3 → 7, 7 → 4
//	a2: step 0 → 12, 1 → 9, 2 → 8 (then stops early)
//	a3: step 0 → 11, 5 → 6, 10 → 3
//
// Carried forward onto the union of steps {0, 1, 2, 3, 5, 7, 10}:
//
//	step:  0        1        2        3       5      7      10
//	a1:    10       10       10       7       7      4      4
//	a2:    12       9        8        8       8      8      8
//	a3:    11       11       11       11      6      6      3
//	median 11       10       10       8       7      6      4
//
// Taking each step's median over only the trials that logged it (the old rule) gave 9 at step 1,
// 7 at step 3, 6 at step 5 and 3 at step 10: each from a single trial, and 3 is not the median
// of the three trials' final values (4).
func TestCurvesCarryForward(t *testing.T) {
	a := []Series{
		{X: []float64{0, 3, 7}, Values: []float64{10, 7, 4}},
		{X: []float64{0, 1, 2}, Values: []float64{12, 9, 8}},
		{X: []float64{0, 5, 10}, Values: []float64{11, 6, 3}},
	}
	// Group b starts late, logs step 4 twice (the last logged counts) and a NaN (not an
	// observation).
	b := []Series{
		{X: []float64{4, 4, 6, 8}, Values: []float64{50, 20, math.NaN(), 10}},
	}
	c, err := BuildCurves([]string{"a", "b", "empty"}, [][]Series{a, b, {}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Groups) != 2 {
		t.Fatalf("got %d groups; want 2 (the empty one left out)", len(c.Groups))
	}
	ga := c.Groups[0]
	want := CurveGroup{Name: "a", Trials: 3,
		X:      []float64{0, 1, 2, 3, 4, 5, 7, 8, 10},
		Median: []float64{11, 10, 10, 8, 8, 7, 6, 6, 4},
		// Type-7 quartiles of three values: halfway between the lowest two and the highest two.
		Q1: []float64{10.5, 9.5, 9, 7.5, 7.5, 6.5, 5, 5, 3.5},
		Q3: []float64{11.5, 10.5, 10.5, 9.5, 9.5, 7.5, 7, 7, 6},
		N:  []int{3, 3, 3, 3, 3, 3, 3, 3, 3},
	}
	if !reflect.DeepEqual(ga, want) {
		t.Errorf("group a =\n%+v\nwant\n%+v", ga, want)
	}
	gb := c.Groups[1]
	if !reflect.DeepEqual(gb.X, []float64{4, 5, 7, 8, 10}) || !reflect.DeepEqual(gb.Median, []float64{20, 20, 20, 10, 10}) || gb.N[0] != 1 {
		t.Errorf("group b = %+v; want 20 from step 4 (the second value logged there), 10 from step 8 on", gb)
	}
	if w := c.Warnings(); len(w) != 2 || !strings.Contains(w[0], "trials end at different steps (from 2 to 10)") ||
		!strings.Contains(w[1], "trials start at different steps (from 0 to 4)") {
		t.Errorf("warnings = %q", w)
	}

	// --grid 3: R's seq(0, 10, length.out = 3) = 0, 5, 10.
	c, err = BuildCurves([]string{"a"}, [][]Series{a}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if g := c.Groups[0]; !reflect.DeepEqual(g.X, []float64{0, 5, 10}) || !reflect.DeepEqual(g.Median, []float64{11, 7, 4}) {
		t.Errorf("grid of 3 = %+v", g)
	}
	if _, err := BuildCurves([]string{"a"}, [][]Series{a}, 1); err == nil {
		t.Error("a grid of 1 point: want an error")
	}
}

// seq must give R's numbers bit for bit: R> sprintf("%.17g", seq(0, 1, length.out = 7)).
func TestSeqIsRs(t *testing.T) {
	got := seq(0, 1, 7)
	want := []float64{0, 0.16666666666666666, 0.33333333333333331, 0.5, 0.66666666666666663, 0.83333333333333326, 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("seq(0, 1, 7) = %v; want %v", got, want)
	}
}

func TestPlotsFromComparison(t *testing.T) {
	c, err := Compare(readTable(t, "three-algos.csv"), Options{By: "algo", Metric: "loss", PairBy: "seed", Direction: LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.BoxPlot(chart.Style{}); err != nil {
		t.Error(err)
	}
	if _, err := c.CDPlot(chart.Style{}); err != nil {
		t.Error(err)
	}
	u, _ := Compare(readTable(t, "three-algos.csv"), Options{By: "algo", Metric: "loss"})
	if _, err := u.CDPlot(chart.Style{}); err == nil {
		t.Error("CDPlot of an unpaired comparison: want an error")
	}
}
