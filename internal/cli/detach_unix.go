//go:build unix

package cli

import "syscall"

// detachedAttr starts the background runner in a new session, so closing the terminal (SIGHUP
// to its session) does not stop it.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
