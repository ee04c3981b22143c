package lease

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// startTime is when process pid started, in clock ticks since boot (0 when unknown).
func startTime(pid int) uint64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	// After the command: field 3 (state) ... field 22 (starttime).
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(string(f[19]), 10, 64)
	return n
}
