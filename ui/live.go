package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/jikken-dev/jikken/store"
)

// LivePoints answers /api/runs/RUN/trials/TRIAL/live?after=N[&attempt=A]: the points of the
// trial's curve numbered after N, from the store's live metrics, so a page draws a curve that
// grows while the trial runs by asking for what it has not seen.
type LivePoints struct {
	// Attempt is the attempt whose points these are: the running one, else the last; a page
	// that drew another attempt's points starts again from these.
	Attempt int               `json:"attempt"`
	Points  []store.LivePoint `json:"points"`
	// After is the number of the last point given: the page's next ?after=.
	After int64 `json:"after"`
	// More is set when the answer stopped at maxLivePoints: ask again at once.
	More bool `json:"more,omitempty"`
	// Running is set while the trial runs: more points may come.
	Running bool `json:"running"`
}

// maxLivePoints bounds one answer, so a long curve reaches a page in parts.
const maxLivePoints = 20_000

var errEnough = errors.New("enough points")

// livePoints serves LivePoints.
func (s *Server) livePoints(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	run, trial := req.PathValue("run"), req.PathValue("trial")
	for _, c := range [][2]string{{"run", run}, {"trial", trial}} {
		if err := segment(c[0], c[1]); err != nil {
			s.fail(w, req, err)
			return
		}
	}
	if ok, _, _, err := s.r.plannedTrial(ctx, run, trial); err != nil || !ok {
		s.fail(w, req, cmpErr(err, fmt.Errorf("run %s has no trial %q: %w", run, trial, store.ErrNotFound)))
		return
	}
	q := req.URL.Query()
	after, _ := strconv.ParseInt(q.Get("after"), 10, 64)
	asked, _ := strconv.Atoi(q.Get("attempt"))
	out := LivePoints{Points: []store.LivePoint{}}
	rec, err := s.r.runs.Trial(ctx, run, trial)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.writeJSON(w, req, out) // not started yet
		return
	case err != nil:
		s.fail(w, req, err)
		return
	}
	out.Attempt, out.Running = liveAttempt(rec)
	if out.Attempt != asked {
		after = 0
	}
	out.After, err = s.r.runs.LiveAfter(ctx, run, trial, out.Attempt, max(after, 0), func(p store.LivePoint) error {
		if len(out.Points) == maxLivePoints {
			out.More = true
			return errEnough
		}
		out.Points = append(out.Points, p)
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		s.fail(w, req, err)
		return
	}
	s.writeJSON(w, req, out)
}

// liveAttempt is the attempt whose points make a trial's curve (the running one, else the last)
// and whether the trial still runs, so that more points may come.
func liveAttempt(rec *store.TrialRecord) (int, bool) {
	running := rec.Status == store.Running || rec.Status == store.Pending
	if rec.Live != nil {
		return rec.Live.Attempt, running
	}
	if k := len(rec.Attempts); k > 0 {
		return rec.Attempts[k-1].N, running
	}
	return 0, running
}

// LiveCursor is where a run page stands on one trial's curve: the attempt it draws, the number
// of the last point it has and the metric it draws (the first the attempt logged).
type LiveCursor struct {
	Attempt int    `json:"attempt"`
	After   int64  `json:"after"`
	Metric  string `json:"metric"`
}

// TrialLive is one trial's part of a RunLive answer: the points of its primary metric after
// the page's cursor, and the cursor to send next.
type TrialLive struct {
	Trial string `json:"trial"`
	LiveCursor
	Points  []store.LivePoint `json:"points"`
	Running bool              `json:"running"`
	// More is set when the answer stopped before this trial's last point: ask again at once.
	More bool `json:"more,omitempty"`
}

// RunLive answers /api/runs/RUN/live?after={"TRIAL":{"attempt":A,"after":N,"metric":M},...}:
// one request a poll for every trial a run page follows (those it sees running), however many
// the run has. Each trial's curve is its primary metric, so that one chart holds a line a trial.
type RunLive struct {
	Trials []TrialLive `json:"trials"`
}

// runLive serves RunLive. It reads the records of the trials asked about only, and at most
// maxLivePoints points in all, so a page of a run of thousands of trials costs what its
// running trials cost.
func (s *Server) runLive(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	run := req.PathValue("run")
	if err := segment("run", run); err != nil {
		s.fail(w, req, err)
		return
	}
	if _, err := s.r.manifest(ctx, run); err != nil {
		s.fail(w, req, err)
		return
	}
	cursors := map[string]LiveCursor{}
	if q := req.URL.Query().Get("after"); q != "" {
		if err := json.Unmarshal([]byte(q), &cursors); err != nil {
			s.fail(w, req, fmt.Errorf("after: not an object of cursors (%v): %w", err, errBadRequest))
			return
		}
	}
	names := make([]string, 0, len(cursors))
	for name := range cursors {
		if err := segment("trial", name); err != nil {
			s.fail(w, req, err)
			return
		}
		names = append(names, name)
	}
	sort.Strings(names)
	trials := make([]TrialLive, len(names))
	started := make([]bool, len(names))
	var budget atomic.Int64
	err := inParallel(len(names), func(i int) error {
		var err error
		trials[i], err = s.trialLive(ctx, run, names[i], cursors[names[i]], &budget)
		if errors.Is(err, store.ErrNotFound) {
			return nil // not started (or not in the run): nothing to draw yet
		}
		started[i] = err == nil
		return err
	})
	if err != nil {
		s.fail(w, req, err)
		return
	}
	out := RunLive{Trials: []TrialLive{}}
	for i, t := range trials {
		if started[i] {
			out.Trials = append(out.Trials, t)
		}
	}
	s.writeJSON(w, req, out)
}

// trialLive reads one trial's points after c, taking them from the answer's budget.
func (s *Server) trialLive(ctx context.Context, run, trial string, c LiveCursor, budget *atomic.Int64) (TrialLive, error) {
	t := TrialLive{Trial: trial, Points: []store.LivePoint{}}
	rec, err := s.r.runs.Trial(ctx, run, trial)
	if err != nil {
		return t, err
	}
	t.Attempt, t.Running = liveAttempt(rec)
	if t.Attempt != c.Attempt || c.Metric == "" {
		c = LiveCursor{Attempt: t.Attempt}
	}
	t.Metric = c.Metric
	t.After, err = s.r.runs.LiveAfter(ctx, run, trial, t.Attempt, max(c.After, 0), func(p store.LivePoint) error {
		if budget.Add(1) > maxLivePoints {
			t.More = true
			return errEnough
		}
		if t.Metric == "" {
			t.Metric = p.Name // the attempt's first point: its primary metric
		}
		if p.Name == t.Metric {
			t.Points = append(t.Points, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return t, err
	}
	return t, nil
}
