// Package metrics turns a finished simulation into records: per-pod rows (CSV), a time series
// of allocation, utilisation and queue length (CSV or JSONL, downsampled for plotting), and a
// summary of job completion times, fairness, fragmentation and a determinism hash.
package metrics
