package main

import (
	"testing"

	"github.com/jikken-dev/jikken/sequential"
)

// TestErrorRate is the shortened simulation: 2,000 comparisons of three groups with the same
// distribution. The sequential design decides some pair in alpha's share of them (within three
// standard errors); testing at alpha after every batch decides one far more often.
func TestErrorRate(t *testing.T) {
	looks, _ := sequential.Looks(5, 5, 100)
	b, err := sequential.Design{Groups: 3, Looks: looks, Alpha: 0.05, Futility: 0.1}.Boundaries()
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	for i, dist := range distributions {
		seq := run(setup{bounds: b, blocks: 4, dist: dist}, n, uint64(i+11))
		if seq.anyRate < 0.035 || seq.anyRate > 0.065 {
			t.Errorf("%s: sequential decided a pair in %.3f of %d null comparisons, want 0.05 ± 0.015", dist.name, seq.anyRate, n)
		}
		nv := run(setup{bounds: naive(b), blocks: 4, dist: dist}, n, uint64(i+11))
		if nv.anyRate < 0.1 {
			t.Errorf("%s: naive repeated testing decided a pair in %.3f of null comparisons; want it well above 0.05", dist.name, nv.anyRate)
		}
	}
	pow := run(setup{bounds: b, blocks: 4, dist: distributions[0], shift: -0.5}, 500, 7)
	if pow.allPower < 0.6 {
		t.Errorf("a shift of half a standard deviation was found for both pairs in %.2f of comparisons, want at least 0.6", pow.allPower)
	}
}
