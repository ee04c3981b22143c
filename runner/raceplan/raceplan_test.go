package raceplan

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

const raceExp = `{"name": "race", "matrix": {"name": "tune", "params": {"c": [1, 2, 3, 4, 5], "inst": ["i1", "i2", "i3", "i4"]},
  "seeds": 5, "race": {"metric": "cost", "direction": "min", "by": ["c"], "instances": ["inst"], "first": 5, "each": 2},
  "cmd": "run"}}`

// cost: configuration 1 is best, the others worse by 0.8 each step, with noise.
func cost(t experiment.Trial) float64 {
	r := rand.New(rand.NewPCG(uint64(*t.Seed), uint64(len(t.Name))))
	c, _ := t.Params["c"].(int64)
	return float64(c)*0.8 + r.NormFloat64()
}

// A race: trials end in plan order (one at a time, as -j 1), the planner is asked after each.
func TestRaceEliminatesAndRecords(t *testing.T) {
	exp, err := experiment.Parse("race.json", []byte(raceExp))
	if err != nil {
		t.Fatal(err)
	}
	if len(exp.Trials) != 5*5 {
		t.Fatalf("the plan starts with %d trials, want 25 (5 configurations x the first 5 blocks)", len(exp.Trials))
	}
	p, err := New("race.json", json.RawMessage(raceExp), exp.Races)
	if err != nil {
		t.Fatal(err)
	}
	plan := exp.Trials
	status := make([]store.Status, len(plan))
	for i := range status {
		status[i] = store.Pending
	}
	reasons := map[string]string{}
	for i := 0; i < len(plan); i++ {
		if status[i] == store.Pending {
			status[i] = store.Succeeded
		}
		view := make([]Trial, len(plan))
		for j, x := range plan {
			view[j] = Trial{Index: j, Name: x.Name, Status: status[j]}
			if status[j] == store.Succeeded {
				view[j].Values = map[string]float64{"cost": cost(x)}
			}
		}
		d := p.Decide(view)
		for _, dr := range d.Drop {
			if status[dr.Index] == store.Pending {
				status[dr.Index], reasons[plan[dr.Index].Name] = store.Eliminated, dr.Reason
			}
		}
		for _, a := range d.Add {
			plan = append(plan, a)
			status = append(status, store.Pending)
		}
		if d.Complete {
			break
		}
	}
	if len(plan) >= 5*20 {
		t.Errorf("the race ran %d trials: no configuration was eliminated", len(plan))
	}
	if len(reasons) == 0 {
		t.Fatal("no pending trial was dropped: eliminations leave no record")
	}
	for name, why := range reasons {
		if strings.HasPrefix(name, "tune-1-") || !strings.Contains(why, "eliminated by F-race") {
			t.Errorf("%s dropped: %s", name, why)
		}
	}
}
