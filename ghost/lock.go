package ghost

import (
	"context"
	"fmt"
	"os"
	"time"
)

// lockDir takes an exclusive flock on the directory dir (created if missing) and returns the
// function that releases it, and whether another process held it first. The kernel drops the
// lock when the process dies, however it dies, so a killed process never leaves it behind. It
// waits for other holders until ctx ends.
func lockDir(ctx context.Context, dir string) (unlock func(), waited bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := openLock(dir)
	if err != nil {
		return nil, false, fmt.Errorf("open %s: %w", dir, err)
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		busy, err := tryLock(f)
		if err == nil && !busy {
			return func() { f.Close() }, waited, nil // closing the descriptor releases the lock
		}
		if err != nil {
			f.Close()
			return nil, false, fmt.Errorf("lock %s: %w", dir, err)
		}
		waited = true
		select {
		case <-ctx.Done():
			f.Close()
			return nil, false, fmt.Errorf("wait for another git ghost command using %s: %w", dir, ctx.Err())
		case <-time.After(wait):
		}
	}
}
