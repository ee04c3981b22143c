package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Request is everything a suggestion may depend on; the answer is a pure function of it.
//
// Samplers keep what they derive from each observation between calls (its decoded params,
// its rank), keyed by the identity of its Params map and of its Values and Constraints arrays,
// and decoded pending trials by the identity of their maps: a caller must not change a Params
// map or a Values or Constraints array it has passed before (pass a new one instead). Passing
// the same maps and arrays on every call keeps that cache warm.
type Request struct {
	Space      Space
	Objectives []Objective
	Seed       uint64
	Number     int           // the number of the trial being suggested (0-based)
	History    []Observation // finished trials, by Number
	Pending    []Params      // suggested, not finished (constant liar etc.)
}

// Sampler suggests params. Implementations may cache work between calls (keyed by what they
// saw), but the answer depends only on the Request. Safe for use by one goroutine.
type Sampler interface {
	Suggest(r Request) (Params, error)
}

// ErrExhausted is returned by a sampler that has no more points to give (grid): the plan ends.
var ErrExhausted = errors.New("search: the sampler has no more points")

type constructor struct {
	names []string // the first is the canonical name
	make  func(opts *options) (Sampler, error)
}

var constructors = []constructor{
	{[]string{"random"}, newRandom},
	{[]string{"grid"}, newGrid},
	{[]string{"halton", "qmc", "quasi-random", "quasirandom"}, newHalton},
	{[]string{"tpe"}, newTPE},
	{[]string{"cmaes", "cma-es", "cma"}, newCMAES},
	{[]string{"nsga2", "nsga-ii", "nsgaii"}, newNSGA2},
}

// Names lists the samplers New knows (canonical names), for errors and --help.
func Names() []string {
	out := make([]string, len(constructors))
	for i, c := range constructors {
		out[i] = c.names[0]
	}
	return out
}

// New builds a sampler by name (case-insensitive; synonyms: qmc and quasi-random for halton,
// cma-es for cmaes, nsga-ii for nsga2); options are the experiment's sampler options (may be
// nil). An unknown name or option is an error that lists the known ones.
func New(name string, options map[string]any) (Sampler, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, c := range constructors {
		if slices.Contains(c.names, n) {
			opts := newOptions(c.names[0], options)
			s, err := c.make(&opts)
			if err != nil {
				return nil, err
			}
			if err := opts.unused(); err != nil {
				return nil, err
			}
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown sampler %q; use one of %s", name, strings.Join(Names(), ", "))
}

// options reads a sampler's options and remembers which were read, so that a misspelt one is
// an error rather than silently ignored.
type options struct {
	sampler string
	m       map[string]any
	read    map[string]bool
	known   []string
}

func newOptions(sampler string, m map[string]any) options {
	return options{sampler: sampler, m: m, read: map[string]bool{}}
}

func (o *options) get(key string) (any, bool) {
	o.known = append(o.known, key)
	o.read[key] = true
	v, ok := o.m[key]
	return v, ok
}

// float reads a number option, checking it lies in [lo, hi].
func (o *options) float(key string, def, lo, hi float64) (float64, error) {
	v, ok := o.get(key)
	if !ok {
		return def, nil
	}
	x, isNum := number(v)
	if !isNum || math.IsNaN(x) || x < lo || x > hi {
		return 0, fmt.Errorf("sampler %s: option %s: want a number in [%v, %v], got %v", o.sampler, key, lo, hi, v)
	}
	return x, nil
}

// int reads a whole-number option, checking it lies in [lo, hi].
func (o *options) int(key string, def, lo, hi int) (int, error) {
	v, ok := o.get(key)
	if !ok {
		return def, nil
	}
	x, isNum := number(v)
	if !isNum || x != math.Trunc(x) || x < float64(lo) || x > float64(hi) {
		return 0, fmt.Errorf("sampler %s: option %s: want a whole number in [%d, %d], got %v", o.sampler, key, lo, hi, v)
	}
	return int(x), nil
}

func (o *options) bool(key string, def bool) (bool, error) {
	v, ok := o.get(key)
	if !ok {
		return def, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, fmt.Errorf("sampler %s: option %s: want true or false, got %v", o.sampler, key, v)
	}
	return b, nil
}

// word reads an option that is one of words; the first is the default.
func (o *options) word(key string, words ...string) (string, error) {
	v, ok := o.get(key)
	if !ok {
		return words[0], nil
	}
	w, isString := v.(string)
	if !isString || !slices.Contains(words, w) {
		return "", fmt.Errorf("sampler %s: option %s: want one of %s, got %v", o.sampler, key, strings.Join(words, ", "), v)
	}
	return w, nil
}

func (o *options) unused() error {
	var bad []string
	for k := range o.m {
		if !o.read[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	known := "none"
	if len(o.known) > 0 {
		known = strings.Join(o.known, ", ")
	}
	return fmt.Errorf("sampler %s: unknown option %s; known options: %s", o.sampler, strings.Join(bad, ", "), known)
}

// rng is the generator of one suggestion: a PCG keyed by the seed and the trial's number, with
// a stream constant per use so that two uses for the same trial draw independent numbers.
func rng(seed uint64, number int, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^stream, splitmix(uint64(number)^stream)))
}

// splitmix scrambles a counter so that neighbouring trial numbers start far apart.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Stream constants of rng, one per use.
const (
	streamRandom uint64 = 0x72616e646f6d // "random"
	streamHalton uint64 = 0x68616c746f6e // "halton"
	streamTPE    uint64 = 0x747065       // "tpe"
	streamCMA    uint64 = 0x636d61       // "cma"
	streamNSGA   uint64 = 0x6e736761     // "nsga"
	streamImp    uint64 = 0x696d70       // "imp"
)

// randomParams draws every active param uniformly (on its internal coordinate), in the order
// that puts parents first; fixed holds values already chosen, which are kept.
func randomParams(g *geometry, r *rand.Rand, fixed Params) Params {
	out := make(Params, len(g.dims))
	for _, i := range g.order {
		d := &g.dims[i]
		u := r.Float64()
		if !g.active(i, out) {
			continue
		}
		if v, ok := fixed[d.p.Name]; ok {
			out[d.p.Name] = v
			continue
		}
		out[d.p.Name] = d.fromUnit(u)
	}
	return out
}
