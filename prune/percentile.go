package prune

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// percentilePruner compares a trial's best value so far with a percentile of the complete
// trials' values at the same step (Optuna's PercentilePruner and MedianPruner).
type percentilePruner struct {
	name      string  // "median" or "percentile", for the sentences
	p         float64 // the percentile kept, 0-100
	warmup    int64
	startup   int
	minTrials int
}

func (o *opts) percentile(name string, def float64) Pruner {
	q := percentilePruner{name: name, p: def}
	if name == "percentile" {
		q.p = o.number("percentile", def)
		if math.IsNaN(q.p) {
			o.fail("percentile", "required: the percentile of trials kept, 0-100 (25 keeps the best quarter)")
		} else if q.p < 0 || q.p > 100 {
			o.fail("percentile", "must be within 0-100, got %v", q.p)
		}
	}
	q.warmup = o.whole("warmup_steps", 0, 0)
	q.startup = int(o.whole("startup_trials", 5, 0))
	q.minTrials = int(o.whole("min_trials", 1, 1))
	return q
}

func (q percentilePruner) Prune(number int, curves []Curve, minimize bool) (bool, string) {
	c, why := current(number, curves)
	if c == nil {
		return false, why
	}
	step := lastStep(c)
	if step < q.warmup {
		return false, fmt.Sprintf("kept at step %d: warming up until step %d", step, q.warmup)
	}
	complete := 0
	var vals []float64
	for i := range curves {
		o := &curves[i]
		if !o.Done || o.Number == number {
			continue
		}
		complete++
		if v, ok := valueAt(o, step); ok && !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if complete < q.startup {
		return false, fmt.Sprintf("kept at step %d: %d of the %d startup trials are complete", step, complete, q.startup)
	}
	if len(vals) < q.minTrials {
		return false, fmt.Sprintf("kept at step %d: %d complete trials reached this step, %d needed", step, len(vals), q.minTrials)
	}
	best, ok := bestSoFar(c.Points, minimize)
	if !ok {
		return true, fmt.Sprintf("pruned at step %d: every value reported is NaN", step)
	}
	p := q.p
	if !minimize {
		p = 100 - p
	}
	limit := percentileOf(vals, p)
	what := fmt.Sprintf("the median %s", num(limit))
	if q.name != "median" {
		what = fmt.Sprintf("the %s %s", ordinal(q.p), num(limit))
		if !minimize {
			what = fmt.Sprintf("the %s from the top %s", ordinal(q.p), num(limit))
		}
	}
	if better(limit, best, minimize) {
		return true, fmt.Sprintf("pruned at step %d: its best value %s is worse than %s of %d complete trials", step, num(best), what, len(vals))
	}
	return false, fmt.Sprintf("kept at step %d: its best value %s is not worse than %s of %d complete trials", step, num(best), what, len(vals))
}

// valueAt is a curve's last value at a step <= step, if the curve reached step.
func valueAt(c *Curve, step int64) (float64, bool) {
	n := len(c.Points)
	if n == 0 || c.Points[n-1].Step < step {
		return 0, false
	}
	i := sort.Search(n, func(i int) bool { return c.Points[i].Step > step })
	if i == 0 {
		return 0, false
	}
	return c.Points[i-1].Value, true
}

// bestSoFar is the best value of the points, NaN ignored; false when all are NaN.
func bestSoFar(ps []Point, minimize bool) (float64, bool) {
	best, ok := math.NaN(), false
	for _, p := range ps {
		if !math.IsNaN(p.Value) && (!ok || better(p.Value, best, minimize)) {
			best, ok = p.Value, true
		}
	}
	return best, ok
}

// percentileOf is the p-th percentile of vals by linear interpolation between the order
// statistics (numpy's default, so Optuna's thresholds are reproduced). vals is not empty.
func percentileOf(vals []float64, p float64) float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	h := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// ordinal writes a percentile for a sentence: "25th percentile".
func ordinal(p float64) string {
	suffix := "th"
	if p == math.Trunc(p) {
		switch n := int(p); {
		case n%100 >= 11 && n%100 <= 13:
		case n%10 == 1:
			suffix = "st"
		case n%10 == 2:
			suffix = "nd"
		case n%10 == 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%g%s percentile", p, suffix)
}
