// Package docker runs trials as Docker containers through the Engine API: one labelled container
// per attempt, its params copied in and its output folder copied out through the engine (so a
// remote engine works), its logs streamed into the attempt's files, its exit code (and an
// out-of-memory kill) reported to the runner.
package docker
