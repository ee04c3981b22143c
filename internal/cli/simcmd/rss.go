package simcmd

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// peakRSS returns the process's peak resident set (VmHWM on Linux), or the Go runtime's
// obtained memory elsewhere as a rough stand-in.
func peakRSS() uint64 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				f := strings.Fields(rest)
				if len(f) >= 1 {
					if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
						return kb * 1024
					}
				}
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Sys
}
