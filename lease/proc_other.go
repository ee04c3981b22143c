//go:build !linux

package lease

// Without /proc a process is named by its pid alone, and its family is unknown.
func startTime(int) uint64 { return 0 }

type procStat struct{ ppid, pgrp, session int }

func stat(int) (procStat, bool) { return procStat{}, false }
