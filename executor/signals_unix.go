//go:build unix

package executor

import (
	"os"
	"syscall"
)

// forwarded are the signals passed on to the command by default: the stops, and the warnings
// a trial may ask for (checkpoint.signal), which a batch system sends to the executor.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGHUP}
