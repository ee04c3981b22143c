package submitter

import (
	"fmt"

	"github.com/jikken-dev/jikken/sim"
)

// Feedback is a closed-loop submitter: every Interval it looks at the cluster and, while fewer
// than MaxPending pods wait, submits jobs from Source until the queue is topped up, so the
// offered load follows the cluster's capacity instead of a fixed rate.
type Feedback struct {
	Interval   sim.Time
	MaxPending int
	Source     *Process
	buf        []Job
	done       bool
}

// NewFeedback checks the settings.
func NewFeedback(interval sim.Time, maxPending int, src *Process) (*Feedback, error) {
	if interval <= 0 || maxPending <= 0 || src == nil {
		return nil, fmt.Errorf("feedback submitter needs a positive interval, a positive maxPending and a job source")
	}
	return &Feedback{Interval: interval, MaxPending: maxPending, Source: src}, nil
}

// Step implements sim.Submitter; submit times of the source are ignored.
func (f *Feedback) Step(now sim.Time, s sim.Status) ([]*sim.Pod, sim.Time, error) {
	var pods []*sim.Pod
	for n := s.Pending; n < f.MaxPending && !f.done; {
		if len(f.buf) == 0 {
			js, ok := f.Source.nextJobs()
			if !ok {
				f.done = true
				break
			}
			f.buf = js
		}
		for i := range f.buf {
			pods = append(pods, f.buf[i].Pod())
			n++
		}
		f.buf = f.buf[:0]
	}
	if f.done {
		return pods, sim.Never, nil
	}
	return pods, now + f.Interval, nil
}

// Func adapts a function to sim.Submitter, for feedback logic written in Go.
type Func func(now sim.Time, s sim.Status) ([]*sim.Pod, sim.Time, error)

// Step implements sim.Submitter.
func (f Func) Step(now sim.Time, s sim.Status) ([]*sim.Pod, sim.Time, error) { return f(now, s) }
