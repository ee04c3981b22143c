// Package ghostcmd is the command line of ghost snapshots, shared by `jikken ghost` and the
// `git-ghost` binary (so `git ghost ...` works as a git subcommand). It parses git-ghost's
// arguments and flags and hands the work to package ghost.
package ghostcmd
