//go:build !linux

package k8stest

import "syscall"

// procAttr sets nothing where Pdeathsig does not exist: the control plane is built and run on
// Linux only (Make's test-k8s); elsewhere this package only has to compile.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
