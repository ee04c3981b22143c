package sequential

import (
	"math"
	"math/rand/v2"
	"testing"
)

func draw(r *rand.Rand, groups, blocks int, shift []float64) Seed {
	s := make(Seed, blocks)
	for b := range s {
		s[b] = make([]float64, groups)
		for g := range s[b] {
			s[b][g] = r.NormFloat64() + shift[g]
		}
	}
	return s
}

// A clear difference is decided at an early look, in the right direction, and seeds beyond the
// stopping look change nothing.
func TestDecideStopsOnClearDifference(t *testing.T) {
	looks, _ := Looks(5, 5, 50)
	b, err := Design{Groups: 3, Looks: looks, Alpha: 0.05, Futility: 0.1}.Boundaries()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var seeds []Seed
	var dec Decision
	for len(seeds) <= 50 {
		if dec, err = b.Decide(seeds); err != nil {
			t.Fatal(err)
		}
		if dec.Stop {
			break
		}
		for len(seeds) < dec.Seeds {
			seeds = append(seeds, draw(r, 3, 4, []float64{0, 3, 6}))
		}
	}
	if !dec.Stop || dec.Seeds >= 50 {
		t.Fatalf("no early stop: %+v", dec)
	}
	for _, p := range dec.Pairs {
		if p.Verdict != ABetter {
			t.Errorf("pair %d-%d: %v (z %.2f), want a-better", p.A, p.B, p.Verdict, p.Z)
		}
	}
	more := append(seeds, draw(r, 3, 4, []float64{6, 3, 0}), draw(r, 3, 4, []float64{6, 3, 0}))
	again, err := b.Decide(more)
	if err != nil || again.Seeds != dec.Seeds || again.Pairs[0] != dec.Pairs[0] {
		t.Errorf("later seeds changed the decision: %+v, was %+v (%v)", again, dec, err)
	}
}

// Ties, failures (+Inf, NaN) and zero differences count as documented, and a decision is the
// same whatever the order of the blocks within each seed.
func TestDecideTiesAndFailures(t *testing.T) {
	b := &Bounds{Design: Design{Groups: 3, Looks: []int{2}, Alpha: 0.05}, Crit: [][]float64{{9}, {9}, {9}}, Fixed: []float64{2, 2, 2}}
	seeds := []Seed{
		{{1, 1, math.Inf(1)}, {2, 3, 2}},
		{{0, math.NaN(), math.Inf(1)}, {5, 3, 4}},
	}
	dec, err := b.Decide(seeds)
	if err != nil {
		t.Fatal(err)
	}
	// Pair (0,1): differences 0 (dropped), -1, -Inf, 2: magnitudes 1, Inf, 2 rank 1, 3, 2;
	// V = 2, mean 3, sd √(3·4·7/24) = √3.5.
	if want := (2 - 3) / math.Sqrt(3.5); math.Abs(dec.Pairs[0].Z-want) > 1e-12 {
		t.Errorf("z(0,1) = %v, want %v", dec.Pairs[0].Z, want)
	}
	// Pair (1,2): differences -Inf, 1, 0 (two failures tie), -1: magnitudes Inf, 1, 1 rank 3,
	// 1.5, 1.5; V = 1.5, mean 3, ties 6: sd √(3.5 - 6/48).
	if want := (1.5 - 3) / math.Sqrt(3.5-6.0/48); math.Abs(dec.Pairs[2].Z-want) > 1e-12 {
		t.Errorf("z(1,2) = %v, want %v", dec.Pairs[2].Z, want)
	}
	if !dec.Stop || dec.Pairs[0].Verdict != NoDifference {
		t.Errorf("at the last look every open pair is settled: %+v", dec)
	}
	swapped := []Seed{{seeds[0][1], seeds[0][0]}, {seeds[1][1], seeds[1][0]}}
	dec2, _ := b.Decide(swapped)
	for i := range dec.Pairs {
		if dec.Pairs[i] != dec2.Pairs[i] {
			t.Errorf("block order changed pair %d: %+v vs %+v", i, dec.Pairs[i], dec2.Pairs[i])
		}
	}
	if _, err := b.Decide([]Seed{{{1, 2, 3}}, {{1, 2}}}); err == nil {
		t.Error("a block with a value missing: no error")
	}
}
