// Command reader-bench ends a benchmark run as the runner ends a real one: it writes the run's
// summary (results.Summarize, store.Runs.WriteSummary) and then the state that names it, and
// prints how long that took. bench/reader/bench.py calls it on the store it writes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "reader-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("store", "", "folder store holding the run")
	id := flag.String("run", "", "run to end")
	flag.Parse()
	if *dir == "" || *id == "" {
		return fmt.Errorf("usage: reader-bench -store DIR -run RUN")
	}
	ctx := context.Background()
	blob, err := store.OpenFolder(*dir)
	if err != nil {
		return err
	}
	runs := store.Runs{Blob: blob}
	start := time.Now()
	end := start.UTC()
	s, err := results.Summarize(ctx, runs, *id, end)
	if err != nil {
		return err
	}
	if err := runs.WriteSummary(ctx, *id, s); err != nil {
		return err
	}
	state := &store.RunState{Status: store.Succeeded, Started: end.Add(-time.Hour), Finished: &end}
	if err := runs.WriteState(ctx, *id, state); err != nil {
		return err
	}
	fmt.Printf("summary of %d trials written in %.2f s\n", len(s.Trials), time.Since(start).Seconds())
	return nil
}
