package k8sbench

import (
	"os"
	"strconv"
	"testing"
)

// envInt reads a whole number from the environment variable name, def when it is unset.
func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}

// benchTrials is the number of trials of a benchmark (JIKKEN_BENCH_TRIALS, default 1,000).
func benchTrials(b *testing.B) int { return envInt(b, "JIKKEN_BENCH_TRIALS", 1000) }
