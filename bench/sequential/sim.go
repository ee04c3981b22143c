package main

import (
	"math"
	"math/rand/v2"

	"github.com/jikken-dev/jikken/sequential"
)

// A distribution draws one trial's value.
type distribution struct {
	name string
	draw func(r *rand.Rand) float64
}

var distributions = []distribution{
	{"normal", func(r *rand.Rand) float64 { return r.NormFloat64() }},
	{"cauchy", func(r *rand.Rand) float64 { return math.Tan(math.Pi * (r.Float64() - 0.5)) }},
	// Four values, so that most blocks hold ties: a score out of 3 (binomial 3, 1/2).
	{"discrete", func(r *rand.Rand) float64 {
		n := 0.0
		for range 3 {
			if r.Uint64()&1 == 1 {
				n++
			}
		}
		return n
	}},
}

// setup is one simulated comparison: groups x blocks, seeds added as the design asks.
type setup struct {
	bounds *sequential.Bounds
	blocks int
	// shift is added to group 0's values (negative: group 0 is better, lower being better).
	shift float64
	dist  distribution
}

// outcome is one replicate's end.
type outcome struct {
	anyDecided bool // some pair was decided different
	correct    int  // pairs with group 0 decided better (power: shift < 0)
	seeds      int  // seeds per block when it stopped
}

// replicate runs one comparison: the seeds the design asks for are drawn, batch by batch, and
// the design decides after each batch.
func (s setup) replicate(r *rand.Rand) outcome {
	var seeds []sequential.Seed
	for {
		dec, err := s.bounds.Decide(seeds)
		if err != nil {
			panic(err)
		}
		if dec.Stop {
			o := outcome{seeds: dec.Seeds}
			for _, p := range dec.Pairs {
				if p.Verdict == sequential.ABetter || p.Verdict == sequential.BBetter {
					o.anyDecided = true
				}
				if p.A == 0 && p.Verdict == sequential.ABetter {
					o.correct++
				}
			}
			return o
		}
		for len(seeds) < dec.Seeds {
			seed := make(sequential.Seed, s.blocks)
			for b := range seed {
				seed[b] = make([]float64, s.bounds.Groups)
				for g := range seed[b] {
					v := s.dist.draw(r) + float64(b)
					if g == 0 {
						v += s.shift
					}
					seed[b][g] = v
				}
			}
			seeds = append(seeds, seed)
		}
	}
}

// naive is repeated testing at alpha: every look uses the fixed-sample critical value.
func naive(b *sequential.Bounds) *sequential.Bounds {
	n := *b
	n.Crit = make([][]float64, len(b.Crit))
	for j := range n.Crit {
		n.Crit[j] = make([]float64, len(b.Looks))
		for l := range n.Crit[j] {
			n.Crit[j][l] = b.Fixed[j]
		}
	}
	return &n
}

// summary is a setup's figures over its replicates.
type summary struct {
	anyRate   float64 // share of replicates with some pair decided
	allPower  float64 // share with both pairs of group 0 decided in its favour
	meanSeeds float64
}

func run(s setup, replicates int, seed uint64) summary {
	r := rand.New(rand.NewPCG(seed, 0x5e9))
	var sum summary
	for range replicates {
		o := s.replicate(r)
		if o.anyDecided {
			sum.anyRate++
		}
		if o.correct == s.bounds.Groups-1 {
			sum.allPower++
		}
		sum.meanSeeds += float64(o.seeds)
	}
	n := float64(replicates)
	sum.anyRate, sum.allPower, sum.meanSeeds = sum.anyRate/n, sum.allPower/n, sum.meanSeeds/n
	return sum
}
