package raceplan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/racing"
	"github.com/jikken-dev/jikken/store"
)

// Planner races every raced matrix of a run. Its answers depend only on the trials it is shown.
type Planner struct {
	races []*race
}

type race struct {
	spec          experiment.Race
	rule          racing.Race
	all           []experiment.Trial // by block, then in matrix order
	config, block []int              // of each trial of all
	at            map[string]int     // trial name -> place in all
	// names are the configurations' params as people read them (c=1,lr=0.1), by index.
	names []string
	total int // blocks
}

// Trial is a trial of the plan as the planner sees it (core.TrialView's fields it reads).
type Trial struct {
	Index  int
	Name   string
	Status store.Status
	Values map[string]float64
}

// Drop is a trial of an eliminated configuration, and why: a pending one is not run, one that
// has started keeps its result and notes why.
type Drop struct {
	Index  int
	Reason string
}

// Decision is the planner's answer.
type Decision struct {
	Add      []experiment.Trial
	Drop     []Drop
	Complete bool
}

// New builds the planner of the races of a run's experiment (file and evaluated JSON, as the
// manifest records them).
func New(file string, evaluated []byte, specs []experiment.Race) (*Planner, error) {
	p := &Planner{}
	for _, s := range specs {
		all, config, block, err := experiment.RaceTrials(file, evaluated, &s)
		if err != nil {
			return nil, err
		}
		order := make([]int, len(all))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return block[a] - block[b] })
		r := &race{spec: s, at: map[string]int{}}
		for _, i := range order {
			r.at[all[i].Name] = len(r.all)
			r.all, r.config, r.block = append(r.all, all[i]), append(r.config, config[i]), append(r.block, block[i])
			r.total = max(r.total, block[i]+1)
			if config[i] == len(r.names) {
				r.names = append(r.names, configName(all[i].Params, s.By))
			}
		}
		r.rule = s.Racing(len(r.names))
		p.races = append(p.races, r)
	}
	return p, nil
}

// Resume returns the trials the planner had added before a runner ended, from the run's records
// by name, in the order they were added.
func (p *Planner) Resume(journal map[string]*store.TrialRecord) []experiment.Trial {
	var out []experiment.Trial
	for _, r := range p.races {
		for i, t := range r.all {
			if r.block[i] >= r.spec.First && journal[t.Name] != nil {
				out = append(out, t)
			}
		}
	}
	return out
}

// Decide answers after the trials (every trial of the plan so far, by index) changed.
func (p *Planner) Decide(trials []Trial) Decision {
	var d Decision
	complete := true
	for _, r := range p.races {
		add, drop, done := r.decide(trials)
		d.Add, d.Drop = append(d.Add, add...), append(d.Drop, drop...)
		complete = complete && done
	}
	d.Complete = complete && len(d.Add) == 0
	return d
}

// replay feeds the race the blocks that are complete for the configurations racing at each
// point, and returns the decision and the trials of the race in the plan.
func (r *race) replay(trials []Trial) (racing.Decision, map[int]*Trial) {
	inPlan := map[int]*Trial{}
	for i := range trials {
		if at, ok := r.at[trials[i].Name]; ok {
			inPlan[at] = &trials[i]
		}
	}
	values := make([][]float64, r.total)
	final := make([][]bool, r.total)
	for b := range values {
		values[b], final[b] = make([]float64, len(r.names)), make([]bool, len(r.names))
		for c := range values[b] {
			values[b][c] = math.NaN()
		}
	}
	for at, t := range inPlan {
		if t.Status.Final() {
			values[r.block[at]][r.config[at]] = r.value(t)
			final[r.block[at]][r.config[at]] = true
		}
	}
	n := 0
	for {
		dec, err := r.rule.Decide(values[:n], r.total)
		if err != nil {
			panic(err) // the experiment's validation checked the rule
		}
		if dec.Done || dec.Blocks <= n {
			return dec, inPlan
		}
		for b := n; b < dec.Blocks; b++ {
			for c, alive := range dec.Alive {
				if alive && !final[b][c] {
					return dec, inPlan
				}
			}
		}
		n = dec.Blocks
	}
}

func (r *race) decide(trials []Trial) (add []experiment.Trial, drop []Drop, done bool) {
	dec, inPlan := r.replay(trials)
	why := map[int]string{}
	for _, e := range dec.Eliminated {
		// The configuration is named so that a trial's reason alone says what was eliminated.
		why[e.Config] = fmt.Sprintf("%s %s (best: %s)", r.names[e.Config], e.Test, r.names[e.Best])
	}
	for at, t := range inPlan {
		// Started ones too: the core lets them run on and notes the test on their records.
		if reason, out := why[r.config[at]]; out && t.Status != store.Eliminated {
			drop = append(drop, Drop{Index: t.Index, Reason: reason})
		}
	}
	slices.SortFunc(drop, func(a, b Drop) int { return a.Index - b.Index })
	if dec.Done {
		return nil, drop, true
	}
	// The next test's blocks, and one step beyond, so that an elimination finds pending trials
	// to drop (and record) rather than none.
	upto := min(dec.Blocks+r.spec.Each, r.total)
	for at, t := range r.all {
		if r.block[at] < upto && dec.Alive[r.config[at]] && inPlan[at] == nil {
			add = append(add, t)
		}
	}
	return add, drop, false
}

// configName is a configuration's params, by the race's by.
func configName(params map[string]any, by []string) string {
	parts := make([]string, len(by))
	for i, b := range by {
		parts[i] = fmt.Sprintf("%s=%v", b, params[b])
	}
	return strings.Join(parts, ",")
}

// value is a final trial's metric, oriented so that lower is better; a trial that did not
// succeed, or logged no value, is the worst (+Inf).
func (r *race) value(t *Trial) float64 {
	v, ok := t.Values[r.spec.Metric]
	if t.Status != store.Succeeded || !ok || math.IsNaN(v) {
		return math.Inf(1)
	}
	if r.spec.Direction == "max" {
		return -v
	}
	return v
}
