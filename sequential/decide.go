package sequential

import (
	"fmt"
	"math"
)

// Verdict is where one pair of groups stands.
type Verdict uint8

const (
	// Open: not decided yet; more seeds may decide it.
	Open Verdict = iota
	// ABetter and BBetter: the pair differs, the named group ranks better.
	ABetter
	BBetter
	// NoDifference: settled without a difference, by the futility rule or at the last look.
	NoDifference
)

func (v Verdict) String() string {
	return [...]string{"open", "a-better", "b-better", "no-difference"}[v]
}

// Pair is the verdict on groups A and B (A < B), with the look that settled it.
type Pair struct {
	A, B int
	// Z is the standardised difference of their rank sums at the look that settled the pair,
	// or the latest one while it is open: negative when A ranks better.
	Z       float64
	Verdict Verdict
	// Look is the index of the look that settled the pair (-1 while open).
	Look int
}

// Decision is what to do after the results so far.
type Decision struct {
	// Stop is set when every pair is settled (or the last look is reached): no seed is added.
	Stop bool
	// Look is the index of the latest look the results reach (-1: not the first one yet).
	Look int
	// Seeds is how many seeds every block of every group should have: the next look's count
	// while the comparison goes on, the stopping look's once it stops.
	Seeds int
	Pairs []Pair
}

// Seed holds one seed's results: Seed[block][group] is the value of group in block, oriented so
// that lower is better. A failed trial is +Inf (or NaN): the worst, tied with other failures.
type Seed [][]float64

// Decide replays the looks the results reach, in order, and says whether to stop. seeds are the
// completed seeds, in the order they were planned; every seed has the same blocks, each with a
// value for every group. The answer depends only on the
// arguments: seeds beyond the look that stopped the comparison change nothing.
func (bd *Bounds) Decide(seeds []Seed) (Decision, error) {
	d, crit := bd.Design, bd.Crit
	if len(crit) != len(d.Looks) {
		return Decision{}, fmt.Errorf("decide: %d boundaries for %d looks", len(crit), len(d.Looks))
	}
	pairs := pairsOf(d.Groups)
	dec := Decision{Look: -1, Seeds: d.Looks[0], Pairs: make([]Pair, len(pairs))}
	for j, pr := range pairs {
		dec.Pairs[j] = Pair{A: pr[0], B: pr[1], Look: -1}
	}
	sums := make([]float64, d.Groups)
	v, used := 0.0, 0
	zfix := bd.Fixed
	last := d.Looks[len(d.Looks)-1]
	for l, n := range d.Looks {
		if n > len(seeds) {
			break
		}
		for ; used < n; used++ {
			dv, err := addSeed(sums, seeds[used], d.Groups)
			if err != nil {
				return Decision{}, fmt.Errorf("decide: seed %d: %w", used, err)
			}
			v += dv
		}
		dec.Look = l
		t := float64(n) / float64(last)
		settled := 0
		for j := range dec.Pairs {
			p := &dec.Pairs[j]
			if p.Verdict != Open {
				settled++
				continue
			}
			p.Z = 0
			if v > 0 {
				p.Z = (sums[p.A] - sums[p.B]) / math.Sqrt(2*v)
			}
			switch {
			case math.Abs(p.Z) >= crit[l] && p.Z < 0:
				p.Verdict = ABetter
			case math.Abs(p.Z) >= crit[l]:
				p.Verdict = BBetter
			case l == len(d.Looks)-1:
				p.Verdict = NoDifference
			case d.Futility > 0 && conditionalPower(math.Abs(p.Z), t, zfix) < d.Futility:
				p.Verdict = NoDifference
			}
			if p.Verdict != Open {
				p.Look = l
				settled++
			}
		}
		if settled == len(dec.Pairs) {
			dec.Stop, dec.Seeds = true, n
			return dec, nil
		}
		if l+1 < len(d.Looks) {
			dec.Seeds = d.Looks[l+1]
		}
	}
	return dec, nil
}

// addSeed adds a seed's within-block ranks (1 = best, ties share their mid-rank) to the rank
// sums and returns the seed's share of their null variance: for each block, the sum of squared
// deviations of its mid-ranks over k-1, which is the variance of one group's rank given the
// block's ties times k/(k-1), the variance of a rank sum's share (all tied: nothing).
func addSeed(sums []float64, s Seed, k int) (float64, error) {
	v := 0.0
	mean := float64(k+1) / 2
	for b, block := range s {
		if len(block) != k {
			return 0, fmt.Errorf("block %d has %d values for %d groups", b, len(block), k)
		}
		ss := 0.0
		for g, x := range block {
			// Groups are few: counting beats sorting, and needs no allocation.
			below, same := 0, 0
			for _, y := range block {
				switch {
				case worse(x, y):
					below++
				case !worse(y, x):
					same++
				}
			}
			r := float64(below) + float64(same+1)/2
			sums[g] += r
			ss += (r - mean) * (r - mean)
		}
		v += ss / float64(k-1)
	}
	return v, nil
}

// worse reports whether x ranks after y (lower is better; NaN, a failure, ties with +Inf).
func worse(x, y float64) bool {
	if math.IsNaN(x) {
		x = math.Inf(1)
	}
	if math.IsNaN(y) {
		y = math.Inf(1)
	}
	return x > y
}
