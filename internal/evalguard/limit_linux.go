package evalguard

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// limitAddressSpace caps this process's virtual memory at what it maps now plus twice memory
// (Go reserves address space ahead of the heap), so a single huge allocation fails at once
// instead of waiting for the heap check, and the machine never swaps for it.
func limitAddressSpace(memory int64) {
	now := vmSize()
	if now <= 0 {
		return
	}
	limit := uint64(now + 2*memory)
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
}

// vmSize returns this process's virtual memory size in bytes, from /proc/self/status.
func vmSize() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
