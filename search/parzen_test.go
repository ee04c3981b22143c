package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortCentres: the inline quicksort gives slices.SortFunc's order on random, tied,
// sorted, reversed and organ-pipe inputs of many sizes.
func TestSortCentres(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 5, 12, 13, 40, 257, 1000, 5000} {
		shapes := map[string]func(i int) float64{
			"random":    func(int) float64 { return r.NormFloat64() },
			"few":       func(int) float64 { return float64(r.IntN(3)) },
			"equal":     func(int) float64 { return 1 },
			"sorted":    func(i int) float64 { return float64(i) },
			"reversed":  func(i int) float64 { return float64(-i) },
			"organpipe": func(i int) float64 { return float64(min(i, n-i)) },
			"zeros":     func(i int) float64 { return []float64{0, negZero}[i%2] },
		}
		for name, f := range shapes {
			s := make([]centre, n)
			for i := range s {
				s[i] = centre{f(i), i}
			}
			want := slices.Clone(s)
			slices.SortFunc(want, compareCentres)
			sortCentres(s)
			if !slices.Equal(s, want) {
				t.Fatalf("%s, %d centres: sortCentres differs from slices.SortFunc", name, n)
			}
		}
	}
}

var negZero = func() float64 { z := 0.0; return -z }()

// TestBucketCentres: sorting by buckets gives slices.SortFunc's order too.
func TestBucketCentres(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var sc bucketScratch
	for _, n := range []int{63, 64, 65, 257, 1000, 5000} {
		for name, f := range map[string]func(i int) float64{
			"random":  func(int) float64 { return r.Float64()*10 - 5 },
			"skewed":  func(int) float64 { return math.Pow(r.Float64(), 20) },
			"few":     func(int) float64 { return float64(r.IntN(3)) },
			"equal":   func(int) float64 { return 2 },
			"extreme": func(i int) float64 { return []float64{-math.MaxFloat64, math.MaxFloat64, 0}[i%3] },
			"zeros":   func(i int) float64 { return []float64{0, negZero, 1}[i%3] },
		} {
			s := make([]centre, n)
			for i := range s {
				s[i] = centre{f(i), i}
			}
			want := slices.Clone(s)
			slices.SortFunc(want, compareCentres)
			bucketCentres(s, &sc)
			if !slices.Equal(s, want) {
				t.Fatalf("%s, %d centres: bucketCentres differs from slices.SortFunc", name, n)
			}
		}
	}
}

