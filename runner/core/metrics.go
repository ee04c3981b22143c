package core

import "time"

// MetricsReported reports that the live metric points of an attempt are in the store up to
// number UpTo (the driver's metric feeder appended them). The core records the latest for each
// trial's current attempt; nothing decides on it yet.
type MetricsReported struct {
	Trial, Attempt int
	UpTo           int64
	// Points are the new points themselves, for a planner that prunes (Pruning); the driver
	// sends them only then.
	Points []MetricPoint
	At     time.Time
}

func (e MetricsReported) time() time.Time { return e.At }

// LiveMetrics is how far a trial's live points are known to be stored: those of attempt
// Attempt, numbered 1 to UpTo (0: none yet).
type LiveMetrics struct {
	Attempt int
	UpTo    int64
}

// metricsReported records e when it is about the trial's current attempt and goes further than
// what was reported: reports of an attempt that was followed by another, or that arrive out of
// order, or of no point (UpTo below 1), change nothing.
func (c *Core) metricsReported(e MetricsReported) {
	if e.Trial < 0 || e.Trial >= len(c.ts) || c.ts[e.Trial].attempt != e.Attempt || e.Attempt < 1 || e.UpTo < 1 {
		return
	}
	if c.live == nil {
		c.live = make([]LiveMetrics, len(c.ts))
	}
	if l := &c.live[e.Trial]; l.Attempt != e.Attempt || e.UpTo > l.UpTo {
		*l = LiveMetrics{Attempt: e.Attempt, UpTo: e.UpTo}
	}
}

// Metrics returns how far trial i's live points are stored, for its current (or last) attempt.
func (c *Core) Metrics(i int) LiveMetrics {
	n := c.ts[i].attempt
	if c.live == nil || c.live[i].Attempt != n {
		return LiveMetrics{Attempt: n}
	}
	return c.live[i]
}
