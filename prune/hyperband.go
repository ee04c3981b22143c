package prune

import "fmt"

// hyperband runs several asha brackets, each from its own first rung, and puts each trial in one
// by its Number. The last bracket may start at max_resource: its trials are never pruned, as in
// Hyperband's bracket without halving.
type hyperband struct {
	brackets []asha
	weights  []uint64 // trials per bracket, relative
	total    uint64
}

func (o *opts) hyperband() Pruner {
	minR := o.whole("min_resource", 1, 1)
	maxR := o.whole("max_resource", 0, 0)
	eta := o.eta(3)
	warmup := o.whole("warmup_steps", 0, 0)
	minTrials := int(o.whole("min_trials", 1, 1))
	if maxR == 0 {
		o.fail("max_resource", "required: the step a trial that is never pruned reaches")
		return hyperband{}
	}
	if maxR <= minR {
		o.fail("max_resource", "must be above min_resource %d, got %d", minR, maxR)
		return hyperband{}
	}
	n := int64(1) // floor(log_eta(max/min)) + 1, in integers
	for r := minR; r <= maxR/eta; r *= eta {
		n++
	}
	n = o.whole("brackets", n, 1)
	h := hyperband{}
	first := minR
	for b := range n {
		if first > maxR {
			o.fail("brackets", "at most %d with min_resource %d, max_resource %d and reduction_factor %d", b, minR, maxR, eta)
			return hyperband{}
		}
		h.brackets = append(h.brackets, asha{minResource: first, maxResource: maxR, eta: eta, warmup: warmup, minTrials: minTrials})
		// Optuna's allocation: ceil(n * eta^s / (s+1)) with s = n-1-b halvings.
		s := n - 1 - b
		w := uint64(n)
		for range s {
			w *= uint64(eta)
		}
		w = (w + uint64(s)) / uint64(s+1)
		h.weights = append(h.weights, w)
		h.total += w
		first *= eta
	}
	return h
}

// bracket is the bracket of trial number: a 64-bit mix of the Number (splitmix64's finaliser),
// so neighbouring Numbers, which a grid gives neighbouring params, land in unrelated brackets.
func (h hyperband) bracket(number int) int {
	z := uint64(number) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	pos := z % h.total
	for b, w := range h.weights {
		if pos < w {
			return b
		}
		pos -= w
	}
	return len(h.weights) - 1
}

func (h hyperband) Prune(number int, curves []Curve, minimize bool) (bool, string) {
	b := h.bracket(number)
	var mine []Curve
	for _, c := range curves {
		if h.bracket(c.Number) == b {
			mine = append(mine, c)
		}
	}
	stop, why := h.brackets[b].Prune(number, mine, minimize)
	return stop, fmt.Sprintf("%s (hyperband bracket %d of %d, first rung %d)", why, b+1, len(h.brackets), h.brackets[b].minResource)
}
