package ui

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

func TestSearchPlot(t *testing.T) {
	s, err := experiment.SearchOf("x.jsonnet", []byte(`{"search": {"name": "s", "cmd": "echo {{x}}", "space": {"x": {"low": 0, "high": 1}}, "objective": "loss", "trials": 9}}`))
	if err != nil || s == nil {
		t.Fatal(s, err)
	}
	rec := func(name string, st store.Status, v float64) *store.TrialRecord {
		return &store.TrialRecord{Name: name, Status: st, Values: map[string]float64{"loss": v}}
	}
	recs := map[string]*store.TrialRecord{
		"s-0": rec("s-0", store.Succeeded, 3),
		"s-1": rec("s-1", store.Pruned, 5),
		"s-2": {Name: "s-2", Status: store.Failed},
		"s-3": rec("s-3", store.Succeeded, 1),
		"s-5": rec("s-5", store.Succeeded, 0), // after a gap: not in the history
	}
	p := searchPlot(s, recs)
	if p.Trials != 4 || len(p.Dots) != 3 || p.Low != 1 || p.High != 5 || p.Max {
		t.Fatalf("plot %+v", p)
	}
	if d := p.Dots[1]; d.Trial != "s-1" || !d.Pruned || d.Y != plotPadY {
		t.Fatalf("the pruned dot %+v", d)
	}
	// The best so far: 3 from s-0 until s-3 brings 1, then flat to the last trial.
	if p.Best != "60.0,100.0 590.0,100.0 590.0,190.0 590.0,190.0" {
		t.Fatalf("best line %q", p.Best)
	}
}

// A search whose trials have no value yet is still JSON: the live run page polls it, and one
// infinity in the answer would void all of it.
func TestSearchPlotWithoutValuesIsJSON(t *testing.T) {
	s, err := experiment.SearchOf("x.jsonnet", []byte(`{"search": {"name": "s", "cmd": "echo {{x}}", "space": {"x": {"low": 0, "high": 1}},
		"objectives": ["loss", {"metric": "acc", "direction": "max"}], "trials": 9}}`))
	if err != nil || s == nil {
		t.Fatal(s, err)
	}
	recs := map[string]*store.TrialRecord{"s-0": {Name: "s-0", Status: store.Running}}
	for _, v := range []any{searchPlot(s, recs), paretoPlot(s, recs)} {
		if b, err := json.Marshal(v); err != nil {
			t.Errorf("%T: %v", v, err)
		} else if !bytes.Contains(b, []byte(`"low":0`)) {
			t.Errorf("%s", b)
		}
	}
}
