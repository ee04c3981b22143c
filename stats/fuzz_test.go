package stats

import (
	"encoding/binary"
	"math"
	"testing"
)

// floats decodes b as little-endian float64s, skipping NaN so the tests' contract applies.
func floats(b []byte) []float64 {
	var out []float64
	for len(b) >= 8 {
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// FuzzRankTests checks that every test accepts any finite or infinite input without panicking
// and returns p-values in [0, 1], and that the median's interval holds the median.
func FuzzRankTests(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 240, 63, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 8, 64}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		v := floats(data)
		if len(v) < 2 {
			return
		}
		k := 1 + int(split)%(len(v)-1)
		x, y := v[:k], v[k:]
		check := func(name string, p float64, err error) {
			if err == nil && !(p >= 0 && p <= 1) {
				t.Fatalf("%s(%v, %v): p = %v", name, x, y, p)
			}
		}
		for _, alt := range []Alternative{TwoSided, Greater, Less} {
			r, err := MannWhitney(x, y, alt)
			check("MannWhitney", r.PValue, err)
			if len(x) == len(y) {
				r, err = WilcoxonSignedRank(x, y, alt)
				check("WilcoxonSignedRank", r.PValue, err)
			}
		}
		// The median of -Inf and +Inf is NaN, as in R; there is no interval to check then.
		if ci, err := MedianCI(v, 0.95); err != nil || !math.IsNaN(Median(v)) && !(ci.Lo <= Median(v) && Median(v) <= ci.Hi) {
			t.Fatalf("MedianCI(%v) = %v, %v; want an interval around the median %v", v, ci, err, Median(v))
		}
		kw, err := KruskalWallis([][]float64{x, y})
		check("KruskalWallis", kw.PValue, err)
		if len(x) == len(y) {
			blocks := make([][]float64, len(x))
			for i := range x {
				blocks[i] = []float64{x[i], y[i]}
			}
			fr, err := Friedman(blocks)
			check("Friedman", fr.PValue, err)
		}
	})
}
