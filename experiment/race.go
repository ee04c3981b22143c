package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jikken-dev/jikken/racing"
)

// Race is a matrix raced as irace's F-race races configurations (race: {...}): the values of
// the By params are the configurations, each combination of the Instances params with each seed
// a block, taken seed by seed, instances in matrix order. The plan starts with the First blocks;
// package racing decides which configurations go on (runner/raceplan adds their next blocks).
type Race struct {
	Group     string   `json:"group"`
	Metric    string   `json:"metric"`
	Direction string   `json:"direction"`
	By        []string `json:"by"`
	Instances []string `json:"instances"`
	Seeds     []int64  `json:"seeds"`
	First     int      `json:"first"`
	Each      int      `json:"each"`
	Alpha     float64  `json:"alpha"`
	Survivors int      `json:"survivors"`
}

var raceFields = []string{"metric", "direction", "by", "instances", "first", "each", "alpha", "survivors"}

// Racing is the race's decision rule for configs configurations.
func (r *Race) Racing(configs int) racing.Race {
	return racing.Race{Configs: configs, First: r.First, Each: r.Each, Alpha: r.Alpha, Survivors: r.Survivors}
}

// raceSpec reads a matrix's race object, or reports every problem and returns nil.
func (p *parser) raceSpec(v any, group, where string, axes []axis, seeds []int64, excluded bool) *Race {
	where += ".race"
	obj, isObj := v.(map[string]any)
	if !isObj {
		p.ps.add("", where, "must be an object: {metric, direction, by, instances, first, each, alpha, survivors}")
		return nil
	}
	r := &Race{Group: group, Seeds: seeds, First: 5, Each: 1, Alpha: 0.05, Survivors: 1}
	ok := true
	bad := func(field, format string, args ...any) {
		p.ps.add("", where+field, format, args...)
		ok = false
	}
	for _, k := range sortedKeys(obj) {
		if !contains(raceFields, k) {
			bad("."+k, "unknown field%s", suggest(k, raceFields))
		}
	}
	for _, f := range []struct {
		name string
		to   *string
	}{{"metric", &r.Metric}, {"direction", &r.Direction}} {
		if s, isStr := obj[f.name].(string); isStr && s != "" {
			*f.to = s
		} else {
			bad("."+f.name, "is required: a non-empty string")
		}
	}
	if r.Direction != "" && r.Direction != "min" && r.Direction != "max" {
		bad(".direction", "%q: want min (lower is better) or max", r.Direction)
	}
	for _, f := range []struct {
		name string
		to   *[]string
	}{{"by", &r.By}, {"instances", &r.Instances}} {
		list, err := toStringList(obj[f.name])
		if err != nil || len(list) == 0 {
			bad("."+f.name, "is required: an array of matrix param names")
		}
		*f.to = list
	}
	for _, f := range []struct {
		name string
		to   *int
	}{{"first", &r.First}, {"each", &r.Each}, {"survivors", &r.Survivors}} {
		if x, has := obj[f.name]; has {
			n, err := toInt(x)
			if err != nil || n > 1_000_000 {
				bad("."+f.name, "must be a whole number")
				continue
			}
			*f.to = int(n)
		}
	}
	if x, has := obj["alpha"]; has {
		n, isNum := x.(json.Number)
		f, err := n.Float64()
		if !isNum || err != nil {
			bad(".alpha", "must be a number")
		} else {
			r.Alpha = f
		}
	}
	names := make([]string, len(axes))
	for i, a := range axes {
		names[i] = a.name
	}
	for _, n := range append(slices.Clone(r.By), r.Instances...) {
		if !slices.Contains(names, n) {
			bad("", "%q is not a param of the matrix%s", n, suggest(n, names))
		}
	}
	for _, n := range names {
		if slices.Contains(r.By, n) == slices.Contains(r.Instances, n) {
			bad("", "the matrix param %q must be in exactly one of by and instances", n)
		}
	}
	if len(seeds) == 0 {
		bad("", "a race needs seeds (a count or a list)")
	}
	if excluded {
		bad("", "a race needs every configuration on every instance; drop exclude")
	}
	configs := 1
	for _, a := range axes {
		if slices.Contains(r.By, a.name) {
			configs *= len(a.values)
		}
	}
	if err := r.Racing(configs).Validate(); err != nil {
		for _, e := range strings.Split(err.Error(), "\n") {
			bad("", "%s", e)
		}
	}
	if !ok {
		return nil
	}
	return r
}

// raceBlocks returns the block of each generated trial (params and seed): blocks are taken
// seed by seed, in the race's seed order, and within a seed by instance values, in the order
// they first appear.
func raceBlocks(r *Race, params []map[string]any, seeds []int64) []int {
	var instances []string
	keys := make([]int, len(params))
	for i, p := range params {
		k := paramKey(p, r.Instances)
		j := slices.Index(instances, k)
		if j < 0 {
			instances = append(instances, k)
			j = len(instances) - 1
		}
		keys[i] = j
	}
	out := make([]int, len(params))
	for i := range params {
		out[i] = slices.Index(r.Seeds, seeds[i])*len(instances) + keys[i]
	}
	return out
}

func paramKey(params map[string]any, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprint(plain(params[n]))
	}
	return strings.Join(parts, ",")
}

// RaceTrials returns every trial the raced matrix group may run, in plan order, with each
// trial's configuration and block: evaluated is parsed again with the race left out.
func RaceTrials(file string, evaluated []byte, r *Race) (trials []Trial, config, block []int, err error) {
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(evaluated))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, nil, nil, fmt.Errorf("read the evaluated experiment: %w", err)
	}
	var list []any
	switch x := top["matrix"].(type) {
	case map[string]any:
		list = []any{x}
	case []any:
		list = x
	}
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m["name"] == r.Group {
			delete(m, "race")
		}
	}
	b, err := json.Marshal(top)
	if err != nil {
		return nil, nil, nil, err
	}
	exp, err := ParseMax(file, b, -1)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("expand the race %s: %w", r.Group, err)
	}
	var configs []string
	var params []map[string]any
	var seeds []int64
	for _, t := range exp.Trials {
		if t.Group != r.Group || t.Seed == nil {
			continue
		}
		c := paramKey(t.Params, r.By)
		ci := slices.Index(configs, c)
		if ci < 0 {
			configs = append(configs, c)
			ci = len(configs) - 1
		}
		trials = append(trials, t)
		config = append(config, ci)
		params, seeds = append(params, t.Params), append(seeds, *t.Seed)
	}
	return trials, config, raceBlocks(r, params, seeds), nil
}
