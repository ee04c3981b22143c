// Package live feeds the store's live metrics: it reads the metric lines a running trial appends
// (metrics.jsonl, `::metric` lines of stdout) as they are written and appends them to the
// attempt's live chunks in batches, so readers see a curve grow while the trial runs. The runner
// runs a Feeder for attempts whose files it can read; the executor runs one next to the trial on
// a cluster node.
package live
