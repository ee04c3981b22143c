package seqplan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/sequential"
	"github.com/jikken-dev/jikken/store"
)

// Planner grows every sequential matrix of a run. Its answers depend only on the trials it is
// shown, so a resumed run, shown the same records, gets the same ones.
type Planner struct {
	groups []*group
}

// group is one sequential matrix: its design, and every trial it may have up to its max seeds.
type group struct {
	spec   experiment.Sequential
	bounds *sequential.Bounds
	// configs are the values of By, blocks the combinations of the block params (as keys),
	// both in the order the matrix expands them.
	configs, blocks []string
	// all are the trials of max seeds, by seed then in matrix order.
	all []experiment.Trial
	// cell maps a trial name to its config and block.
	cell map[string][2]int
}

// Trial is a trial of the plan as the planner sees it (core.TrialView's fields it reads).
type Trial struct {
	Name   string
	Seed   *int64
	Status store.Status
	Values map[string]float64
}

// New builds the planner of the sequential matrices of a run's experiment (file and its
// evaluated JSON, as the manifest records them).
func New(file string, evaluated []byte, specs []experiment.Sequential) (*Planner, error) {
	p := &Planner{}
	for _, s := range specs {
		all, err := experiment.SeedTrials(file, evaluated, s.Group, s.Max)
		if err != nil {
			return nil, fmt.Errorf("sequential seeds of %s: %w", s.Group, err)
		}
		g := &group{spec: s, cell: map[string][2]int{}}
		for _, t := range all {
			c, b := fmt.Sprint(t.Params[s.By]), blockKey(t.Params, s.Blocks)
			if !slices.Contains(g.configs, c) {
				g.configs = append(g.configs, c)
			}
			if !slices.Contains(g.blocks, b) {
				g.blocks = append(g.blocks, b)
			}
			g.cell[t.Name] = [2]int{slices.Index(g.configs, c), slices.Index(g.blocks, b)}
		}
		// Stable: within a seed, trials keep the matrix's order.
		slices.SortStableFunc(all, func(a, b experiment.Trial) int { return cmp.Compare(*a.Seed, *b.Seed) })
		g.all = all
		d, err := s.Design(len(g.configs))
		if err != nil {
			return nil, fmt.Errorf("sequential seeds of %s: %w", s.Group, err)
		}
		if g.bounds, err = d.Boundaries(); err != nil {
			return nil, fmt.Errorf("sequential seeds of %s: %w", s.Group, err)
		}
		p.groups = append(p.groups, g)
	}
	return p, nil
}

func blockKey(params map[string]any, blocks []string) string {
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		parts[i] = fmt.Sprint(params[b])
	}
	return strings.Join(parts, ",")
}

// Resume returns the trials the planner had added before a runner ended, rebuilt from the run's
// records by name, in the order they were added: the plan's trials then these are the plan the
// earlier runner had.
func (p *Planner) Resume(journal map[string]*store.TrialRecord) []experiment.Trial {
	var out []experiment.Trial
	for _, g := range p.groups {
		for _, t := range g.all {
			if *t.Seed >= int64(g.spec.Min) && journal[t.Name] != nil {
				out = append(out, t)
			}
		}
	}
	return out
}

// Decision is what the planner answers: trials to add, whether every group is decided, and why
// the plan cannot go on (abort).
type Decision struct {
	Add      []experiment.Trial
	Complete bool
	Abort    string
}

// Decide answers after the trials (every trial of the plan so far, by index) changed.
func (p *Planner) Decide(trials []Trial) Decision {
	var d Decision
	complete := true
	for _, g := range p.groups {
		add, done, abort := g.decide(trials)
		d.Add = append(d.Add, add...)
		complete = complete && done
		if abort != "" {
			return Decision{Complete: true, Abort: abort}
		}
	}
	d.Complete = complete && len(d.Add) == 0
	return d
}

func (g *group) decide(trials []Trial) (add []experiment.Trial, done bool, abort string) {
	seeds, planned, present := g.complete(trials)
	// A batch only partly journaled (a runner ended while adding it) is completed first.
	for _, t := range g.all {
		if *t.Seed < int64(planned) && !present[t.Name] {
			add = append(add, t)
		}
	}
	if len(add) > 0 || len(seeds) < planned {
		return add, false, ""
	}
	if len(seeds) > 0 && !g.anyValue(trials) {
		return nil, true, fmt.Sprintf("sequential seeds of %s: no trial logged the metric %q; log it (or fix until.metric)", g.spec.Group, g.spec.Metric)
	}
	dec, err := g.bounds.Decide(seeds)
	if err != nil {
		return nil, true, fmt.Sprintf("sequential seeds of %s: %v", g.spec.Group, err)
	}
	if dec.Stop || dec.Seeds <= planned {
		return nil, dec.Stop, ""
	}
	for _, t := range g.all {
		if s := *t.Seed; s >= int64(planned) && s < int64(dec.Seeds) {
			add = append(add, t)
		}
	}
	return add, false, ""
}

// complete returns the group's results of the seeds whose every trial is final, from seed 0 up
// to the first that is not; planned is how many seeds the plan has (some trial of each); present
// names the group's trials in the plan.
func (g *group) complete(trials []Trial) (seeds []sequential.Seed, planned int, present map[string]bool) {
	present = map[string]bool{}
	var cells [][][]*Trial // seed -> block -> config
	for i := range trials {
		t := &trials[i]
		at, ok := g.cell[t.Name]
		if !ok || t.Seed == nil {
			continue
		}
		present[t.Name] = true
		s := int(*t.Seed)
		for len(cells) <= s {
			c := make([][]*Trial, len(g.blocks))
			for b := range c {
				c[b] = make([]*Trial, len(g.configs))
			}
			cells = append(cells, c)
		}
		cells[s][at[1]][at[0]] = t
	}
	planned = len(cells)
	for _, c := range cells {
		seed := make(sequential.Seed, len(g.blocks))
		for b, row := range c {
			seed[b] = make([]float64, len(g.configs))
			for k, t := range row {
				if t == nil || !t.Status.Final() {
					return seeds, planned, present
				}
				seed[b][k] = g.value(t)
			}
		}
		seeds = append(seeds, seed)
	}
	return seeds, planned, present
}

// value is a final trial's metric, oriented so that lower is better; a trial that did not
// succeed, or logged no value, is the worst (+Inf).
func (g *group) value(t *Trial) float64 {
	v, ok := t.Values[g.spec.Metric]
	if t.Status != store.Succeeded || !ok || math.IsNaN(v) {
		return math.Inf(1)
	}
	if g.spec.Direction == "max" {
		return -v
	}
	return v
}

func (g *group) anyValue(trials []Trial) bool {
	for _, t := range trials {
		if _, ok := g.cell[t.Name]; ok {
			if _, has := t.Values[g.spec.Metric]; has {
				return true
			}
		}
	}
	return false
}
