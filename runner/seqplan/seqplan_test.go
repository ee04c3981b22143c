package seqplan

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

const seqExp = `{"name": "seq", "matrix": {"name": "opt", "params": {"algo": ["a", "b", "c"], "fn": ["f1", "f2"]},
  "seeds": {"until": {"metric": "best", "direction": "min", "by": "algo", "blocks": ["fn"]}, "batch": 5, "min": 5, "max": 30},
  "cmd": "run"}}`

// outcome is a trial's metric: algo a is clearly best, c clearly worst, with noise.
func outcome(t experiment.Trial) float64 {
	r := rand.New(rand.NewPCG(uint64(*t.Seed), uint64(len(t.Name))))
	shift := map[any]float64{"a": 0, "b": 2, "c": 4}[t.Params["algo"]]
	return shift + r.NormFloat64()
}

// runPlan plays a run: every trial of the plan ends (in order), the planner is asked after each,
// until it says the plan is complete. stopAt > 0 ends the run early after that many trials
// ended, as a crash would.
func runPlan(t *testing.T, p *Planner, plan []experiment.Trial, done map[string]*store.TrialRecord, stopAt int) ([]experiment.Trial, map[string]*store.TrialRecord, bool) {
	t.Helper()
	ended := 0
	for i := 0; i < len(plan); i++ {
		tr := plan[i]
		if done[tr.Name] == nil || done[tr.Name].Status != store.Succeeded {
			if stopAt > 0 && ended == stopAt {
				return plan, done, false
			}
			done[tr.Name] = &store.TrialRecord{Name: tr.Name, Status: store.Succeeded, Seed: tr.Seed}
			ended++
		}
		view := make([]Trial, len(plan))
		for j, x := range plan {
			v := Trial{Name: x.Name, Seed: x.Seed, Status: store.Pending}
			if rec := done[x.Name]; rec != nil && rec.Status == store.Succeeded {
				v.Status, v.Values = rec.Status, map[string]float64{"best": outcome(x)}
			}
			view[j] = v
		}
		d := p.Decide(view)
		if d.Abort != "" {
			t.Fatal(d.Abort)
		}
		// The core journals an added trial (a pending record) before it starts.
		for _, a := range d.Add {
			done[a.Name] = &store.TrialRecord{Name: a.Name, Status: store.Pending, Seed: a.Seed}
		}
		plan = append(plan, d.Add...)
		if d.Complete {
			return plan, done, true
		}
	}
	return plan, done, false
}

func load(t *testing.T) (*experiment.Experiment, *Planner) {
	t.Helper()
	exp, err := experiment.Parse("seq.json", []byte(seqExp))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New("seq.json", json.RawMessage(seqExp), exp.Sequential)
	if err != nil {
		t.Fatal(err)
	}
	return exp, p
}

// A clear ranking stops after few seeds, well before max; a run that ends in the middle and is
// resumed from its records adds exactly the same trials.
func TestPlannerStopsAndResumes(t *testing.T) {
	exp, p := load(t)
	if len(exp.Trials) != 3*2*5 {
		t.Fatalf("the plan starts with %d trials, want 30 (5 seeds)", len(exp.Trials))
	}
	whole, _, ok := runPlan(t, p, exp.Trials, map[string]*store.TrialRecord{}, 0)
	if !ok {
		t.Fatal("the plan never completed")
	}
	if n := len(whole); n >= 3*2*30 || n%6 != 0 {
		t.Errorf("%d trials: want whole seeds, fewer than max's 180", n)
	}
	for cut := 1; cut < len(whole); cut += 7 {
		_, p2 := load(t)
		plan, journal, _ := runPlan(t, p2, exp.Trials, map[string]*store.TrialRecord{}, cut)
		_, p3 := load(t)
		again := append(append([]experiment.Trial(nil), exp.Trials...), p3.Resume(journal)...)
		if len(again) != len(plan) {
			t.Fatalf("cut %d: resume rebuilt %d trials, the run had %d", cut, len(again), len(plan))
		}
		final, _, ok := runPlan(t, p3, again, journal, 0)
		if !ok || len(final) != len(whole) {
			t.Fatalf("cut %d: resumed run has %d trials (complete %v), want %d", cut, len(final), ok, len(whole))
		}
		for i := range final {
			if final[i].Name != whole[i].Name {
				t.Fatalf("cut %d: trial %d is %s, want %s", cut, i, final[i].Name, whole[i].Name)
			}
		}
	}
}
