package report

import (
	"reflect"
	"testing"
)

func TestBands(t *testing.T) {
	bands := Bands([]string{"a", "b", "empty"}, [][]Series{
		{
			{Steps: []float64{0, 1, 2}, Values: []float64{10, 5, 1}},
			{Steps: []float64{0, 1, 1}, Values: []float64{20, 9, 7}}, // step 1 twice: the last counts
			{Steps: []float64{0}, Values: []float64{30}},
		},
		{{Steps: []float64{3}, Values: []float64{4}}},
		{},
	})
	if len(bands) != 2 {
		t.Fatalf("got %d bands; want 2 (the empty group left out)", len(bands))
	}
	a := bands[0]
	if !reflect.DeepEqual(a.Steps, []float64{0, 1, 2}) || !reflect.DeepEqual(a.Median, []float64{20, 6, 1}) ||
		!reflect.DeepEqual(a.Q1, []float64{15, 5.5, 1}) || !reflect.DeepEqual(a.Q3, []float64{25, 6.5, 1}) {
		t.Errorf("band a = %+v", a)
	}
}

func TestPlotsFromComparison(t *testing.T) {
	c, err := Compare(readTable(t, "three-algos.csv"), Options{By: "algo", Metric: "loss", PairBy: "seed", Direction: LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.BoxPlot(); err != nil {
		t.Error(err)
	}
	if _, err := c.CDPlot(); err != nil {
		t.Error(err)
	}
	u, _ := Compare(readTable(t, "three-algos.csv"), Options{By: "algo", Metric: "loss"})
	if _, err := u.CDPlot(); err == nil {
		t.Error("CDPlot of an unpaired comparison: want an error")
	}
}
