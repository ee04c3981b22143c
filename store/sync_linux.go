package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFiles makes the written contents of files durable. One file is synced by itself; a
// group with one syncfs of their file system, which costs about as much as one fsync.
func syncFiles(files []*os.File) []error {
	errs := make([]error, len(files))
	switch len(files) {
	case 0:
	case 1:
		errs[0] = files[0].Sync()
	default:
		if err := unix.Syncfs(int(files[0].Fd())); err != nil {
			for i := range errs {
				errs[i] = err
			}
		}
	}
	return errs
}