// TestBestCandidate: the bounded search picks the candidate that scoring every one in full
// picks, ties (repeated candidates) included, marginalsBounds bounds logMarginals, and
// logDensity's shortcuts change nothing, on random spaces (numeric, discrete, categorical) and groups of many sizes.
func TestBestCandidate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var low, high parzen
	one := 0 // candidates of one numeric dim
	defer func() {
		if one < 500 {
			t.Errorf("%d candidates of one numeric dim, want 500 at least", one)
		}
	}()
	for trial := range 1000 {
		var ps []Param
		nparams := 1 + r.IntN(8)
		if trial%100 == 0 {
			nparams = 150 // the bounds' products need more than one log
		}
		for i := range nparams {
			p := Param{Name: fmt.Sprintf("p%03d", i), Low: -5, High: 5}
			switch r.IntN(4) {
			case 0:
				p.Kind, p.Low, p.High = Int, 0, float64(1+r.IntN(20))
			case 1:
				p = Param{Name: p.Name, Kind: Categorical, Choices: []any{"x", "y", "z"}[:2+r.IntN(2)]}
			case 2:
				p.Low, p.High, p.Log = 1e-3, 10, true
			}
			ps = append(ps, p)
		}
		g, err := compile(Space{Params: ps})
		if err != nil {
			t.Fatal(err)
		}
		dims := make([]*dim, len(g.dims))
		for i := range g.dims {
			dims[i] = &g.dims[i]
		}
		// Points around a centre (the good group) or anywhere (the others).
		points := func(n int, spread float64) ([][]float64, []float64) {
			var pts [][]float64
			var w []float64
			for range n {
				x := make([]float64, len(dims))
				for j, d := range dims {
					if d.p.Kind == Categorical {
						x[j] = float64(r.IntN(d.n))
						continue
					}
					u := min(max(0.5+spread*(r.Float64()-0.5), 0), 1)
					x[j] = d.snap(d.lo + u*(d.hi-d.lo))
				}
				pts, w = append(pts, x), append(w, 0.1+r.Float64())
			}
			return pts, w
		}
		lowPts, lowW := points(1+r.IntN(30), 0.3)
		highPts, highW := points(1+r.IntN(300), 1)
		neighbours := trial%5 != 0
		low.fit(dims, lowPts, lowW, 1, neighbours)
		high.fit(dims, highPts, highW, 1, neighbours)
		tp := &tpe{ncand: 1 + r.IntN(40), blend: true}
		nd := len(dims)
		xs := make([]float64, tp.ncand*nd)
		for c := range tp.ncand {
			x := xs[c*nd : (c+1)*nd]
			if c > 0 && r.IntN(3) == 0 { // a repeat of an earlier candidate (a tie), or nearly
				copy(x, xs[r.IntN(c)*nd:])
				if j := r.IntN(nd); r.IntN(2) == 0 && dims[j].p.Kind != Categorical {
					x[j] = min(x[j]*(1+1e-12*(r.Float64()-0.5)), dims[j].hi)
				}
				continue
			}
			low.sample(r, x, true)
			for j, d := range dims {
				if d.p.Kind != Categorical {
					x[j] = d.snap(x[j])
				}
			}
		}
		tp.scratch.dens = make([]float64, max(low.kernels, high.kernels))
		dens := tp.scratch.dens
		full := func(c int) float64 {
			x := xs[c*nd : (c+1)*nd]
			return low.logDensity(x, dens) - high.logDensity(x, dens) + (low.logMarginals(x, dens) - high.logMarginals(x, dens))
		}
		for c := range tp.ncand {
			x := xs[c*nd : (c+1)*nd]
			for _, z := range []*parzen{&low, &high} {
				m := z.logMarginals(x, dens)
				lo, hi := z.marginalsBounds(x, dens, 0)
				quick, _ := z.marginalsBounds(x, dens, 1+r.IntN(10))
				if !(lo <= m && m <= hi && quick <= m) || hi-lo > 1e-6*float64(nd) {
					t.Fatalf("trial %d, candidate %d: logMarginals %v, bounds %v and %v, quick %v", trial, c, m, lo, hi, quick)
				}
				if got, want := z.logDensity(x, dens), plainLogDensity(z, x); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("trial %d, candidate %d: logDensity %v, every term computed %v", trial, c, got, want)
				}
				if len(z.num) == 1 && nd == 1 {
					one++
					j, m := z.densities1(x[0], make([]float64, z.kernels), make([]float64, z.kernels))
					if wj, wm := z.logDensity(x, dens), z.logMarginals(x, dens); math.Float64bits(j) != math.Float64bits(wj) || math.Float64bits(m) != math.Float64bits(wm) {
						t.Fatalf("trial %d, candidate %d: densities1 %v %v, logDensity and logMarginals %v %v", trial, c, j, m, wj, wm)
					}
					if q := z.nearLog1(x[0], 1+r.IntN(20)); !(q <= min(j, m)+1e-12*(1+math.Abs(q))) {
						t.Fatalf("trial %d, candidate %d: nearLog1 %v above logDensity %v or logMarginals %v", trial, c, q, j, m)
					}
					checkBounds1(t, z, x[0], j, m)
				}
			}
		}
		if got, want := tp.bestCandidate(&low, &high, xs, nd), tp.first(full); got != want {
			t.Fatalf("trial %d: bestCandidate picked %d (score %v), scoring all picks %d (score %v)", trial, got, full(got), want, full(want))
		}
	}
}

