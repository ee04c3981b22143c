// Package gitexec runs the git binary for the ghost package: one small client that pins the
// repository, strips the GIT_* variables a calling hook or alias may have exported, and turns a
// failed command into an *Error that keeps git's stderr.
package gitexec
