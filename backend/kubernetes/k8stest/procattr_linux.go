package k8stest

import "syscall"

// procAttr puts a component in its own process group and kills it when the test process dies,
// so a crashed test leaves no control plane behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