// checkBounds1 fails the test unless densities1Bounds at x brackets j+m (densities1's values)
// closely: within 1e-7 of its size and the log of the kernels' number.
func checkBounds1(t *testing.T, z *parzen, x, j, m float64) {
	t.Helper()
	lo, hi, ok := z.densities1Bounds(x, make([]float64, z.kernels))
	if !ok || !(lo <= j+m && j+m <= hi) || hi-lo > 1e-7*(10+math.Abs(j)+math.Abs(m)+math.Log(float64(z.kernels))) {
		t.Fatalf("x = %v: densities1Bounds [%v, %v] (ok %v), densities1's sum %v", x, lo, hi, ok, j+m)
	}
}

// plainLogDensity is logDensity with every kernel's every factor computed, in kernel order.
func plainLogDensity(z *parzen, x []float64) float64 {
	terms := make([]float64, z.kernels)
	nn := len(z.num)
	best := math.Inf(-1)
	for k := range terms {
		s := z.konst[k]
		for j, pos := range z.num {
			t := (x[pos] - z.mu[k*nn+j]) * z.invSigma[k*nn+j]
			s -= 0.5 * t * t
		}
		for j, pos := range z.cat {
			s += z.logp[k*z.catStride+z.catOff[j]+int(x[pos])]
		}
		terms[k] = s
		best = max(best, s)
	}
	sum := 0.0
	for _, s := range terms {
		if s-best > -50 {
			sum += math.Exp(s - best)
		}
	}
	return best + math.Log(sum)
}

// TestExpPoly: expPoly is below math.Exp, by at most 4e-11 of it (and rounding).
func TestExpPoly(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 200000 {
		z := -r.Float64() * 60
		switch {
		case i < 2000:
			z = -float64(i) * math.Ln2 / 256 // near the odd multiples of ln(2)/128, where w is largest
		case i%10 == 0:
			z = -r.Float64() * 700
		}
		if e, p := math.Exp(z), expPoly(z); !(p <= e*(1+1e-13) && p >= e*(1-4e-11)) {
			t.Fatalf("e^%v = %v, expPoly %v", z, e, p)
		}
	}
}

// TestDensities1FarBest: densities1 equals logDensity and logMarginals when the best term of
// the mixture is a kernel too far from x for the marginal to count it (a heavy kernel and a
// light prior), so the two sums have different bests.
func TestDensities1FarBest(t *testing.T) {
	g, err := compile(Space{Params: []Param{{Name: "x", Low: 0, High: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	dims := []*dim{&g.dims[0]}
	var pts [][]float64
	var w []float64
	for i := range 100 {
		pts, w = append(pts, []float64{float64(i) * 0.005}), append(w, 1)
	}
	w[99] = 1e9
	var z parzen
	z.fit(dims, pts, w, 1e-9, true)
	sk, ex := make([]float64, z.kernels), make([]float64, z.kernels)
	far := 0
	for _, reach := range []float64{7.9, 8.01, 8.2, 9, 12} {
		x := 0.495 + reach*z.widest[0]
		j, m := z.densities1(x, sk, ex)
		wj, wm := z.logDensity([]float64{x}, sk), z.logMarginals([]float64{x}, sk)
		if math.Float64bits(j) != math.Float64bits(wj) || math.Float64bits(m) != math.Float64bits(wm) {
			t.Errorf("x = %v: densities1 %v %v, logDensity and logMarginals %v %v", x, j, m, wj, wm)
		}
		checkBounds1(t, &z, x, j, m)
		if m < wj-1 {
			far++ // the heavy kernel's term, left out of the marginal, was the best
		}
	}
	if far == 0 {
		t.Fatal("no x had its best term out of the marginal's reach: the test tests nothing")
	}
}

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
