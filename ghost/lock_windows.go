package ghost

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// openLock opens what lockDir locks: a file in the directory (Windows locks files, not
// directories).
func openLock(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, ".ghost-lock"), os.O_RDWR|os.O_CREATE, 0o644)
}

// tryLock takes an exclusive lock on f without waiting; busy reports that another process
// holds it.
func tryLock(f *os.File) (busy bool, err error) {
	var ol windows.Overlapped
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return true, nil
	}
	return false, err
}
