// Package execcmd is `jikken trial-exec`, the in-container executor: it runs a trial's command
// and uploads its outputs to the store (see package executor), installs the jikken binary into a
// shared volume for init containers, and checks out a run's code snapshot.
package execcmd
