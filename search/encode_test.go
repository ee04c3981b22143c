package search

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSnap: snap gives exactly coord(value(t)), the round trip TPE scores a candidate at,
// for every kind of numeric param and coordinates inside and outside the range.
func TestSnap(t *testing.T) {
	g, err := compile(NewSpace([]Param{
		{Name: "f", Low: -5, High: 5},
		{Name: "fs", Low: -1, High: 2, Step: 0.3},
		{Name: "fl", Low: 1e-4, High: 10, Log: true},
		{Name: "ils", Kind: Int, Low: 1, High: 64, Log: true, Step: 1},
		{Name: "i", Kind: Int, Low: -3, High: 9},
		{Name: "is", Kind: Int, Low: 0, High: 100, Step: 7},
		{Name: "il", Kind: Int, Low: 1, High: 1000, Log: true},
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range g.dims {
		d := &g.dims[i]
		for range 2000 {
			x := d.lo + (r.Float64()*1.4-0.2)*(d.hi-d.lo)
			want, ok := d.coord(d.value(x))
			if !ok {
				want = 0
			}
			if got := d.snap(x); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%s: snap(%v) = %v, coord(value) = %v", d.p.Name, x, got, want)
			}
		}
	}
}
