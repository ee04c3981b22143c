//go:build !linux

package local

// awaitExit is not available here: the caller waits in the usual way.
func awaitExit(int) bool { return false }
