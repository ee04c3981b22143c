package report

import (
	"math/rand/v2"
	"testing"
)

// 3 groups x 30 trials, each logging best at about 1,500 irregular steps up to 100,000 (best
// logged when it improves, early stops): a grid of ~100,000 steps in all.
func BenchmarkBuildCurves(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	groups := make([][]Series, 3)
	for g := range groups {
		for range 30 {
			var s Series
			x, v := 0.0, 100.0
			end := 50_000 + rng.Float64()*50_000
			for x < end {
				x += float64(1 + rng.IntN(100))
				v *= 0.999
				s.X, s.Values = append(s.X, x), append(s.Values, v)
			}
			groups[g] = append(groups[g], s)
		}
	}
	names := []string{"a", "b", "c"}
	for _, grid := range []struct {
		name   string
		points int
	}{{"union", 0}, {"grid500", 500}} {
		b.Run(grid.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := BuildCurves(names, groups, grid.points); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
