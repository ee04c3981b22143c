package host

import "golang.org/x/sys/unix"

// sysMemory is the machine's memory where there is no /proc/meminfo.
func sysMemory() (int64, bool) {
	n, err := unix.SysctlUint64("hw.memsize")
	return int64(n), err == nil && n > 0
}
