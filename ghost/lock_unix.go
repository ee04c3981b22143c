//go:build unix

package ghost

import (
	"errors"
	"os"
	"syscall"
)

// openLock opens what lockDir locks: the directory itself.
func openLock(dir string) (*os.File, error) { return os.Open(dir) }

// tryLock takes an exclusive flock on f without waiting; busy reports that another process
// holds it.
func tryLock(f *os.File) (busy bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
		return true, nil
	}
	return false, err
}
