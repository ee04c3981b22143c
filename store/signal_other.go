//go:build !unix

package store

import "os"

// signalZero reports a process as alive once os.FindProcess found it: on Windows that opens a
// handle, which fails for a process that has exited, and there is no signal 0 to send.
func signalZero(*os.Process) error { return nil }
