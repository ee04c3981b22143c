//go:build !unix

package executor

import (
	"os"
	"syscall"
)

// forwarded are the signals passed on to the command by default.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT}
