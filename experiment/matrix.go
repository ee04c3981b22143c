package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// matrix expands one matrix entry: the cartesian product of its params (keys in sorted order,
// the last varying fastest) times its seeds, each combination a trial built from the entry's
// other fields over the defaults.
func (p *parser) matrix(m map[string]any, at int, defaults map[string]any) {
	where := fmt.Sprintf("matrix[%d]", at)
	origin := []any{"matrix", at}
	group := "trial"
	if n, ok := m["name"]; ok {
		s, isStr := n.(string)
		if !isStr || !validName.MatchString(s) {
			p.ps.add("", where+".name", "%v is not a valid group name: use letters, digits, '-', '_' or '.'", n)
			return
		}
		group = s
	}
	// Until its trials are in the plan, a dependency on the group is not reported as unknown.
	p.broken[group] = true
	if _, dup := p.groups[group]; dup {
		p.ps.add("", where+".name", "two matrices are called %q; give each a distinct name", group)
		return
	}
	template := map[string]any{}
	for _, k := range sortedKeys(m) {
		switch {
		case k == "name" || contains(matrixOnly, k):
		case k == "seed":
			p.ps.add("", where+".seed", "a matrix takes seeds (a count or a list), not seed")
		case contains(trialFields, k):
			template[k] = m[k]
		default:
			p.ps.add("", where+"."+k, "unknown field%s", suggest(k, append(append([]string{}, trialFields...), matrixOnly...)))
		}
	}
	axes, ok := p.axes(m["params"], where)
	if !ok {
		return
	}
	excludes, ok := p.excludes(m["exclude"], where, axes)
	if !ok {
		return
	}
	var seeds []int64
	if obj, isSeq := m["seeds"].(map[string]any); isSeq {
		var seq *Sequential
		if seq, seeds, ok = p.sequentialSeeds(obj, group, where, axes, len(excludes) > 0); !ok {
			return
		}
		p.sequential = append(p.sequential, *seq)
	} else if seeds, ok = p.seeds(m, where); !ok {
		return
	}
	if !p.room(combinations(axes, seeds), where) {
		return
	}
	var combos []map[string]any
	var walk func(i int, cur map[string]any)
	walk = func(i int, cur map[string]any) {
		if i == len(axes) {
			for _, ex := range excludes {
				if matches(cur, ex) {
					return
				}
			}
			c := make(map[string]any, len(cur))
			for k, v := range cur {
				c[k] = v
			}
			combos = append(combos, c)
			return
		}
		for _, v := range axes[i].values {
			cur[axes[i].name] = v
			walk(i+1, cur)
		}
		delete(cur, axes[i].name)
	}
	walk(0, map[string]any{})

	type gen struct {
		params map[string]any
		seed   *int64
	}
	var gens []gen
	for _, c := range combos {
		if seeds == nil {
			gens = append(gens, gen{params: c})
			continue
		}
		for _, s := range seeds {
			s := s
			gens = append(gens, gen{params: c, seed: &s})
		}
	}
	if len(gens) == 0 {
		p.ps.add("", where, "expands to no trials; check params, seeds and exclude")
		return
	}
	names := matrixNames(group, axes, gens, func(g gen) (map[string]any, *int64) { return g.params, g.seed })
	if rv, isRace := m["race"]; isRace {
		// The plan starts with the race's first blocks; the names are those of the whole race.
		if _, isSeq := m["seeds"].(map[string]any); isSeq {
			p.ps.add("", where+".race", "a race takes seeds as a count or a list, not until")
			return
		}
		r := p.raceSpec(rv, group, where, axes, seeds, len(excludes) > 0)
		if r == nil {
			return
		}
		params, seedOf := make([]map[string]any, len(gens)), make([]int64, len(gens))
		for i, g := range gens {
			params[i], seedOf[i] = g.params, *g.seed
		}
		blocks := raceBlocks(r, params, seedOf)
		var keptGens []gen
		var keptNames []string
		for i, g := range gens {
			if blocks[i] < r.First {
				keptGens, keptNames = append(keptGens, g), append(keptNames, names[i])
			}
		}
		gens, names = keptGens, keptNames
		p.races = append(p.races, *r)
	}
	base := mergeDefaults(defaults, template)
	var cmd *cmdTemplate
	if s, ok := base["cmd"].(string); ok {
		cmd = parseCmd(s)
		// a param is risky unless every value it takes is a number
		risky := func(name string) bool {
			values := []any{}
			if bp, ok := base["params"].(map[string]any); ok {
				if v, ok := bp[name]; ok {
					values = []any{v}
				}
			}
			for _, a := range axes {
				if a.name == name {
					values = a.values
				}
			}
			for _, v := range values {
				if !number.MatchString(ParamString(plain(v))) {
					return true
				}
			}
			return false
		}
		for _, w := range cmd.warnings(risky) {
			p.ps.warn("", where+".cmd", "%s", w)
		}
	}
	p.ps.origin = origin
	defer func() { p.ps.origin = nil }()
	for i, g := range gens {
		tm := make(map[string]any, len(base)+3)
		for k, v := range base {
			tm[k] = v
		}
		params := map[string]any{}
		if bp, ok := base["params"].(map[string]any); ok {
			for k, v := range bp {
				params[k] = v
			}
		}
		for k, v := range g.params {
			params[k] = v
		}
		if len(params) > 0 {
			tm["params"] = params
		}
		if g.seed != nil {
			tm["seed"] = json.Number(strconv.FormatInt(*g.seed, 10))
		}
		tm["name"] = names[i]
		vars := map[string]string{"group": group, "trial": names[i], "index": strconv.Itoa(i)}
		envs := make(map[string]string, len(params))
		for k, v := range params {
			vars[k] = ParamString(plain(v))
			envs[k] = ParamEnv(k)
		}
		if g.seed != nil {
			vars["seed"] = strconv.FormatInt(*g.seed, 10)
		}
		trialWhere := strconv.Quote(names[i])
		for _, f := range []string{"cmd", "env", "workdir", "image", "labels"} {
			if v, ok := tm[f]; ok {
				var out any
				var err error
				if f == "cmd" && cmd != nil {
					out, err = cmd.expand(vars, envs)
				} else {
					out, err = substitute(v, vars, envs)
				}
				if err != nil {
					p.ps.add(trialWhere, f, "%v", err)
					continue
				}
				tm[f] = out
			}
		}
		before := len(p.ps.list)
		if _, own := template["timeout"]; !own && defaults["timeout"] != nil {
			p.defaultTimeout[len(p.trials)] = true
		}
		t := p.fields(tm, trialWhere, len(p.trials))
		if len(p.ps.list) != before {
			p.drop()
			return // one bad template makes every trial of the group bad: report it once
		}
		t.Group = group
		p.add(t, origin)
		p.groups[group] = append(p.groups[group], t.Name)
	}
	delete(p.broken, group)
}

