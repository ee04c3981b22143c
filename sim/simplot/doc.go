// Package simplot draws a simulation's results as PNG charts: utilisation per resource over
// time, queue length and running pods over time, distributions of job completion time, wait
// and slowdown (overall or one line per user), each user's share of the GPUs over time, and
// the comparison figures of several runs (one line per run). It reads the CSV files a run
// wrote, so old results can be plotted again.
package simplot
