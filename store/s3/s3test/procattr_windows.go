package s3test

import "syscall"

// procAttr sets nothing on Windows, where the tests that start MinIO do not run.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
