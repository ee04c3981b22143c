package stats

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Interval is a confidence interval.
type Interval struct {
	Lo, Hi float64
}

// BootstrapCI returns the percentile bootstrap confidence interval at level (e.g. 0.95) of
// statistic stat over resamples of x drawn with replacement. The generator is a PCG seeded with
// seed, so the same inputs give the same interval on every machine. stat is handed the same
// buffer for every resample: it may reorder it but must not keep it.
func BootstrapCI(x []float64, stat func([]float64) float64, level float64, resamples int, seed uint64) (Interval, error) {
	if err := checkSample("sample", x); err != nil {
		return Interval{}, fmt.Errorf("bootstrap: %w", err)
	}
	if level <= 0 || level >= 1 {
		return Interval{}, fmt.Errorf("bootstrap: level %v is outside (0, 1); use e.g. 0.95", level)
	}
	if resamples < 1 {
		return Interval{}, fmt.Errorf("bootstrap: %d resamples; use at least 1000", resamples)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6a696b6b656e)) // stream constant: "jikken"
	buf := make([]float64, len(x))
	est := make([]float64, resamples)
	for b := range est {
		for i := range buf {
			buf[i] = x[rng.IntN(len(x))]
		}
		est[b] = stat(buf)
	}
	slices.Sort(est)
	tail := (1 - level) / 2
	return Interval{Lo: quantileSorted(est, tail), Hi: quantileSorted(est, 1-tail)}, nil
}
