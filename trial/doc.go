// Package trial describes one unit of work of a run: the command a trial runs, what it asks
// for, what it waits for and how it is retried, restarted and checked. It is plain data with no
// I/O, so that the runner's core, the store and the experiment parser can share it; package
// experiment builds trials from an experiment file and names these types again for its callers.
package trial
