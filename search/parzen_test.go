package search

import (
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
