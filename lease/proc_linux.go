package lease

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// procStat is what /proc/PID/stat says of a process's family.
type procStat struct {
	ppid, pgrp, session int
	start               uint64 // clock ticks since boot
}

func stat(pid int) (procStat, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	// After the command: field 3 (state), 4 ppid, 5 pgrp, 6 session ... 22 starttime.
	f := bytes.Fields(data[i+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	var s procStat
	s.ppid, _ = strconv.Atoi(string(f[1]))
	s.pgrp, _ = strconv.Atoi(string(f[2]))
	s.session, _ = strconv.Atoi(string(f[3]))
	s.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	return s, true
}

// startTime is when process pid started (0 when unknown: no such process, or /proc hides it).
func startTime(pid int) uint64 {
	s, _ := stat(pid)
	return s.start
}
