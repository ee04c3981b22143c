package experiment

import (
	"encoding/json"

	"github.com/jikken-dev/jikken/store"
)

// A run's manifest stores a large matrix as its evaluated experiment and a digest of the trials
// (store.Expansion); the store cannot parse experiments, so this package tells it how when it is
// linked.
func init() { store.SetExpander(expandStored) }

// expandStored gives the trials the evaluated experiment of a stored manifest expands to, with
// no cap on their number: the run was planned with them already.
func expandStored(file string, evaluated json.RawMessage) ([]Trial, error) {
	exp, err := ParseMax(file, evaluated, -1)
	if err != nil {
		return nil, err
	}
	return exp.Trials, nil
}
