package store

import (
	"slices"

	"github.com/jikken-dev/jikken/trial"
)

// Planned returns a run's plan as its records know it: the manifest's trials, then the trials a
// plan that grows (a search) added while it ran, which only their records name, by index. An
// added trial is rebuilt from its record (name, group, params, seed, image): enough to read its
// results, not to run it.
func Planned(m *Manifest, recs map[string]*TrialRecord) []trial.Trial {
	known := make(map[string]bool, len(m.Trials))
	for _, t := range m.Trials {
		known[t.Name] = true
	}
	var added []*TrialRecord
	for name, r := range recs {
		if !known[name] {
			added = append(added, r)
		}
	}
	if len(added) == 0 {
		return m.Trials
	}
	slices.SortFunc(added, func(a, b *TrialRecord) int {
		if a.Index != b.Index {
			return a.Index - b.Index
		}
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	out := slices.Clip(m.Trials)
	for _, r := range added {
		out = append(out, trial.Trial{Name: r.Name, Index: r.Index, Group: r.Group, Params: r.Params, Seed: r.Seed, Image: r.Image})
	}
	return out
}
