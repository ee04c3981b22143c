//go:build !unix

package search

import "time"

// threadCPU is not measured where the system has no per-thread CPU clock: the benchmark's CPU
// figures read 0 there.
func threadCPU() time.Duration { return 0 }
