package sequential

import (
	"fmt"
	"math"
	"slices"

	"github.com/jikken-dev/jikken/stats"
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
	// Z is the pair's standardised signed-rank statistic at the look that settled it, or the
	// latest one while it is open: negative when A tends to be better (lower).
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
// value for every group. At each look every open pair's signed-rank statistic over all blocks
// so far is tested, Holm's way: against the boundary of level alpha/(pairs-j), j being the pairs
// decided different so far, again after each new decision. The answer depends only on the
// arguments: seeds beyond the look that stopped the comparison change nothing.
func (bd *Bounds) Decide(seeds []Seed) (Decision, error) {
	d := bd.Design
	pairs := make([]Pair, 0, d.pairs())
	for a := range d.Groups {
		for b := a + 1; b < d.Groups; b++ {
			pairs = append(pairs, Pair{A: a, B: b, Look: -1})
		}
	}
	dec := Decision{Look: -1, Seeds: d.Looks[0], Pairs: pairs}
	for s, seed := range seeds {
		for b, block := range seed {
			if len(block) != d.Groups {
				return Decision{}, fmt.Errorf("decide: seed %d block %d has %d values for %d groups", s, b, len(block), d.Groups)
			}
		}
	}
	last := d.Looks[len(d.Looks)-1]
	decided := 0
	for l, n := range d.Looks {
		if n > len(seeds) {
			break
		}
		dec.Look = l
		t := float64(n) / float64(last)
		open := 0
		for j := range pairs {
			if p := &pairs[j]; p.Verdict == Open {
				p.Z = signedRankZ(seeds[:n], p.A, p.B)
				open++
			}
		}
		// Holm: each decision raises the level of the pairs still open.
		for progress := true; progress && open > 0; {
			progress = false
			for j := range pairs {
				p := &pairs[j]
				if p.Verdict != Open || math.Abs(p.Z) < bd.Crit[decided][l] {
					continue
				}
				p.Verdict, p.Look = ABetter, l
				if p.Z > 0 {
					p.Verdict = BBetter
				}
				decided++
				open--
				progress = true
			}
		}
		for j := range pairs {
			p := &pairs[j]
			if p.Verdict != Open {
				continue
			}
			if l == len(d.Looks)-1 || (d.Futility > 0 && conditionalPower(math.Abs(p.Z), t, bd.Fixed[decided]) < d.Futility) {
				p.Verdict, p.Look = NoDifference, l
				open--
			}
		}
		if open == 0 {
			dec.Stop, dec.Seeds = true, n
			return dec, nil
		}
		if l+1 < len(d.Looks) {
			dec.Seeds = d.Looks[l+1]
		}
	}
	return dec, nil
}

// signedRankZ is the standardised Wilcoxon signed-rank statistic of the differences a - b over
// every block of the seeds: zero differences dropped, tied magnitudes sharing mid-ranks, the
// variance corrected for ties, no continuity correction (0 when no difference is left). Two
// failures in a block tie; a failure against a value is the largest difference.
func signedRankZ(seeds []Seed, a, b int) float64 {
	var diff []float64
	for _, seed := range seeds {
		for _, block := range seed {
			x, y := block[a], block[b]
			if math.IsNaN(x) {
				x = math.Inf(1)
			}
			if math.IsNaN(y) {
				y = math.Inf(1)
			}
			if x != y {
				diff = append(diff, x-y)
			}
		}
	}
	if len(diff) == 0 {
		return 0
	}
	abs := make([]float64, len(diff))
	for i, v := range diff {
		abs[i] = math.Abs(v)
	}
	r := stats.Rank(abs)
	v, ties := 0.0, 0.0
	for i, x := range diff {
		if x > 0 {
			v += r[i]
		}
	}
	// The tie term: sum t^3 - t over the groups of t equal magnitudes.
	slices.Sort(abs)
	for i := 0; i < len(abs); {
		j := i + 1
		for j < len(abs) && abs[j] == abs[i] {
			j++
		}
		c := float64(j - i)
		ties += c*c*c - c
		i = j
	}
	n := float64(len(diff))
	sd := math.Sqrt(n*(n+1)*(2*n+1)/24 - ties/48)
	if sd == 0 {
		return 0
	}
	return (v - n*(n+1)/4) / sd
}
