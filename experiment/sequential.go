package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jikken-dev/jikken/sequential"
)

// Sequential is a matrix whose seeds are added in batches while the run runs, until the
// comparison it names is decided (seeds: {until: ..., batch, min, max}); package sequential
// makes the decision. The plan starts with seeds 0..Min-1.
type Sequential struct {
	// Group is the matrix's group name.
	Group string `json:"group"`
	// Metric is compared between the values of the param By, in blocks of the params Blocks
	// (and the seed); Direction is "min" (lower is better) or "max".
	Metric    string   `json:"metric"`
	Direction string   `json:"direction"`
	By        string   `json:"by"`
	Blocks    []string `json:"blocks,omitempty"`
	Alpha     float64  `json:"alpha"`
	Spending  string   `json:"spending"`
	Futility  float64  `json:"futility"`
	Min       int      `json:"min"`
	Batch     int      `json:"batch"`
	Max       int      `json:"max"`
}

// Sequential seeds' defaults.
const (
	DefaultSeqAlpha    = 0.05
	DefaultSeqFutility = 0.1
	DefaultSeqMin      = 5
	DefaultSeqBatch    = 5
	DefaultSeqMax      = 100
)

var (
	seqFields   = []string{"until", "min", "batch", "max"}
	untilFields = []string{"metric", "direction", "by", "blocks", "alpha", "spending", "futility"}
)

// Design is the comparison's sequential design for groups configurations.
func (s *Sequential) Design(groups int) (sequential.Design, error) {
	looks, err := sequential.Looks(s.Min, s.Batch, s.Max)
	if err != nil {
		return sequential.Design{}, err
	}
	sp, err := sequential.ParseSpending(s.Spending)
	if err != nil {
		return sequential.Design{}, err
	}
	return sequential.Design{Groups: groups, Looks: looks, Alpha: s.Alpha, Spending: sp, Futility: s.Futility}, nil
}

// sequentialSeeds reads a matrix's seeds object. It returns the first look's seeds (0..min-1),
// or false when the object is wrong (every problem reported).
func (p *parser) sequentialSeeds(obj map[string]any, group, where string, axes []axis, excluded bool) (*Sequential, []int64, bool) {
	where += ".seeds"
	s := &Sequential{Group: group, Alpha: DefaultSeqAlpha, Futility: DefaultSeqFutility, Spending: "obrien-fleming",
		Min: DefaultSeqMin, Batch: DefaultSeqBatch, Max: DefaultSeqMax}
	ok := true
	bad := func(field, format string, args ...any) {
		p.ps.add("", where+field, format, args...)
		ok = false
	}
	for _, k := range sortedKeys(obj) {
		if !contains(seqFields, k) {
			bad("."+k, "unknown field%s; sequential seeds have %s", suggest(k, seqFields), strings.Join(seqFields, ", "))
		}
	}
	for _, f := range []struct {
		name string
		to   *int
	}{{"min", &s.Min}, {"batch", &s.Batch}, {"max", &s.Max}} {
		if v, has := obj[f.name]; has {
			n, err := toInt(v)
			if err != nil || n > 1_000_000 {
				bad("."+f.name, "must be a whole number of seeds")
				continue
			}
			*f.to = int(n)
		}
	}
	until, isObj := obj["until"].(map[string]any)
	if !isObj {
		bad(".until", "must be an object: {metric, direction, by, blocks, alpha}")
		return nil, nil, false
	}
	for _, k := range sortedKeys(until) {
		if !contains(untilFields, k) {
			bad(".until."+k, "unknown field%s", suggest(k, untilFields))
		}
	}
	str := func(field string, to *string, required bool) {
		v, has := until[field]
		if !has {
			if required {
				bad(".until."+field, "is required")
			}
			return
		}
		if x, isStr := v.(string); isStr && x != "" {
			*to = x
			return
		}
		bad(".until."+field, "must be a non-empty string")
	}
	str("metric", &s.Metric, true)
	str("direction", &s.Direction, true)
	str("by", &s.By, true)
	str("spending", &s.Spending, false)
	if s.Direction != "" && s.Direction != "min" && s.Direction != "max" {
		bad(".until.direction", "%q: want min (lower is better) or max", s.Direction)
	}
	if _, err := sequential.ParseSpending(s.Spending); err != nil {
		bad(".until.spending", "%v", err)
	}
	num := func(field string, to *float64) {
		if v, has := until[field]; has {
			n, isNum := v.(json.Number)
			f, err := n.Float64()
			if !isNum || err != nil {
				bad(".until."+field, "must be a number")
				return
			}
			*to = f
		}
	}
	num("alpha", &s.Alpha)
	num("futility", &s.Futility)
	if !(s.Alpha > 0 && s.Alpha < 1) {
		bad(".until.alpha", "%v is outside (0, 1); use a level such as 0.05", s.Alpha)
	}
	if !(s.Futility >= 0 && s.Futility < 1) {
		bad(".until.futility", "%v: want a conditional power in [0, 1), such as 0.1 (0: never stop a pair for futility)", s.Futility)
	}
	if v, has := until["blocks"]; has {
		list, err := toStringList(v)
		if err != nil {
			bad(".until.blocks", "must be an array of matrix param names")
		}
		s.Blocks = list
	}
	if _, err := sequential.Looks(s.Min, s.Batch, s.Max); err != nil {
		for _, e := range strings.Split(err.Error(), "\n") {
			field, _, _ := strings.Cut(e, " ")
			bad("."+field, "%s", e)
		}
	}
	names := make([]string, len(axes))
	for i, a := range axes {
		names[i] = a.name
	}
	if s.By != "" {
		if i := slices.Index(names, s.By); i < 0 {
			bad(".until.by", "%q is not a param of the matrix%s", s.By, suggest(s.By, names))
		} else if len(axes[i].values) < 2 {
			bad(".until.by", "%q has one value; a comparison needs two or more", s.By)
		}
	}
	for _, b := range s.Blocks {
		if !slices.Contains(names, b) || b == s.By {
			bad(".until.blocks", "%q is not a matrix param other than by%s", b, suggest(b, names))
		}
	}
	for _, n := range names {
		if slices.Contains(names, s.By) && n != s.By && !slices.Contains(s.Blocks, n) {
			bad(".until.blocks", "the matrix param %q is neither by nor a block; every param must be one or the other, so that each seed gives every configuration one value per block", n)
		}
	}
	if excluded {
		bad("", "sequential seeds need every block complete; drop exclude")
	}
	if !ok {
		return nil, nil, false
	}
	seeds := make([]int64, s.Min)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	return s, seeds, true
}

// SeedTrials returns the trials the sequential matrix group has with n seeds (0..n-1), in plan
// order: evaluated (the run's experiment) is parsed again with that matrix's seeds set to n.
func SeedTrials(file string, evaluated []byte, group string, n int) ([]Trial, error) {
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(evaluated))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("read the evaluated experiment: %w", err)
	}
	var list []any
	switch x := top["matrix"].(type) {
	case map[string]any:
		list = []any{x}
	case []any:
		list = x
	}
	found := false
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m["name"] == group {
			m["seeds"] = json.Number(fmt.Sprint(n))
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("the experiment has no matrix %q", group)
	}
	b, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	exp, err := ParseMax(file, b, -1)
	if err != nil {
		return nil, fmt.Errorf("expand %d seeds of %s: %w", n, group, err)
	}
	var out []Trial
	for _, t := range exp.Trials {
		if t.Group == group {
			out = append(out, t)
		}
	}
	return out, nil
}
