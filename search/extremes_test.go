package search

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBestCandidate1Extremes: for one numeric param, bestCandidate picks what scoring every
// candidate in full picks on estimators made to strain its bounds: ranges from 1e-12 wide to
// 1e300, log scales, steps, every point at one edge or on three values, weights from 1e-20 to
// 1e20, repeated candidates.
func TestBestCandidate1Extremes(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	specs := []Param{
		{Name: "x", Low: 0, High: 1},
		{Name: "x", Low: 1e-300, High: 1e300, Log: true},
		{Name: "x", Low: -1e-12, High: 1e-12},
		{Name: "x", Kind: Int, Low: 0, High: 3},
		{Name: "x", Low: -1e300, High: 1e300},
		{Name: "x", Low: 0, High: 1, Step: 0.25},
	}
	for trial := range 3000 {
		p := specs[trial%len(specs)]
		g, err := compile(Space{Params: []Param{p}})
		if err != nil {
			t.Fatal(err)
		}
		dims := []*dim{&g.dims[0]}
		d := dims[0]
		pts := func(n int, mode int) ([][]float64, []float64) {
			var out [][]float64
			var w []float64
			for i := range n {
				u := r.Float64()
				switch mode {
				case 0:
					u = 0 // all at the edge
				case 1:
					u = math.Pow(u, 20)
				case 2:
					u = float64(i%3) / 2
				}
				out = append(out, []float64{d.snap(d.lo + u*(d.hi-d.lo))})
				wt := 1.0
				if r.IntN(10) == 0 {
					wt = math.Pow(10, float64(r.IntN(40)-20))
				}
				w = append(w, wt)
			}
			return out, w
		}
		var low, high parzen
		lp, lw := pts(1+r.IntN(25), r.IntN(4))
		hp, hw := pts(1+r.IntN(400), r.IntN(4))
		nb := trial%3 != 0
		pw := math.Pow(10, float64(r.IntN(10)-5))
		low.fit(dims, lp, lw, pw, nb)
		high.fit(dims, hp, hw, pw, nb)
		tp := &tpe{ncand: 1 + r.IntN(40), blend: true}
		xs := make([]float64, tp.ncand)
		for c := range xs {
			x := xs[c : c+1]
			if c > 0 && r.IntN(4) == 0 {
				x[0] = xs[r.IntN(c)]
				continue
			}
			low.sample(r, x, true)
			x[0] = d.snap(x[0])
		}
		tp.scratch.dens = make([]float64, max(low.kernels, high.kernels))
		dens := tp.scratch.dens
		full := func(c int) float64 {
			x := xs[c : c+1]
			return low.logDensity(x, dens) - high.logDensity(x, dens) + (low.logMarginals(x, dens) - high.logMarginals(x, dens))
		}
		if got, want := tp.bestCandidate(&low, &high, xs, 1), tp.first(full); got != want {
			t.Fatalf("trial %d (%+v): picked %d (%v), want %d (%v)", trial, p, got, full(got), want, full(want))
		}
	}
}
