//go:build !unix

package cli

import "syscall"

// detachedAttr needs nothing where there are no sessions to leave.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
