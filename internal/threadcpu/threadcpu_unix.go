//go:build unix

package threadcpu

import (
	"time"

	"golang.org/x/sys/unix"
)

// Now is the CPU time the calling OS thread has used; a caller measuring an interval locks
// itself to its thread (runtime.LockOSThread) first.
func Now() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
