// Package threadcpu reads the CPU time of the calling OS thread, so that a latency benchmark
// can tell the time a computation took from the time the scheduler kept it waiting.
package threadcpu
