package prune

import (
	"encoding/json"
	"testing"
)

// FuzzNew feeds New option maps decoded from JSON: it must refuse or accept them without
// panicking, and a pruner it accepts must answer on a few curves.
func FuzzNew(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"percentile": 25}`, `{"warmup_steps": 3, "min_trials": 2, "startup_trials": 0}`,
		`{"min_resource": 10, "reduction_factor": 3, "max_resource": 100}`, `{"max_resource": 100, "brackets": 2}`,
		`{"eta": 1e300}`, `{"min_resource": -1}`, `{"percentile": "x"}`, `{"max_resource": 9007199254740993}`,
	} {
		for _, name := range Names() {
			f.Add(name, seed)
		}
	}
	curves := []Curve{line(0, true, 3, 2, 1), line(1, true, 2, 2, 2), line(2, false, 9, 9, 9, 9), line(3, false, 1)}
	f.Fuzz(func(t *testing.T, name, options string) {
		var o map[string]any
		if json.Unmarshal([]byte(options), &o) != nil {
			return
		}
		p, err := New(name, o)
		if err != nil {
			return
		}
		for _, c := range curves {
			if _, why := p.Prune(c.Number, curves, true); why == "" {
				t.Errorf("%s %s: no reason for trial %d", name, options, c.Number)
			}
		}
	})
}
