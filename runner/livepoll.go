package runner

import (
	"context"
	"sync"
	"time"

	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
)

// DefaultLivePoll is how often the runner reads the live points that an executor next to a
// trial (OutputStorer) stored, when a pruner needs them and Runner.LiveEvery is not set. It
// matches the executor's own interval (executor.DefaultLiveEvery): reading more often would
// mostly find nothing new.
const DefaultLivePoll = 4 * time.Second

// livePoller reads an attempt's live chunks as an executor next to the trial appends them and
// reports the new points to the core, as the runner's own feed does for the attempts whose
// files it reads: so a search prunes the trials of every backend alike.
type livePoller struct {
	stop chan struct{}
	done chan struct{}
}

// pollLive starts reading the attempt's live points every interval: one listing of the chunks
// after the last point seen, and a read of each new chunk. An adopted attempt's points are read
// from the first: the core has none of them yet.
func (a *attempt) pollLive(ctx context.Context, att *Attempt, every time.Duration) {
	r, trial, n := a.d.r, a.trial, a.n
	p := &livePoller{stop: make(chan struct{}), done: make(chan struct{})}
	var seen int64
	counts := map[string]int64{}
	var warn sync.Once
	poll := func() {
		var pts []core.MetricPoint
		up, err := r.Runs.LiveAfter(ctx, att.RunID, att.Trial.Name, n, seen, func(lp store.LivePoint) error {
			pts = appendPoints(pts, []store.LivePoint{lp}, counts)
			return nil
		})
		if err != nil {
			// The next poll asks again from the same point; one warning an attempt is enough.
			warn.Do(func() { r.Log.Warn("read live metrics for the pruner", "trial", att.Trial.Name, "err", err) })
		}
		if up > seen {
			seen = up
			a.d.send(core.MetricsReported{Trial: trial, Attempt: n, UpTo: up, Points: pts, At: time.Now()})
		}
	}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				poll()
			case <-p.stop:
				// The executor stores its last points before the trial's end is known: they
				// reach the core before the end does, as the runner's own feed's do.
				poll()
				return
			}
		}
	}()
	a.poll = p
}

// stopPoll reads the points stored since the last poll and stops polling.
func (a *attempt) stopPoll() {
	if a.poll == nil {
		return
	}
	close(a.poll.stop)
	<-a.poll.done
	a.poll = nil
}
