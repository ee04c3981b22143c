// Package executor is the trial side of a container backend: it runs one trial's command inside
// its pod or container, tees the command's output to log files, and uploads the trial's outputs
// (metrics, result, artifacts, logs) straight to the run's store, so results come back from any
// node with no shared volume. The `jikken trial-exec` command is a thin wrapper around Run.
package executor
