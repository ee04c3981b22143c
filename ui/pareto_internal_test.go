package ui

import (
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

// paretoSearch reads a search block with the given objectives and constraints.
func paretoSearch(t *testing.T, objectives, constraints string) *experiment.Search {
	t.Helper()
	s, err := experiment.SearchOf("x.jsonnet", []byte(`{"search": {"name": "s", "cmd": "echo {{x}}", "space": {"x": {"low": 0, "high": 1}},
		"objectives": `+objectives+`, "constraints": `+constraints+`, "trials": 9}}`))
	if err != nil || s == nil {
		t.Fatal(s, err)
	}
	return s
}

func TestParetoPlot(t *testing.T) {
	s := paretoSearch(t, `["loss", {"metric": "acc", "direction": "max"}]`, `["over"]`)
	rec := func(name string, st store.Status, loss, acc, over float64) *store.TrialRecord {
		return &store.TrialRecord{Name: name, Status: st, Params: map[string]any{"x": loss}, Values: map[string]float64{"loss": loss, "acc": acc, "over": over}}
	}
	recs := map[string]*store.TrialRecord{
		"s-0": rec("s-0", store.Succeeded, 1, 0.5, 0),  // front
		"s-1": rec("s-1", store.Succeeded, 2, 0.4, 0),  // dominated by s-0
		"s-2": rec("s-2", store.Succeeded, 3, 0.9, -1), // front
		"s-3": rec("s-3", store.Succeeded, 0, 1, 1),    // would dominate all, but infeasible
		"s-4": rec("s-4", store.Pruned, 0, 1, 0),       // pruned: not completed
		"s-5": {Name: "s-5", Status: store.Running},
	}
	p := paretoPlot(s, recs)
	var front []string
	for _, r := range p.Front {
		front = append(front, r.Trial)
	}
	if strings.Join(front, " ") != "s-0 s-2" || p.Infeasible || p.Completed != 4 || len(p.Dots) != 4 {
		t.Fatalf("front %v, plot %+v", front, p)
	}
	if d := p.Dots[3]; d.Trial != "s-3" || d.Feasible || d.Front || p.Breaking != 1 || d.Cross() != "M74.5 10.5L81.5 17.5M74.5 17.5L81.5 10.5" {
		t.Errorf("the infeasible dot %+v (%d breaking): %s", d, p.Breaking, d.Cross())
	}
	// loss spans 0..3 over x 78..584, acc 0.4..1 over y 330..14. From s-0 (best loss) the step
	// keeps its acc until s-2's loss, then climbs to s-2.
	if p.Step != "246.7,277.3 584.0,277.3 584.0,66.7" {
		t.Errorf("step %q", p.Step)
	}
	if p.Better() != "upper left" || p.X.Label() != "loss (min)" || p.Y.Label() != "acc (max)" {
		t.Errorf("better %q, axes %q %q", p.Better(), p.X.Label(), p.Y.Label())
	}
	if p.Front[1].Params["x"] != "3" || p.Front[1].Values[1].String() != "0.9" {
		t.Errorf("front row %+v", p.Front[1])
	}

	// When no trial is feasible the front is of the least violating, and says so.
	recs = map[string]*store.TrialRecord{"s-0": rec("s-0", store.Succeeded, 1, 0.5, 2), "s-1": rec("s-1", store.Succeeded, 2, 0.5, 1)}
	if p := paretoPlot(s, recs); !p.Infeasible || len(p.Front) != 1 || p.Front[0].Trial != "s-1" {
		t.Errorf("no feasible trial: %+v", p)
	}

	// With three objectives the plot shows two and draws no staircase: the front's projection
	// is not one.
	s3 := paretoSearch(t, `["loss", "acc", "mem"]`, `[]`)
	recs = map[string]*store.TrialRecord{
		"s-0": {Name: "s-0", Status: store.Succeeded, Values: map[string]float64{"loss": 1, "acc": 1, "mem": 1}},
		"s-1": {Name: "s-1", Status: store.Succeeded, Values: map[string]float64{"loss": 2, "acc": 2, "mem": 0}},
	}
	if p := paretoPlot(s3, recs); len(p.Front) != 2 || p.Step != "" || len(p.Objectives) != 3 {
		t.Errorf("three objectives: %+v", p)
	}
	if p := paretoPlot(paretoSearch(t, `["loss"]`, `[]`), recs); p != nil {
		t.Errorf("one objective has no front to draw: %+v", p)
	}
}
