package search

import (
	"math"
	"math/rand/v2"
)

// haltonSampler is a quasi-random sampler: trial n gets the n-th point of a Halton sequence
// (dimension j in base the j-th prime) whose digits are scrambled by random permutations, one
// per dimension and digit position, drawn from the seed. Scrambling breaks the correlation of
// the plain sequence between dimensions of large bases and makes different seeds give
// different, equally well spread, designs. It ignores the history.
type haltonSampler struct{}

func newHalton(*options) (Sampler, error) { return haltonSampler{}, nil }

func (haltonSampler) Suggest(r Request) (Params, error) {
	g, err := compile(r.Space)
	if err != nil {
		return nil, err
	}
	return haltonParams(g, r.Seed, r.Number), nil
}

// haltonParams is the Number-th point of the scrambled sequence, mapped onto the space.
func haltonParams(g *geometry, seed uint64, number int) Params {
	u := halton(len(g.dims), seed, uint64(number))
	out := make(Params, len(g.dims))
	for _, i := range g.order {
		if g.active(i, out) {
			out[g.dims[i].p.Name] = g.dims[i].fromUnit(u[i])
		}
	}
	return out
}

// halton returns point n of the dims-dimensional scrambled Halton sequence of seed, in [0, 1).
func halton(dims int, seed, n uint64) []float64 {
	primes := firstPrimes(dims)
	r := rand.New(rand.NewPCG(seed^streamHalton, streamHalton))
	u := make([]float64, dims)
	for j, b := range primes {
		// Enough digits that the last one weighs less than 2^-53.
		digits := int(math.Ceil(53 / math.Log2(float64(b))))
		perm := make([]uint64, b)
		x := 0.0
		scale := 1.0 / float64(b)
		m := n
		for range digits {
			for i := range perm {
				perm[i] = uint64(i)
			}
			r.Shuffle(len(perm), func(a, c int) { perm[a], perm[c] = perm[c], perm[a] })
			x += float64(perm[m%b]) * scale
			m /= b
			scale /= float64(b)
		}
		u[j] = min(x, math.Nextafter(1, 0))
	}
	return u
}

// firstPrimes returns the first n primes.
func firstPrimes(n int) []uint64 {
	ps := make([]uint64, 0, n)
	for c := uint64(2); len(ps) < n; c++ {
		prime := true
		for _, p := range ps {
			if p*p > c {
				break
			}
			if c%p == 0 {
				prime = false
				break
			}
		}
		if prime {
			ps = append(ps, c)
		}
	}
	return ps
}
