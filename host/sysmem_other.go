//go:build !darwin

package host

// sysMemory is the machine's memory where there is no /proc/meminfo: unknown here.
func sysMemory() (int64, bool) { return 0, false }
