package prune

import (
	"fmt"
	"math"
	"sort"
)

// asha is asynchronous successive halving: a trial judged at a rung goes on only if it ranks in
// the top 1/eta of the trials that reached that rung so far.
type asha struct {
	minResource int64
	maxResource int64 // 0: no end
	eta         int64
	warmup      int64
	minTrials   int
}

func (o *opts) asha() Pruner {
	a := asha{
		minResource: o.whole("min_resource", 1, 1),
		maxResource: o.whole("max_resource", 0, 0),
		warmup:      o.whole("warmup_steps", 0, 0),
		minTrials:   int(o.whole("min_trials", 1, 1)),
	}
	a.eta = o.eta(4)
	return a
}

// eta reads reduction_factor, or its synonym eta.
func (o *opts) eta(def int64) int64 {
	if _, ok := o.m["eta"]; ok {
		if _, both := o.m["reduction_factor"]; both {
			o.fail("eta", "give reduction_factor or eta, not both")
		}
		return o.whole("eta", def, 2)
	}
	return o.whole("reduction_factor", def, 2)
}

func (a asha) Prune(number int, curves []Curve, minimize bool) (bool, string) {
	c, why := current(number, curves)
	if c == nil {
		return false, why
	}
	last := lastStep(c)
	prev := int64(math.MinInt64)
	if n := len(c.Points); n > 1 {
		prev = c.Points[n-2].Step
	}
	kept := ""
	for _, r := range a.rungs(last) {
		if r <= prev || r < a.warmup {
			continue
		}
		stop, why := a.judge(c, r, curves, minimize)
		if stop {
			return true, why
		}
		kept = why
	}
	if kept == "" {
		return false, fmt.Sprintf("kept at step %d: no rung reached at this step", last)
	}
	return false, kept
}

// rungs lists the rungs at or below step last, in order.
func (a asha) rungs(last int64) []int64 {
	var rs []int64
	for r := a.minResource; r <= last && (a.maxResource == 0 || r < a.maxResource); r *= a.eta {
		rs = append(rs, r)
		if r > math.MaxInt64/a.eta {
			break
		}
	}
	return rs
}

// judge ranks trial c among the trials that reached rung r: best value first, NaN last, equal
// values by Number. It counts rather than sorts, so a decision costs one pass over the curves.
func (a asha) judge(c *Curve, r int64, curves []Curve, minimize bool) (bool, string) {
	mine, _ := rungValue(c, r)
	n, rank := 0, 0
	for i := range curves {
		o := &curves[i]
		v, ok := rungValue(o, r)
		if !ok {
			continue
		}
		n++
		if better(v, mine, minimize) || (!better(mine, v, minimize) && o.Number < c.Number) {
			rank++
		}
	}
	step := lastStep(c)
	if n-1 < a.minTrials {
		return false, fmt.Sprintf("kept at step %d: %d other trials reached rung %d, %d needed", step, n-1, r, a.minTrials)
	}
	top := max(1, n/int(a.eta))
	if rank >= top {
		return true, fmt.Sprintf("pruned at step %d: %s ranks %d of %d trials at rung %d, outside the top %d", step, num(mine), rank+1, n, r, top)
	}
	return false, fmt.Sprintf("kept at step %d: %s ranks %d of %d trials at rung %d, within the top %d", step, num(mine), rank+1, n, r, top)
}

// rungValue is a curve's value at its first point at or past step r, if it has one.
func rungValue(c *Curve, r int64) (float64, bool) {
	i := sort.Search(len(c.Points), func(i int) bool { return c.Points[i].Step >= r })
	if i == len(c.Points) {
		return 0, false
	}
	return c.Points[i].Value, true
}
