package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortedKeysOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 5, 1023, 1024, 5000} {
		x := make([]float64, n)
		for i := range x {
			switch rng.IntN(6) {
			case 0:
				x[i] = math.Inf(1 - 2*rng.IntN(2))
			case 1:
				x[i] = math.Copysign(0, float64(1-2*rng.IntN(2)))
			case 2:
				x[i] = float64(rng.IntN(5)) // ties
			default:
				x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			}
		}
		keys := sortedKeys(x)
		want := slices.Clone(x)
		slices.Sort(want)
		for i := range keys {
			if keys[i] != floatKey(want[i]) {
				t.Fatalf("n=%d: key %d does not match the sorted value %v", n, i, want[i])
			}
			if i > 0 && (keys[i] == keys[i-1]) != (want[i] == want[i-1]) {
				t.Fatalf("n=%d: tie at %d disagrees with float equality (%v, %v)", n, i, want[i-1], want[i])
			}
		}
	}
}
