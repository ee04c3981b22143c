package s3test

import "syscall"

// procAttr puts MinIO in its own process group and has the kernel kill it if the test binary
// dies first (a timeout, a crash), so no server outlives its test.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