// combinations is how many trials the axes and seeds give before exclude, saturating at
// math.MaxInt (a product of user-given lists must not overflow).
func combinations(axes []axis, seeds []int64) int {
	n := max(1, len(seeds))
	for _, a := range axes {
		if n > math.MaxInt/len(a.values) {
			return math.MaxInt
		}
		n *= len(a.values)
	}
	return n
}

type axis struct {
	name   string
	values []any
}

func (p *parser) axes(v any, where string) ([]axis, bool) {
	if v == nil {
		return nil, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.ps.add("", where+".params", "must be an object of name: [values]")
		return nil, false
	}
	var out []axis
	for _, k := range sortedKeys(m) {
		vals, isList := m[k].([]any)
		if !isList {
			vals = []any{m[k]}
		}
		if len(vals) == 0 {
			p.ps.add("", where+".params."+k, "has no values")
			return nil, false
		}
		out = append(out, axis{name: k, values: vals})
	}
	return out, true
}

func (p *parser) seeds(m map[string]any, where string) ([]int64, bool) {
	v, ok := m["seeds"]
	if !ok {
		return nil, true
	}
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil || n < 1 || n > 1_000_000 {
			p.ps.add("", where+".seeds", "a count must be a whole number from 1 to 1000000")
			return nil, false
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out, true
	case []any:
		seen := map[int64]bool{}
		out := make([]int64, 0, len(x))
		for _, e := range x {
			n, err := toInt(e)
			if err != nil {
				p.ps.add("", where+".seeds", "every seed must be a whole number")
				return nil, false
			}
			if seen[n] {
				p.ps.add("", where+".seeds", "seed %d is listed twice", n)
				return nil, false
			}
			seen[n] = true
			out = append(out, n)
		}
		if len(out) == 0 {
			p.ps.add("", where+".seeds", "is an empty list")
			return nil, false
		}
		return out, true
	}
	p.ps.add("", where+".seeds", "must be a count, a list of whole numbers, or {until: ..., batch, min, max}")
	return nil, false
}

