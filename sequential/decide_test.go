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

// Ties, failures (+Inf, NaN) and all-tied blocks rank as documented, and a decision is the same
// whatever the order of the blocks within each seed.
func TestDecideTiesAndFailures(t *testing.T) {
	b := &Bounds{Design: Design{Groups: 3, Looks: []int{2}, Alpha: 0.05}, Crit: []float64{0.5}, Fixed: 2}
	seeds := []Seed{
		{{1, 1, math.Inf(1)}, {2, 2, 2}},
		{{0, math.NaN(), math.Inf(1)}, {5, 3, 4}},
	}
	dec, err := b.Decide(seeds)
	if err != nil {
		t.Fatal(err)
	}
	// Ranks: block 1: 1.5 1.5 3; block 2: 2 2 2 (all tied: no information); block 3: 1 2.5 2.5;
	// block 4: 3 1 2. Sums 7.5 7 9.5; variance shares (squared deviations over k-1)
	// 0.75+0+0.75+1 = 2.5.
	want := (7.5 - 7) / math.Sqrt(2*2.5)
	if math.Abs(dec.Pairs[0].Z-want) > 1e-12 {
		t.Errorf("z(0,1) = %v, want %v", dec.Pairs[0].Z, want)
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
