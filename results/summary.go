package results

import (
	"context"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/jikken-dev/jikken/store"
)

// summaryReads is how many trials Summarize reads at once: enough to hide an S3 request's
// latency, few enough to leave the store's connection pool to a run's other work.
const summaryReads = 32

// Summarize reads what each trial of run ended with (its record and its final metrics, as Load
// reads them) into the summary the runner stores when the run ends (store.Summary), written for
// the state that ends it at finished.
func Summarize(ctx context.Context, runs store.Runs, run string, finished time.Time) (*store.Summary, error) {
	recs, err := runs.Trials(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("summary of %s: %w", run, err)
	}
	var trials []store.SummaryTrial
	for _, rec := range recs {
		if rec.Service {
			continue // as the notebook reader leaves such records out of a plan it cannot read
		}
		trials = append(trials, store.SummaryTrial{Name: rec.Name, Index: rec.Index, Group: rec.Group, Status: rec.Status,
			Reason: reasonOf(rec), Params: rec.Params, Seed: rec.Seed})
	}
	sort.Slice(trials, func(i, j int) bool {
		if trials[i].Index != trials[j].Index {
			return trials[i].Index < trials[j].Index
		}
		return trials[i].Name < trials[j].Name
	})
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(summaryReads)
	for i := range trials {
		g.Go(func() error {
			m, err := finalMetrics(gctx, runs.Blob, run, trials[i].Name)
			if err != nil {
				return fmt.Errorf("summary of %s: trial %s: %w", run, trials[i].Name, err)
			}
			trials[i].Metrics = m
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &store.Summary{Finished: finished, Trials: trials}, nil
}

// reasonOf is the reason a summary keeps for a trial: none for one that succeeded, whose
// record's reason (if any) is about an attempt, not its end.
func reasonOf(rec *store.TrialRecord) string {
	if rec.Status == store.Succeeded {
		return ""
	}
	return rec.Reason
}
