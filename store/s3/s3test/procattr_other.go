//go:build unix && !linux

package s3test

import "syscall"

// procAttr puts MinIO in its own process group.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
