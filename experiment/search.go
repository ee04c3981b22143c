package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/prune"
	"github.com/jikken-dev/jikken/search"
)

// Search is an experiment's search block: a template trial whose params a sampler suggests, one
// trial at a time, as the results of earlier ones come in. Its trials are not in the plan when
// the file is read; the runner adds them (see Trial).
type Search struct {
	// Name is the search's name: its trials are <Name>-<number> and their group is Name.
	Name       string
	Space      search.Space
	Objectives []search.Objective
	// Constraints are metrics a trial must log as <= 0 to be feasible.
	Constraints []string
	Sampler     Choice
	Pruner      Choice
	// Trials is the budget: at most this many trials are suggested.
	Trials int
	// Parallel is how many trials run at once (0: the run's -j); the runner suggests one more
	// before the results of earlier ones are known (runner/plan).
	Parallel int
	// Wall, when set, stops suggesting once the run has lasted this long, counted from its
	// creation or latest extension across resumes (runner/plan.Began).
	Wall Duration
	Seed uint64

	// template holds the search's trial fields over the defaults, before substitution.
	template map[string]any
	cmd      *cmdTemplate
	file     string
}

// Choice names a sampler or a pruner and its options.
type Choice struct {
	Name    string
	Options map[string]any
}

// searchOnly are the fields of a search block that are not trial fields.
var searchOnly = []string{"name", "space", "objective", "objectives", "constraints", "sampler", "pruner", "trials", "parallel", "wall", "seed"}

// DefaultSampler is the sampler of a search that names none.
const DefaultSampler = "tpe"

// SearchOf reads the search block of an evaluated experiment (a run manifest keeps it), or
// returns nil when it has none. file names the source in errors.
func SearchOf(file string, evaluated []byte) (*Search, error) {
	var top map[string]json.RawMessage
	if len(evaluated) == 0 || evaluated[0] != '{' || json.Unmarshal(evaluated, &top) != nil || top["search"] == nil {
		return nil, nil
	}
	exp, err := ParseMax(file, evaluated, -1)
	if err != nil {
		return nil, err
	}
	return exp.Search, nil
}

// TrialName is the name of trial number n of the search.
func (s *Search) TrialName(n int) string { return s.Name + "-" + strconv.Itoa(n) }

// Trial builds trial number n of the search from its template and the suggested params:
// placeholders ({{x}}, {{trial}}, {{index}}, {{group}}) are substituted as in a matrix, and the
// params go to the trial's environment and params.json. Its Index is left for the plan.
func (s *Search) Trial(n int, params map[string]any) (Trial, error) {
	p := newParser(&problems{file: s.file}, -1)
	t := p.searchTrial(s, n, params)
	if err := p.ps.err(); err != nil {
		return Trial{}, err
	}
	return t, nil
}

// After are the trials the search's trials wait to succeed.
func (s *Search) After() []string {
	list, _ := s.template["after"].([]any)
	var out []string
	for _, a := range list {
		if n, ok := a.(string); ok {
			out = append(out, n)
		}
	}
	return out
}

// Example is a trial of the search at the low end of its space, standing for all of them where
// every trial must be checked before anything runs (resources, images).
func (s *Search) Example() (Trial, error) { return s.Trial(0, samplePoint(s.Space)) }