func (p *parser) excludes(v any, where string, axes []axis) ([]map[string]any, bool) {
	if v == nil {
		return nil, true
	}
	list, ok := v.([]any)
	if !ok {
		p.ps.add("", where+".exclude", "must be an array of {param: value} objects")
		return nil, false
	}
	var out []map[string]any
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			p.ps.add("", where+".exclude", "must be an array of {param: value} objects")
			return nil, false
		}
		for k := range m {
			found := false
			for _, a := range axes {
				found = found || a.name == k
			}
			if !found {
				p.ps.add("", where+".exclude", "%q is not a matrix param", k)
				return nil, false
			}
		}
		out = append(out, m)
	}
	return out, true
}

func matches(combo, ex map[string]any) bool {
	for k, v := range ex {
		if fmt.Sprint(plain(combo[k])) != fmt.Sprint(plain(v)) {
			return false
		}
	}
	return true
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// matrixNames names trials group-v1-v2-s<seed>; when that is not unique or too long for a
// label, it falls back to group-<index> for the whole group so names stay predictable.
func matrixNames[G any](group string, axes []axis, gens []G, get func(G) (map[string]any, *int64)) []string {
	names := make([]string, len(gens))
	seen := make(map[string]bool, len(gens))
	readable := true
	for i, g := range gens {
		params, seed := get(g)
		parts := []string{group}
		for _, a := range axes {
			v := unsafeNameChars.ReplaceAllString(fmt.Sprint(plain(params[a.name])), "-")
			parts = append(parts, strings.Trim(v, "-_."))
		}
		if seed != nil {
			parts = append(parts, "s"+strconv.FormatInt(*seed, 10))
		}
		n := strings.Join(parts, "-")
		if seen[n] || !validName.MatchString(n) {
			readable = false
			break
		}
		seen[n] = true
		names[i] = n
	}
	if !readable {
		width := len(strconv.Itoa(len(gens) - 1))
		for i := range names {
			names[i] = fmt.Sprintf("%s-%0*d", group, width, i)
		}
	}
	return names
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// substitute replaces {{param}}, {{seed}}, {{index}}, {{group}} and {{trial}} in strings inside
// v. envs names the params, whose values must fit MaxEnvParam.
func substitute(v any, vars, envs map[string]string) (any, error) {
	switch x := v.(type) {
	case string:
		if !strings.Contains(x, "{{") {
			return x, nil // most strings have no placeholder: skip the regexp
		}
		var missing []string
		var b strings.Builder
		last := 0
		for _, m := range placeholder.FindAllStringSubmatchIndex(x, -1) {
			name := x[m[2]:m[3]]
			val, ok := vars[name]
			if !ok {
				missing = append(missing, name)
				val = x[m[0]:m[1]]
			}
			if _, isParam := envs[name]; isParam && len(val) > MaxEnvParam {
				return nil, tooLarge(name, len(val))
			}
			b.WriteString(x[last:m[0]])
			b.WriteString(val)
			last = m[1]
		}
		b.WriteString(x[last:])
		if len(missing) > 0 {
			return nil, unknownPlaceholder(missing[0], vars)
		}
		return b.String(), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			s, err := substitute(e, vars, envs)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			s, err := substitute(e, vars, envs)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	}
	return v, nil
}
