package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/trial"
)

var trialFields = []string{
	"name", "image", "cmd", "env", "params", "seed", "workdir", "workdir_outside", "timeout", "retries", "backoff",
	"preemptible", "requeues", "checkpoint",
	"resources", "service", "restart", "show", "health", "depends", "after", "ports", "volumes", "networks",
	"node_selector", "tolerations", "labels",
}

var topFields = []string{"name", "description", "defaults", "trials", "matrix", "search"}

var matrixOnly = []string{"params", "seeds", "exclude", "race"}

// validName is what a trial or group name may look like: usable as a file name, a container
// name and a Kubernetes label value.
var validName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$`)

// DefaultMaxTrials is how many trials a run may have unless the cap is raised: a larger plan is
// more often a mistake in a matrix than an intent, and each trial costs a record, a folder and
// a process.
const DefaultMaxTrials = 100_000

// Parse validates evaluated experiment JSON with the default cap on trials. file names the
// source in error messages.
func Parse(file string, evaluated []byte) (*Experiment, error) {
	return ParseMax(file, evaluated, 0)
}

// ParseMax is Parse with a cap of maxTrials trials (0: DefaultMaxTrials; negative: no cap). A
// matrix is checked against the cap before it is expanded, so a huge one costs nothing.
func ParseMax(file string, evaluated []byte, maxTrials int) (*Experiment, error) {
	switch {
	case maxTrials == 0:
		maxTrials = DefaultMaxTrials
	case maxTrials < 0:
		maxTrials = math.MaxInt
	}
	ps := &problems{file: file}
	exp := &Experiment{Evaluated: json.RawMessage(evaluated), Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
	var top any
	dec := json.NewDecoder(bytes.NewReader(evaluated))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		ps.add("", "", "not JSON: %v", err)
		return nil, ps.err()
	}
	p := newParser(ps, maxTrials)
	switch t := top.(type) {
	case []any:
		exp.Form = "combu"
		if !p.room(len(t), "") {
			break
		}
		for i, raw := range t {
			p.trial(raw, []any{i}, i, nil)
		}
	case map[string]any:
		exp.Form = "jikken"
		p.object(t, exp)
	default:
		ps.add("", "", "the file evaluates to %s; want an array of trials or an object with trials and/or matrix", jsonKind(top))
	}
	if len(ps.list) == 0 && len(p.trials) == 0 && p.searchBlock == nil {
		ps.add("", "", "no trials; add a trials array, a matrix or a search")
	}
	// Names, dependencies and cycles are checked even when fields are wrong, so that one
	// round of fixes is enough: trials with bad fields take part by their names.
	p.link()
	exp.Warnings = ps.warns
	if err := ps.err(); err != nil {
		return nil, err
	}
	for i := range p.trials {
		p.trials[i].Index = i
	}
	exp.Trials = p.trials
	exp.Search = p.searchBlock
	exp.Sequential = p.sequential
	exp.Races = p.races
	return exp, nil
}

type parser struct {
	ps      *problems
	origins [][]any // the path of each trial's object in the evaluated JSON, for positions
	// broken are names of trials and groups too wrong to be in the plan: a dependency on one is
	// not reported again as unknown.
	broken map[string]bool
	warned map[string]bool // params already warned of as too large for the environment
	max    int             // the cap on trials
	capped bool
	trials []Trial
	groups map[string][]string // matrix group name -> its trial names
	// rawDeps keep depends as written (strings may name a group) until all trials are known.
	rawDeps []rawDep
	// defaultTimeout marks the trials (by index) whose timeout came from defaults, which
	// services do not take.
	defaultTimeout map[int]bool
	searchBlock    *Search
	sequential     []Sequential
	races          []Race
}

func newParser(ps *problems, maxTrials int) *parser {
	return &parser{ps: ps, groups: map[string][]string{}, max: maxTrials, defaultTimeout: map[int]bool{}, broken: map[string]bool{}, warned: map[string]bool{}}
}

type rawDep struct {
	trial int // -1: of a trial left out of the plan, whose dependencies are only checked to exist
	name  string
	cond  Condition // empty: started, or healthy when the target has a health check
	// where and origin locate the trial, for messages
	where  string
	origin []any
}

func (p *parser) object(m map[string]any, exp *Experiment) {
	for _, k := range sortedKeys(m) {
		if !contains(topFields, k) {
			p.ps.add("", k, "unknown top-level field%s; the object form has %s", suggest(k, topFields), strings.Join(topFields, ", "))
		}
	}
	if n, ok := m["name"]; ok {
		if s, ok := n.(string); ok && s != "" {
			exp.Name = s
		} else {
			p.ps.add("", "name", "must be a non-empty string")
		}
	}
	var defaults map[string]any
	if d, ok := m["defaults"]; ok {
		defaults, ok = d.(map[string]any)
		if !ok {
			p.ps.add("", "defaults", "must be an object of trial fields")
		} else {
			defaults = p.defaults(defaults)
		}
	}
	if ts, ok := m["trials"]; ok {
		arr, ok := ts.([]any)
		if !ok {
			p.ps.add("", "trials", "must be an array of trial objects")
		}
		if !p.room(len(arr), "trials") {
			arr = nil
		}
		for i, raw := range arr {
			p.trial(raw, []any{"trials", i}, i, defaults)
		}
	}
	if mx, ok := m["matrix"]; ok {
		var list []any
		switch x := mx.(type) {
		case map[string]any:
			list = []any{x}
		case []any:
			list = x
		default:
			p.ps.add("", "matrix", "must be an object (or an array of objects) with params and/or seeds")
		}
		for i, e := range list {
			mo, ok := e.(map[string]any)
			if !ok {
				p.ps.add("", fmt.Sprintf("matrix[%d]", i), "must be an object with params and/or seeds")
				continue
			}
			p.matrix(mo, i, defaults)
		}
	}
	if sb, ok := m["search"]; ok {
		p.searchBlock = p.search(sb, defaults)
	}
}

// defaults checks the fields of defaults once, and returns them less the wrong ones, so that
// a mistake there is reported once rather than once per trial.
func (p *parser) defaults(d map[string]any) map[string]any {
	ok := make(map[string]any, len(d))
	for _, k := range sortedKeys(d) {
		if k == "name" || !contains(trialFields, k) {
			p.ps.add("", "defaults."+k, "not a field defaults can set%s", suggest(k, trialFields))
			continue
		}
		ok[k] = d[k]
	}
	check := maps.Clone(ok)
	if _, set := check["workdir_outside"]; !set {
		check["workdir_outside"] = true // whether a workdir may leave depends on each trial's image
	}
	sub := newParser(&problems{file: p.ps.file}, p.max)
	sub.fields(check, "", 0)
	for _, pr := range sub.ps.list {
		delete(ok, pr.Field)
		p.ps.add("", "defaults."+pr.Field, "%s", pr.Msg)
	}
	p.ps.warns = append(p.ps.warns, sub.ps.warns...)
	return ok
}

// room reports whether n more trials fit under the cap, and records the problem (once) when
// they do not. field names where they come from.
func (p *parser) room(n int, field string) bool {
	if n <= p.max-len(p.trials) {
		return true
	}
	if !p.capped {
		p.capped = true
		total := len(p.trials) + min(n, math.MaxInt-len(p.trials))
		p.ps.add("", field, "the experiment would have %s trials, more than the cap of %s trials per run; "+
			"check the matrix, split the experiment, or raise the cap (jikken run --max-trials N)",
			thousands(total), thousands(p.max))
	}
	return false
}

// thousands writes n with thousands separators, as people read counts of trials.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// trial parses one trial object merged over defaults and adds it to the plan when it has a
// valid name, even with other problems, so that dependencies on it are checked too. origin is
// its path in the evaluated JSON, at its position in its array, for messages.
func (p *parser) trial(raw any, origin []any, at int, defaults map[string]any) {
	p.ps.origin = origin
	defer func() { p.ps.origin = nil }()
	m, ok := raw.(map[string]any)
	if !ok {
		p.ps.add(fmt.Sprintf("#%d", at), "", "must be an object, got %s", jsonKind(raw))
		return
	}
	where := fmt.Sprintf("#%d", at)
	if n, ok := m["name"].(string); ok && n != "" {
		where = strconv.Quote(n)
		p.broken[n] = true // until it is in the plan
	}
	for _, k := range sortedKeys(m) {
		if !contains(trialFields, k) {
			p.ps.add(where, k, "unknown field%s", suggest(k, trialFields))
		}
	}
	merged := mergeDefaults(defaults, m)
	if _, own := m["timeout"]; !own && defaults["timeout"] != nil {
		p.defaultTimeout[len(p.trials)] = true
	}
	tr := p.fields(merged, where, len(p.trials))
	if _, ok := m["name"]; !ok {
		p.ps.add(where, "name", "missing; every trial needs a unique name")
	}
	if tr.Name == "" {
		p.drop()
		return
	}
	delete(p.broken, tr.Name)
	p.add(tr, origin)
}

// drop detaches what fields recorded of a trial that is not put in the plan, as the next trial
// takes its index; its dependencies are still checked to exist.
func (p *parser) drop() {
	delete(p.defaultTimeout, len(p.trials))
	for i := range p.rawDeps {
		if p.rawDeps[i].trial == len(p.trials) {
			p.rawDeps[i].trial = -1
		}
	}
}

// add puts a parsed trial in the plan.
func (p *parser) add(t Trial, origin []any) {
	p.trials = append(p.trials, t)
	p.origins = append(p.origins, origin)
}

// mergeDefaults returns t over d; env, params and labels are merged key by key.
func mergeDefaults(d, t map[string]any) map[string]any {
	if len(d) == 0 {
		return t
	}
	out := make(map[string]any, len(d)+len(t))
	for k, v := range d {
		out[k] = v
	}
	for k, v := range t {
		dm, dok := out[k].(map[string]any)
		tm, tok := v.(map[string]any)
		if dok && tok && (k == "env" || k == "params" || k == "labels" || k == "node_selector") {
			mm := make(map[string]any, len(dm)+len(tm))
			for kk, vv := range dm {
				mm[kk] = vv
			}
			for kk, vv := range tm {
				mm[kk] = vv
			}
			out[k] = mm
			continue
		}
		out[k] = v
	}
	return out
}

// fields decodes the trial fields of m. idx is the index the trial will have, for depends.
func (p *parser) fields(m map[string]any, where string, idx int) Trial {
	var t Trial
	bad := func(field, format string, args ...any) { p.ps.add(where, field, format, args...) }
	if v, ok := m["name"]; ok {
		s, isStr := v.(string)
		switch {
		case !isStr:
			bad("name", "must be a string")
		case !validName.MatchString(s):
			bad("name", "%q is not a valid name: use 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", s)
		default:
			t.Name = s
		}
	}
	str := func(field string, dst *string) {
		if v, ok := m[field]; ok {
			if s, ok := v.(string); ok {
				*dst = s
			} else {
				bad(field, "must be a string")
			}
		}
	}
	str("image", &t.Image)
	str("workdir", &t.Workdir)
	outside, isBool := m["workdir_outside"].(bool)
	if _, set := m["workdir_outside"]; set && !isBool {
		bad("workdir_outside", "must be true or false")
	}
	if t.Workdir != "" && !outside && escapes(t.Workdir, t.Image != "") {
		bad("workdir", "%q is outside the experiment's folder, where trials run (in the run's code snapshot); "+
			"use a path inside it, or say the trial may leave it with workdir_outside: true", trial.Clip(t.Workdir))
	}
	if v, ok := m["cmd"]; ok {
		c, err := toCommand(v)
		if err != nil {
			bad("cmd", "%v", err)
		}
		t.Cmd = c
	}
	if v, ok := m["env"]; ok {
		env, err := toStringMap(v, true)
		if err != nil {
			bad("env", "%v", err)
		}
		for k := range env {
			if !validEnvName(k) {
				bad("env", "%q is not a valid environment variable name", k)
			}
		}
		t.Env = env
	}
	for _, f := range []string{"labels", "node_selector"} {
		if v, ok := m[f]; ok {
			sm, err := toStringMap(v, false)
			if err != nil {
				bad(f, "%v", err)
			}
			if f == "labels" {
				t.Labels = sm
			} else {
				t.NodeSelector = sm
			}
		}
	}
	if v, ok := m["tolerations"]; ok {
		tol, err := toTolerations(v)
		if err != nil {
			bad("tolerations", "%v", err)
		}
		t.Tolerations = tol
	}
	if v, ok := m["params"]; ok {
		pm, isObj := v.(map[string]any)
		if !isObj {
			bad("params", "must be an object of name: value")
		} else {
			t.Params = make(map[string]any, len(pm))
			for k, pv := range pm {
				if !validEnvName(strings.ToUpper(k)) {
					bad("params", "%q is not a valid parameter name: use letters, digits and '_'", k)
				}
				t.Params[k] = plain(pv)
				if n := len(ParamString(t.Params[k])); n > MaxEnvParam && !p.warned[k] {
					p.warned[k] = true
					p.ps.warn(where, "params", "param %s is %s bytes, more than the %d KiB an environment variable can carry: the trial gets no %s; it reads the value from the params file $JIKKEN_PARAMS",
						k, thousands(n), MaxEnvParam>>10, ParamEnv(k))
				}
			}
		}
	}
	if v, ok := m["seed"]; ok {
		n, err := toInt(v)
		if err != nil {
			bad("seed", "%v", err)
		} else {
			t.Seed = &n
		}
	}
	if v, ok := m["retries"]; ok {
		n, err := toInt(v)
		if err != nil || n < 0 {
			bad("retries", "must be a whole number >= 0")
		}
		t.Retries = int(n)
	}
	dur := func(field string, dst *Duration) {
		if v, ok := m[field]; ok {
			b, _ := json.Marshal(v)
			if err := dst.UnmarshalJSON(b); err != nil {
				bad(field, "%v", err)
			}
		}
	}
	dur("timeout", &t.Timeout)
	dur("backoff", &t.Backoff)
	if v, ok := m["checkpoint"]; ok {
		c, err := toCheckpoint(v)
		if err != nil {
			bad("checkpoint", "%v", err)
		}
		t.Checkpoint = c
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"service", &t.Service}, {"show", &t.Show}, {"preemptible", &t.Preemptible}} {
		if v, ok := m[f.name]; ok {
			b, isBool := v.(bool)
			if !isBool {
				bad(f.name, "must be true or false")
			}
			*f.dst = b
		}
	}
	if c := t.Checkpoint; c != nil && c.Before > 0 && t.Timeout > 0 && c.Before >= t.Timeout {
		bad("checkpoint", "before (%s) must be shorter than the timeout (%s): the trial is warned that long before its timeout ends it", time.Duration(c.Before), time.Duration(t.Timeout))
	}
	if t.Preemptible {
		t.Requeues = DefaultRequeues
	}
	if v, ok := m["requeues"]; ok {
		n, err := toInt(v)
		if err != nil || n < 0 {
			bad("requeues", "must be a whole number >= 0")
		}
		if !t.Preemptible {
			bad("requeues", "only a preemptible trial is requeued; set preemptible: true, or use retries")
		}
		t.Requeues = int(n)
	}
	if v, ok := m["restart"]; ok {
		r, isStr := v.(string)
		switch Restart(r) {
		case RestartNo, RestartOnFailure, RestartAlways:
			t.Restart = Restart(r)
		case "unless-stopped":
			t.Restart = RestartAlways
		default:
			if !isStr {
				r = fmt.Sprint(v)
			}
			bad("restart", "%q is not a restart policy; use \"no\", \"on-failure\" or \"always\"", r)
		}
	}
	if v, ok := m["resources"]; ok {
		r, err := toResources(v)
		if err != nil {
			bad("resources", "%v", err)
		}
		t.Resources = r
	}
	if v, ok := m["health"]; ok {
		h, err := toHealth(v)
		if err != nil {
			bad("health", "%v", err)
		}
		t.Health = h
	}
	for _, f := range []string{"ports", "volumes", "networks", "after"} {
		v, ok := m[f]
		if !ok {
			continue
		}
		var list []string
		var err error
		if f == "ports" || f == "volumes" {
			list, err = toMappingList(f, v)
		} else {
			list, err = toStringList(v)
		}
		if err != nil {
			bad(f, "%v", err)
			continue
		}
		switch f {
		case "ports":
			for _, pt := range list {
				if err := checkPort(pt); err != nil {
					bad(f, "%v", err)
				}
			}
			t.Ports = list
		case "volumes":
			for _, vol := range list {
				if err := checkVolume(vol); err != nil {
					bad(f, "%v", err)
				}
			}
			t.Volumes = list
		case "networks":
			t.Networks = list
		case "after":
			t.After = list
		}
	}
	if v, ok := m["depends"]; ok {
		p.depends(v, where, idx)
	}
	return t
}

func (p *parser) depends(v any, where string, idx int) {
	list, ok := v.([]any)
	if !ok {
		p.ps.add(where, "depends", "must be an array of trial names or {trial, condition} objects")
		return
	}
	for _, e := range list {
		switch d := e.(type) {
		case string:
			p.rawDeps = append(p.rawDeps, rawDep{trial: idx, name: d, where: where, origin: p.ps.origin})
		case map[string]any:
			name, _ := d["trial"].(string)
			cond, _ := d["condition"].(string)
			for _, k := range sortedKeys(d) {
				if k != "trial" && k != "condition" {
					p.ps.add(where, "depends", "unknown field %q in a dependency; use trial and condition", k)
				}
			}
			if name == "" {
				p.ps.add(where, "depends", "a dependency object needs trial: NAME")
				continue
			}
			c := Condition(cond)
			switch c {
			case "", Started, Healthy, Completed, Succeeded:
			default:
				p.ps.add(where, "depends", "condition %q is not one of started, healthy, completed, succeeded", cond)
			}
			p.rawDeps = append(p.rawDeps, rawDep{trial: idx, name: name, cond: c, where: where, origin: p.ps.origin})
		default:
			p.ps.add(where, "depends", "must be an array of trial names or {trial, condition} objects")
		}
	}
}

// link checks names are unique, resolves dependencies (a name may be a matrix group) and
// rejects cycles.
func (p *parser) link() {
	byName := make(map[string]int, len(p.trials))
	for i, t := range p.trials {
		if j, dup := byName[t.Name]; dup {
			p.ps.origin = p.origins[i]
			p.ps.add(strconv.Quote(t.Name), "name", "duplicate name: trials #%d and #%d are both called %q", j, i, t.Name)
			continue
		}
		byName[t.Name] = i
	}
	for g := range p.groups {
		if _, clash := byName[g]; clash {
			p.ps.add(strconv.Quote(g), "name", "a trial and a matrix group are both called %q; rename one", g)
		}
	}
	expand := func(name string) []string {
		if members, ok := p.groups[name]; ok {
			return members
		}
		return []string{name}
	}
	unknown := map[string]bool{} // reported once for a whole matrix group
	for _, d := range p.rawDeps {
		p.ps.origin = d.origin
		for _, target := range expand(d.name) {
			ti, ok := byName[target]
			if !ok && p.broken[target] {
				continue // its own problems are reported
			}
			if key := fmt.Sprint(d.origin, d.name); !ok && !unknown[key] {
				unknown[key] = true
				p.ps.add(d.where, "depends", "unknown trial %q%s", d.name, suggest(d.name, p.names()))
			}
			if !ok {
				continue
			}
			if d.trial < 0 {
				continue
			}
			t := &p.trials[d.trial]
			cond := d.cond
			if cond == "" {
				cond = Started
				if p.trials[ti].Health != nil {
					cond = Healthy
				}
			}
			if cond == Healthy && p.trials[ti].Health == nil && p.trials[ti].Image == "" {
				// With an image, the image's own HEALTHCHECK may be the check.
				p.ps.add(strconv.Quote(t.Name), "depends", "waits for %q to be healthy, but %q has no health check (and no image that could have one)", target, target)
			}
			t.Depends = append(t.Depends, Dependency{Trial: target, Condition: cond})
		}
	}
	growing := map[string]bool{}
	for _, sq := range p.sequential {
		growing[sq.Group] = true
	}
	for _, r := range p.races {
		growing[r.Group] = true
	}
	for i := range p.trials {
		t := &p.trials[i]
		p.ps.origin = p.origins[i]
		var after []string
		for _, a := range t.After {
			if ti, ok := byName[a]; growing[a] || (ok && growing[p.trials[ti].Group]) {
				p.ps.add(strconv.Quote(t.Name), "after", "%q grows while the run runs (sequential seeds or a race), so nothing can wait for all of it; compare the group after the run (jikken compare)", a)
				continue
			}
			for _, target := range expand(a) {
				ti, ok := byName[target]
				switch {
				case !ok && p.broken[target]:
				case !ok:
					p.ps.add(strconv.Quote(t.Name), "after", "unknown trial %q%s", a, suggest(a, p.names()))
				case p.trials[ti].Service:
					p.ps.add(strconv.Quote(t.Name), "after", "%q is a service, which runs until its dependants end, so it never succeeds first; use depends", target)
				default:
					after = append(after, target)
				}
			}
		}
		t.After = after
	}
	p.services(byName)
	if s := p.searchBlock; s != nil {
		for _, t := range p.trials {
			if _, clash := s.IsTrial(t.Name); clash || t.Name == s.Name {
				p.ps.add(strconv.Quote(t.Name), "name", "clashes with the search %q, whose trials are %s-0, %s-1, ...; rename one", s.Name, s.Name, s.Name)
			}
		}
		if _, clash := p.groups[s.Name]; clash {
			p.ps.add("", "search.name", "a matrix group is also called %q; rename one", s.Name)
		}
		var after []any
		for _, a := range s.After() {
			for _, target := range expand(a) {
				ti, ok := byName[target]
				switch {
				case !ok:
					p.ps.add("", "search.after", "unknown trial %q%s", a, suggest(a, p.names()))
				case p.trials[ti].Service:
					p.ps.add("", "search.after", "%q is a service, which runs until its dependants end, so it never succeeds first; use a trial", target)
				default:
					after = append(after, target)
				}
			}
		}
		s.template["after"] = after
	}
	if cycle := findCycle(p.trials); cycle != nil {
		first := byName[cycle[0]]
		field := "depends"
		if contains(p.trials[first].After, cycle[1]) {
			field = "after"
		}
		p.ps.origin = p.origins[first]
		p.ps.add(strconv.Quote(cycle[0]), field, "dependency cycle: %s", strings.Join(cycle, " -> "))
	}
	p.ps.origin = nil
}

// services marks as services the trials that others depend on to have started (or be
// healthy) and that no trial waits for to end (no after, no completed or succeeded condition):
// in combu and compose such a trial is a server its dependants use. A service keeps no timeout
// from defaults: it runs as long as trials need it. Only services take restart.
func (p *parser) services(byName map[string]int) {
	dependedOn := make([]bool, len(p.trials))
	waitedFor := make([]bool, len(p.trials))
	for _, t := range p.trials {
		for _, d := range t.Depends {
			i := byName[d.Trial]
			if d.Condition == Started || d.Condition == Healthy {
				dependedOn[i] = true
			} else {
				waitedFor[i] = true
			}
		}
		for _, a := range t.After {
			waitedFor[byName[a]] = true
		}
	}
	for i := range p.trials {
		t := &p.trials[i]
		if !t.Service && dependedOn[i] && !waitedFor[i] {
			t.Service, t.ServiceImplied = true, true
		}
		if t.Service && p.defaultTimeout[i] {
			t.Timeout = 0
		}
		if t.Restart != "" && !t.Service {
			p.ps.origin = p.origins[i]
			p.ps.add(strconv.Quote(t.Name), "restart", "only services restart; nothing depends on %q to have started, so use retries", t.Name)
		}
	}
}

// escapes reports whether a workdir leaves the experiment's folder: a relative path that climbs
// out with .., or an absolute one, except in a container, whose own paths those are.
func escapes(dir string, container bool) bool {
	if filepath.IsAbs(dir) || strings.HasPrefix(dir, "/") {
		return !container
	}
	return !filepath.IsLocal(dir)
}

func (p *parser) names() []string {
	out := make([]string, 0, len(p.trials)+len(p.groups))
	for _, t := range p.trials {
		out = append(out, t.Name)
	}
	for g := range p.groups {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