// IsTrial reports whether name is one of the search's trial names, and which number.
func (s *Search) IsTrial(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, s.Name+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

func (p *parser) searchTrial(s *Search, n int, suggested map[string]any) Trial {
	name := s.TrialName(n)
	tm := make(map[string]any, len(s.template)+2)
	for k, v := range s.template {
		tm[k] = v
	}
	params := map[string]any{}
	if bp, ok := s.template["params"].(map[string]any); ok {
		for k, v := range bp {
			params[k] = v
		}
	}
	for k, v := range suggested {
		params[k] = v
	}
	if len(params) > 0 {
		tm["params"] = params
	}
	tm["name"] = name
	vars := map[string]string{"group": s.Name, "trial": name, "index": strconv.Itoa(n)}
	envs := make(map[string]string, len(params))
	for k, v := range params {
		vars[k] = ParamString(plain(v))
		envs[k] = ParamEnv(k)
	}
	where := strconv.Quote(name)
	for _, f := range []string{"cmd", "env", "workdir", "image", "labels"} {
		v, ok := tm[f]
		if !ok {
			continue
		}
		var out any
		var err error
		if f == "cmd" && s.cmd != nil {
			out, err = s.cmd.expand(vars, envs)
		} else {
			out, err = substitute(v, vars, envs)
		}
		if err != nil {
			p.ps.add(where, "search."+f, "%v", strings.Replace(err.Error(), "param of this matrix", "param of this search", 1))
			continue
		}
		tm[f] = out
	}
	t := p.fields(tm, where, 0)
	t.Group = s.Name
	return t
}

// search reads the search block m (its trial fields merged over defaults).
func (p *parser) search(raw any, defaults map[string]any) *Search {
	m, ok := raw.(map[string]any)
	if !ok {
		p.ps.add("", "search", "must be an object with name, cmd, space, objective and trials")
		return nil
	}
	bad := func(field, format string, args ...any) { p.ps.add("", "search."+field, format, args...) }
	before := len(p.ps.list)
	s := &Search{file: p.ps.file}
	template := map[string]any{}
	for _, k := range sortedKeys(m) {
		switch {
		case k == "depends":
			bad(k, "a search's trials can only wait for trials to succeed first: use after")
		case contains(searchOnly, k):
		case contains(trialFields, k):
			template[k] = m[k]
		default:
			bad(k, "unknown field%s", suggest(k, append(append([]string{}, trialFields...), searchOnly...)))
		}
	}
	switch n, isStr := m["name"].(string); {
	case m["name"] == nil:
		bad("name", "missing; a search needs a name (its trials are NAME-0, NAME-1, ...)")
	case !isStr || !validName.MatchString(n):
		bad("name", "%v is not a valid name: use letters, digits, '-', '_' or '.'", m["name"])
	default:
		s.Name = n
	}
	s.Space = p.space(m["space"], bad)
	s.Objectives = p.objectives(m, bad)
	if v, ok := m["constraints"]; ok {
		list, err := toStringList(v)
		if err != nil {
			bad("constraints", "must be an array of metric names (each must be logged <= 0 to be feasible)")
		}
		s.Constraints = list
	}
	s.Sampler = p.choice(m, "sampler", DefaultSampler, bad)
	s.Pruner = p.choice(m, "pruner", "none", bad)
	if s.Sampler.Name != "" {
		if _, err := search.New(s.Sampler.Name, s.Sampler.Options); err != nil {
			bad("sampler", "%v", err)
		}
	}
	if s.Pruner.Name != "" {
		if _, err := prune.New(s.Pruner.Name, s.Pruner.Options); err != nil {
			bad("pruner", "%v", err)
		}
	}
	count := func(field string, dst *int, required bool) {
		v, ok := m[field]
		if !ok {
			if required {
				bad(field, "missing; give the number of trials the search may run (the budget)")
			}
			return
		}
		n, err := toInt(v)
		if err != nil || n < 1 || n > math.MaxInt32 {
			bad(field, "must be a whole number >= 1")
			return
		}
		*dst = int(n)
	}
	count("trials", &s.Trials, true)
	count("parallel", &s.Parallel, false)
	if s.Trials > 0 && !p.room(s.Trials, "search.trials") {
		s.Trials = 0
	}
	if v, ok := m["wall"]; ok {
		b, _ := json.Marshal(v)
		if err := s.Wall.UnmarshalJSON(b); err != nil {
			bad("wall", "%v", err)
		}
	}
	if v, ok := m["seed"]; ok {
		n, err := toInt(v)
		if err != nil || n < 0 {
			bad("seed", "must be a whole number >= 0")
		}
		s.Seed = uint64(n)
	}
	s.template = mergeDefaults(defaults, template)
	if c, ok := s.template["cmd"].(string); ok {
		s.cmd = parseCmd(c)
	}
	if _, ok := s.template["cmd"]; !ok {
		bad("cmd", "missing; the command each trial runs, with {{param}} placeholders")
	}
	if len(p.ps.list) > before {
		return nil
	}
	// The first point of the space stands for every suggestion: a template that cannot make a
	// trial of it (an unknown placeholder, a bad field) is reported now, before anything runs.
	sub := newParser(&problems{file: p.ps.file}, -1)
	sub.searchTrial(s, 0, samplePoint(s.Space))
	for _, pr := range sub.ps.list {
		field := pr.Field
		if !strings.HasPrefix(field, "search.") {
			field = "search." + field
		}
		p.ps.add("", field, "%s", pr.Msg)
	}
	if len(p.ps.list) > before {
		return nil
	}
	return s
}

// samplePoint is a suggestion of the space: low ends and first choices.
func samplePoint(sp search.Space) map[string]any {
	out := map[string]any{}
	for _, prm := range sp.Params {
		switch prm.Kind {
		case search.Categorical:
			out[prm.Name] = prm.Choices[0]
		case search.Int:
			out[prm.Name] = int64(prm.Low)
		default:
			out[prm.Name] = prm.Low
		}
	}
	return out
}

var paramName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// space reads the space: name -> {low, high, log, step, type, when} or {choices, when}, or a
// bare array of choices.
func (p *parser) space(raw any, bad func(string, string, ...any)) search.Space {
	m, ok := raw.(map[string]any)
	if raw == nil {
		bad("space", "missing; give the params to search, e.g. space: { lr: { low: 1e-4, high: 1e-1, log: true } }")
		return search.Space{}
	}
	if !ok {
		bad("space", "must be an object of name: {low, high} or name: {choices: [...]}")
		return search.Space{}
	}
	var sp search.Space
	for _, name := range sortedKeys(m) {
		f := "space." + name
		if !paramName.MatchString(name) {
			bad(f, "%q is not a valid parameter name: use letters, digits and '_'", name)
			continue
		}
		prm := search.Param{Name: name}
		spec, isObj := m[name].(map[string]any)
		if list, isList := m[name].([]any); isList {
			spec, isObj = map[string]any{"choices": list}, true
		}
		if !isObj {
			bad(f, "must be {low, high}, {choices: [...]} or an array of choices")
			continue
		}
		for _, k := range sortedKeys(spec) {
			known := []string{"low", "high", "log", "step", "type", "choices", "when"}
			if !contains(known, k) {
				bad(f+"."+k, "unknown field%s", suggest(k, known))
			}
		}
		kind, _ := spec["type"].(string)
		switch {
		case kind == "" && spec["choices"] != nil, kind == "categorical":
			prm.Kind = search.Categorical
			choices, isList := spec["choices"].([]any)
			if !isList {
				bad(f+".choices", "must be an array of values")
			}
			for _, c := range choices {
				switch v := plain(c).(type) {
				case string, int64, float64, bool:
					prm.Choices = append(prm.Choices, v)
				default:
					bad(f+".choices", "a choice must be a string, a number or a boolean")
				}
			}
		case kind == "", kind == "float", kind == "int":
			prm.Kind = search.Float
			if kind == "int" {
				prm.Kind = search.Int
			}
			num := func(k string, dst *float64, required bool) {
				v, ok := spec[k]
				if !ok {
					if required {
						bad(f+"."+k, "missing; a numeric param needs low and high")
					}
					return
				}
				n, isNum := v.(json.Number)
				x, err := n.Float64()
				if !isNum || err != nil || math.IsInf(x, 0) {
					bad(f+"."+k, "must be a number")
					return
				}
				*dst = x
			}
			num("low", &prm.Low, true)
			num("high", &prm.High, true)
			num("step", &prm.Step, false)
			if v, ok := spec["log"]; ok {
				b, isBool := v.(bool)
				if !isBool {
					bad(f+".log", "must be true or false")
				}
				prm.Log = b
			}
			if prm.Step < 0 {
				bad(f+".step", "must be > 0")
			}
		default:
			bad(f+".type", "%q is not a param type; use float, int or categorical", kind)
		}
		if w, ok := spec["when"]; ok {
			prm.When = p.when(w, f, m, bad)
		}
		sp.Params = append(sp.Params, prm)
	}
	if len(m) == 0 {
		bad("space", "is empty; give at least one param to search")
	}
	if err := sp.Validate(); err != nil && len(m) > 0 {
		for _, e := range unjoin(err) {
			if fe, ok := e.(*search.FieldError); ok {
				bad(strings.TrimPrefix(fe.Field, "search."), "%s", fe.Msg)
			} else {
				bad("space", "%v", e)
			}
		}
	}
	return sp
}

// unjoin lists the errors errors.Join put together.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// when reads {param: value} or {param: [values]}: the param is active only when that
// categorical param has one of the values.
func (p *parser) when(raw any, f string, space map[string]any, bad func(string, string, ...any)) *search.Condition {
	m, ok := raw.(map[string]any)
	if !ok || len(m) != 1 {
		bad(f+".when", "must be {param: value} or {param: [values]}, naming one categorical param")
		return nil
	}
	for name, v := range m {
		if _, known := space[name]; !known {
			bad(f+".when", "%q is not a param of the space", name)
			return nil
		}
		vals, isList := v.([]any)
		if !isList {
			vals = []any{v}
		}
		c := &search.Condition{Param: name}
		for _, x := range vals {
			c.Values = append(c.Values, plain(x))
		}
		return c
	}
	return nil
}

// objectives reads objective: {metric, direction} or objectives: [...].
func (p *parser) objectives(m map[string]any, bad func(string, string, ...any)) []search.Objective {
	one, hasOne := m["objective"]
	many, hasMany := m["objectives"]
	var list []any
	field := "objectives"
	switch {
	case hasOne && hasMany:
		bad("objective", "give objective or objectives, not both")
		return nil
	case hasOne:
		list, field = []any{one}, "objective"
	case hasMany:
		l, isList := many.([]any)
		if !isList || len(l) == 0 {
			bad("objectives", "must be a non-empty array of {metric, direction}")
			return nil
		}
		list = l
	default:
		bad("objective", "missing; say which metric to optimise: objective: { metric: \"loss\", direction: \"min\" }")
		return nil
	}
	var out []search.Objective
	for i, e := range list {
		f := field
		if field == "objectives" {
			f = fmt.Sprintf("objectives[%d]", i)
		}
		var o search.Objective
		switch x := e.(type) {
		case string:
			o = search.Objective{Metric: x, Direction: search.Minimize}
		case map[string]any:
			o.Metric, _ = x["metric"].(string)
			o.Direction = search.Minimize
			if d, ok := x["direction"]; ok {
				s, _ := d.(string)
				if dir, err := search.ParseDirection(s); err == nil {
					o.Direction = dir
				} else {
					bad(f+".direction", "%v is not a direction; use \"min\" or \"max\"", d)
				}
			}
			for _, k := range sortedKeys(x) {
				if k != "metric" && k != "direction" {
					bad(f+"."+k, "unknown field; an objective has metric and direction")
				}
			}
		default:
			bad(f, "must be {metric, direction}")
			continue
		}
		if o.Metric == "" {
			bad(f+".metric", "missing; name the metric the trials log")
			continue
		}
		out = append(out, o)
	}
	return out
}

// choice reads a sampler or a pruner: "name" or {name, options}.
func (p *parser) choice(m map[string]any, field, def string, bad func(string, string, ...any)) Choice {
	v, ok := m[field]
	if !ok {
		return Choice{Name: def}
	}
	switch x := v.(type) {
	case string:
		return Choice{Name: x}
	case map[string]any:
		c := Choice{}
		c.Name, _ = x["name"].(string)
		if c.Name == "" {
			bad(field+".name", "missing")
		}
		if o, ok := x["options"]; ok {
			om, isObj := plain(o).(map[string]any)
			if !isObj {
				bad(field+".options", "must be an object")
			}
			c.Options = om
		}
		for _, k := range sortedKeys(x) {
			if k != "name" && k != "options" {
				bad(field+"."+k, "unknown field; use {name, options}")
			}
		}
		return c
	}
	bad(field, "must be a name or {name, options}")
	return Choice{}
}
