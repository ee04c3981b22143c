//go:build !linux

package store

import "os"

// syncFiles makes the written contents of files durable, one fsync each.
func syncFiles(files []*os.File) []error {
	errs := make([]error, len(files))
	for i, f := range files {
		errs[i] = f.Sync()
	}
	return errs
}
