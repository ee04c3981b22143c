//go:build !unix

package main

import "time"

// threadCPU is not measured where the system has no per-thread CPU clock: the CPU figures
// read 0 there.
func threadCPU() time.Duration { return 0 }
