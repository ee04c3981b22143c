// Package core decides what a run does next. It is the runner's state machine, in the manner of
// etcd's raft: it holds the plan and every trial's state, takes one event at a time (an attempt
// started, became healthy or ended, a timer fired, a stop was asked for, a record reached the
// store) and answers with the actions that follow (start or stop an attempt, watch its health,
// persist a record, set a timer, report).
//
// The core has no goroutines, no clock and no I/O: time arrives inside events, and every
// decision is a function of the events so far, in plan order, so a run can be replayed and its
// interleavings enumerated by tests. The runner package drives it with real processes, timers
// and a store; resuming a run is building a core from the run's journal (each trial's last
// record), the same path as a new run.
package core
