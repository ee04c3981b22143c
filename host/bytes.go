package host

import (
	"math"
	"strconv"
)

// FormatBytes writes a byte count as memory limits are written: 64MiB, 1.5GiB, 512B. It is
// the form the backends report limits in ("out of memory (limit 64MiB)").
func FormatBytes(n int64) string {
	const units = "KMGT"
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + "B"
	}
	i := min(int(math.Log2(float64(n))/10), len(units))
	v := math.Round(float64(n)/math.Exp2(float64(10*i))*100) / 100
	return strconv.FormatFloat(v, 'f', -1, 64) + units[i-1:i] + "iB"
}
