package store

import (
	"os"
	"runtime"
	"syscall"
)

// rename moves a file over newpath. Where rename(2) already refuses to replace a directory
// with a file (Linux: EISDIR), the system call is used directly: os.Rename first stats the
// new path to refuse that itself, one more system call for every object stored.
func rename(oldpath, newpath string) error {
	if runtime.GOOS == "linux" {
		if err := syscall.Rename(oldpath, newpath); err != nil {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		return nil
	}
	return os.Rename(oldpath, newpath)
}
