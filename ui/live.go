package ui

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

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
		s.writeJSON(w, out) // not started yet
		return
	case err != nil:
		s.fail(w, req, err)
		return
	}
	out.Running = rec.Status == store.Running || rec.Status == store.Pending
	if rec.Live != nil {
		out.Attempt = rec.Live.Attempt
	} else if k := len(rec.Attempts); k > 0 {
		out.Attempt = rec.Attempts[k-1].N
	}
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
	s.writeJSON(w, out)
}
