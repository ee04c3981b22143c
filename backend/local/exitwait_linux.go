package local

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until process pid has exited, without holding a thread in a blocking
// wait: the process's pidfd becomes readable when it ends, and Go's network poller waits for
// that as for a socket. A thread held in waitid per running trial makes the scheduler hand
// processors back and forth and wake its monitor thousands of times a second; with hundreds
// of short trials that cost more than the trials. The caller reaps the process afterwards
// (exec.Cmd.Wait returns at once). It returns false when it could not wait this way.
func awaitExit(pid int) bool {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	exited := false
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		werr := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		exited = werr == nil && info.Signo != 0
		return exited || (werr != nil && werr != unix.EINTR)
	})
	return err == nil && exited
}
