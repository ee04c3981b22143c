// Package stats holds the rank-based tests, post-hoc procedures, effect sizes and descriptive
// statistics jikken uses to compare algorithms; every function is pure (no I/O, no global state)
// and follows R's conventions so its numbers can be checked against R.
package stats
