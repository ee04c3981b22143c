package prune

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Point is an intermediate value of the objective at a step (the trial's own step numbers; a
// point reported without a step has the number of points before it as its step).
type Point struct {
	Step  int64
	Value float64
}

// Curve is one trial's intermediate values.
type Curve struct {
	Number int     // the trial's number in the plan
	Points []Point // in step order
	Done   bool    // the trial finished (complete), so its curve is final
	Pruned bool
}

// Pruner decides whether a running trial should stop now.
type Pruner interface {
	// Prune says whether trial number (whose curve is the element of curves with that Number)
	// should stop now, and why, in a sentence for the trial's record. Pure: the answer depends
	// only on the arguments, not on earlier calls nor on the order of curves.
	//
	// Ask once per new point of the trial: "asha" and "hyperband" judge a rung at the point
	// that first reaches it (the curve's last point). A caller that receives several points of
	// one trial at once asks for each, its curve cut after that point, and stops at the first
	// stop. The other curves are as they are now.
	Prune(number int, curves []Curve, minimize bool) (stop bool, why string)
}

// Names lists the pruners New knows (without synonyms), for errors and help.
func Names() []string { return []string{"none", "median", "percentile", "asha", "hyperband"} }

// New builds a pruner by name with its options (nil: the defaults); see the package doc for both.
// An unknown name or option, or a value out of range, is an error that names it.
func New(name string, options map[string]any) (Pruner, error) {
	o := opts{pruner: name, m: options}
	var p Pruner
	switch strings.ToLower(name) {
	case "none", "":
		p = none{}
	case "median":
		p = o.percentile("median", 50)
	case "percentile":
		p = o.percentile("percentile", math.NaN())
	case "asha", "sha", "successive_halving", "successive-halving":
		p = o.asha()
	case "hyperband":
		p = o.hyperband()
	default:
		return nil, fmt.Errorf("unknown pruner %q; use one of %s", name, strings.Join(Names(), ", "))
	}
	if err := o.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

type none struct{}

func (none) Prune(number int, curves []Curve, _ bool) (bool, string) {
	return false, "kept: no pruner"
}

// current finds the curve of trial number and says why no decision is possible when it is
// missing, final or empty.
func current(number int, curves []Curve) (*Curve, string) {
	for i := range curves {
		c := &curves[i]
		if c.Number != number {
			continue
		}
		switch {
		case c.Done:
			return nil, fmt.Sprintf("kept: trial %d is complete", number)
		case c.Pruned:
			return nil, fmt.Sprintf("kept: trial %d is already pruned", number)
		case len(c.Points) == 0:
			return nil, fmt.Sprintf("kept: trial %d has reported no value yet", number)
		}
		return c, ""
	}
	return nil, fmt.Sprintf("kept: no curve for trial %d", number)
}

// lastStep is the step of a non-empty curve's latest point.
func lastStep(c *Curve) int64 { return c.Points[len(c.Points)-1].Step }

// better reports whether a ranks before b: the better value first, NaN last.
func better(a, b float64, minimize bool) bool {
	switch {
	case math.IsNaN(a):
		return false
	case math.IsNaN(b):
		return true
	case minimize:
		return a < b
	}
	return a > b
}

// num formats a value for a sentence: short, and exact enough to see why.
func num(v float64) string { return fmt.Sprintf("%.4g", v) }

// opts reads one pruner's options and remembers which were read, so unknown ones are refused.
type opts struct {
	pruner string
	m      map[string]any
	used   []string
	errs   []string
}

func (o *opts) value(key string) (any, bool) {
	o.used = append(o.used, key)
	v, ok := o.m[key]
	return v, ok
}

func (o *opts) fail(key, format string, args ...any) {
	o.errs = append(o.errs, fmt.Sprintf("option %s: %s", key, fmt.Sprintf(format, args...)))
}

// number reads a numeric option; def when absent.
func (o *opts) number(key string, def float64) float64 {
	v, ok := o.value(key)
	if !ok || v == nil {
		return def
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			o.fail(key, "%q is not a number", x)
			return def
		}
	default:
		o.fail(key, "must be a number, got %v", v)
		return def
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		o.fail(key, "must be a finite number, got %v", v)
		return def
	}
	return f
}

// whole reads a whole-number option of at least low.
func (o *opts) whole(key string, def, low int64) int64 {
	f := o.number(key, float64(def))
	if f != math.Trunc(f) || f < float64(low) || f > 1<<53 {
		o.fail(key, "must be a whole number >= %d, got %v", low, f)
		return def
	}
	return int64(f)
}

// finish refuses the options no pruner read and joins the problems into one error.
func (o *opts) finish() error {
	keys := make([]string, 0, len(o.m))
	for k := range o.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	known := slices.Clone(o.used)
	slices.Sort(known)
	known = slices.Compact(known)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			if len(known) == 0 {
				o.errs = append(o.errs, fmt.Sprintf("option %s: unknown; pruner %s takes no options", k, o.pruner))
			} else {
				o.errs = append(o.errs, fmt.Sprintf("option %s: unknown; pruner %s takes %s", k, o.pruner, strings.Join(known, ", ")))
			}
		}
	}
	if len(o.errs) == 0 {
		return nil
	}
	return fmt.Errorf("pruner %s: %s", o.pruner, strings.Join(o.errs, "; "))
}
