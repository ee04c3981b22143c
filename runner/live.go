package runner

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jikken-dev/jikken/live"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
)

// DefaultLiveEvery is how often the runner appends the new metric points of the attempts whose
// files it reads, when Runner.LiveEvery is not set.
const DefaultLiveEvery = 500 * time.Millisecond

// feedLive starts appending the attempt's metric points to the store's live chunks as the trial
// writes them, unless an executor next to the trial does it (OutputStorer) or it is turned off.
// An adopted attempt's points go on after those its earlier runner stored. When the executor
// appends them and a pruner needs them, the runner reads them from the store instead (pollLive).
func (a *attempt) feedLive(ctx context.Context, proc Process, att *Attempt) {
	r := a.d.r
	if r.LiveEvery < 0 {
		return
	}
	if s, ok := proc.(OutputStorer); ok && s.OutputsStored() {
		if r.prunes() {
			a.pollLive(ctx, att, cmp.Or(r.LiveEvery, DefaultLivePoll))
		}
		return
	}
	every := r.LiveEvery
	if every == 0 {
		every = DefaultLiveEvery
	}
	trial, n := a.trial, a.n
	var points []core.MetricPoint
	o := live.Options{Every: every, Resume: a.adopted,
		Reported: func(upTo int64) {
			a.d.send(core.MetricsReported{Trial: trial, Attempt: n, UpTo: upTo, Points: points, At: time.Now()})
			points = nil
		},
	}
	if r.prunes() {
		// A pruner judges the points themselves. One without a step has the number of points of
		// its metric before it as its step.
		counts := map[string]int64{}
		o.Appended = func(pts []store.LivePoint) { points = appendPoints(points, pts, counts) }
	}
	f, err := FeedLive(ctx, r.Runs, att, o)
	if err != nil {
		r.Log.Warn("live metrics", "trial", att.Trial.Name, "err", err)
		return
	}
	a.feed = f
}

// prunes reports whether the run's search has a pruner, which judges the live points themselves.
func (r *Runner) prunes() bool {
	return r.Search != nil && r.Search.Pruner.Name != "" && r.Search.Pruner.Name != "none"
}

// appendPoints appends live points to a curve; a point without a step has the number of points
// of its metric before it (counts) as its step.
func appendPoints(curve []core.MetricPoint, pts []store.LivePoint, counts map[string]int64) []core.MetricPoint {
	for _, p := range pts {
		step := counts[p.Name]
		if p.Step != nil {
			step = *p.Step
		}
		counts[p.Name]++
		curve = append(curve, core.MetricPoint{Metric: p.Name, Step: step, Value: p.Value})
	}
	return curve
}

// searchCurves reads, for a search with a pruner, the curves of the trials final in the journal
// (prior): the points of their last attempt, a pruned one's cut where it was pruned.
func (r *Runner) searchCurves(ctx context.Context, run string, prior map[string]*store.TrialRecord) (map[string][]core.MetricPoint, error) {
	if !r.prunes() {
		return nil, nil
	}
	out := map[string][]core.MetricPoint{}
	for name, rec := range prior {
		if _, ok := r.Search.IsTrial(name); !ok || rec.Group != r.Search.Name || len(rec.Attempts) == 0 ||
			(rec.Status != store.Succeeded && rec.Status != store.Pruned) {
			continue
		}
		var curve []core.MetricPoint
		counts := map[string]int64{}
		n := rec.Attempts[len(rec.Attempts)-1].N
		_, err := r.Runs.LiveAfter(ctx, run, name, n, 0, func(p store.LivePoint) error {
			if rec.Status != store.Pruned || int64(len(curve)) < rec.PrunedAt {
				curve = appendPoints(curve, []store.LivePoint{p}, counts)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read the curve of %s, which later trials of the search are judged against: %w", name, err)
		}
		out[name] = curve
	}
	return out, nil
}

// FeedLive starts appending the metric points of attempt a, read from its metrics.jsonl and
// its stdout as they grow, to the live chunks of runs; o's store, run, trial, attempt and sources
// are set from a.
func FeedLive(ctx context.Context, runs store.Runs, a *Attempt, o live.Options) (*live.Feeder, error) {
	o.Runs, o.Run, o.Trial, o.Attempt = runs, a.RunID, a.Trial.Name, a.N
	o.Sources = []live.Source{
		{Name: "metrics.jsonl", Path: filepath.Join(a.OutputDir, "metrics.jsonl"), Kind: live.Metrics},
		{Name: "stdout", Path: a.StdoutPath, Kind: live.Stdout},
	}
	return live.Start(ctx, o)
}

// stopLive appends the points the attempt's files hold at its end and returns the notes on the
// lines left out (and on live points that could not be stored: the final metrics.jsonl has
// them all the same).
func (a *attempt) stopLive(ctx context.Context) []string {
	a.stopPoll()
	if a.feed == nil {
		return nil
	}
	notes, err := a.feed.Stop(ctx)
	if err != nil {
		notes = append(notes, "live metrics not all stored (metrics.jsonl has them): "+err.Error())
	}
	return notes
}
