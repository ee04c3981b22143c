// Package simplot draws a simulation's written results as PNG charts: utilisation per
// resource over time, queue length and running pods over time, and the distribution of job
// completion times. It reads the CSV files the run wrote, so old results can be plotted again.
package simplot
