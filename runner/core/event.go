package core

import (
	"time"

	"github.com/jikken-dev/jikken/record"
)

// Event is something that happened to a run. Every event carries the time it happened; the core
// never reads a clock.
type Event interface{ time() time.Time }

// Begin starts the run: the core schedules what can start. It comes once, first.
type Begin struct{ At time.Time }

// Started reports that an attempt is running.
type Started struct {
	Trial, Attempt int
	// Handle identifies the attempt on its engine (process group, container id, Job name).
	Handle string
	// Dir is the attempt's local folder (where its logs grow), if any.
	Dir string
	// HealthCheck is true when the engine has a health check the trial does not declare (an
	// image's HEALTHCHECK): the attempt is healthy only once it passes.
	HealthCheck bool
	ImageDigest string
	// Checkpoint is the version of the trial's checkpoint the attempt starts from (0: none).
	Checkpoint int
	At         time.Time
}

// Queued reports why a started attempt still waits in its engine's queue (a batch cluster's
// pending reason), or, with Reason empty, that it left the queue and runs.
type Queued struct {
	Trial, Attempt int
	Reason         string
	At             time.Time
}

// Healthy reports that an attempt passed its health check.
type Healthy struct {
	Trial, Attempt int
	At             time.Time
}

// Unhealthy reports that an attempt's health check gave up before the deadline (the engine
// reported the container unhealthy, a probe cannot run at all), or, once the attempt was
// healthy, that its probes kept failing (liveness).
type Unhealthy struct {
	Trial, Attempt int
	Reason         string
	At             time.Time
}

// Exited reports that an attempt ended and its outputs were collected (or that it could not be
// started, with Err set).
type Exited struct {
	Trial, Attempt int
	Code           int
	// Reason explains an abnormal end ("killed by signal 9", "out of memory").
	Reason string
	// Err is set when the attempt could not run, be watched or have its outputs stored.
	Err string
	// Notes are remarks for the trial record (outputs that were not stored, and why).
	Notes []string
	// Values are the attempt's final metric values (the last value of each metric it logged),
	// kept in the trial's record: a search's planner decides from them.
	Values      map[string]float64
	ImageDigest string
	// Interrupted classifies an end that was the engine's doing (preempted, node lost, time
	// limit), as the backend read it from its engine; a preemptible trial is requeued for it.
	Interrupted Interruption
	// Checkpoint is the newest version of the trial's checkpoint once the attempt ended, and
	// CheckpointAt when it was saved (zero: no checkpoint).
	Checkpoint   int
	CheckpointAt time.Time
	At           time.Time
}

// Interruption is why an attempt was ended by its engine rather than by its own doing.
type Interruption uint8

// The interruptions a backend reports.
const (
	NotInterrupted Interruption = iota
	// Preempted: the engine took the attempt's resources for other work (a job of higher
	// priority, an eviction, a SIGKILL the runner did not send).
	Preempted
	// NodeLost: the node running the attempt failed or stopped answering.
	NodeLost
	// TimeLimit: the attempt reached its time limit (the trial's timeout, a cluster's limit).
	TimeLimit
)

// String is how a record names the interruption.
func (i Interruption) String() string {
	switch i {
	case Preempted:
		return "preempted"
	case NodeLost:
		return "node lost"
	case TimeLimit:
		return "time limit"
	}
	return ""
}

// TimerFired reports that a timer the core set is due.
type TimerFired struct {
	Timer Timer
	At    time.Time
}

// StopRequested asks the run to stop: running attempts are stopped and recorded as killed, as
// are trials waiting to retry; trials that have not started stay pending for a resume.
type StopRequested struct {
	Reason string
	At     time.Time
}

// Ask is the step of its own in which a core built with Config.DeferAsk asks its eager planner,
// sent by the driver as soon as it has carried out the actions of the step that made the ask
// due (AskDue).
type Ask struct{ At time.Time }

// Persisted reports that version Version of a trial's record is in the store.
type Persisted struct {
	Trial, Version int
	At             time.Time
}

// DevicesBusy reports that an attempt could not start because another run on the host holds
// some of the devices it was given (Devices): the core takes the start back.
type DevicesBusy struct {
	Trial, Attempt int
	Devices        []string
	At             time.Time
}

// PersistFailed reports that a record could not be written.
type PersistFailed struct {
	Trial, Version int
	Err            string
	At             time.Time
}

func (e Begin) time() time.Time         { return e.At }
func (e Started) time() time.Time       { return e.At }
func (e Queued) time() time.Time        { return e.At }
func (e Healthy) time() time.Time       { return e.At }
func (e Unhealthy) time() time.Time     { return e.At }
func (e Exited) time() time.Time        { return e.At }
func (e TimerFired) time() time.Time    { return e.At }
func (e StopRequested) time() time.Time { return e.At }
func (e Persisted) time() time.Time     { return e.At }
func (e Ask) time() time.Time           { return e.At }
func (e PersistFailed) time() time.Time { return e.At }
func (e DevicesBusy) time() time.Time   { return e.At }

// Action is what the driver must do.
type Action interface{ isAction() }

// StartAttempt asks for attempt Attempt of a trial to be started; the driver answers with
// Started, then Exited (or only Exited when it cannot start). When Clear is set, the outputs of
// the trial's earlier attempts are to be removed from the store first (their logs kept under
// Keep).
type StartAttempt struct {
	Trial, Attempt int
	Clear          bool
	// Keep is the earlier attempt whose logs the store holds as the trial's logs, to be kept
	// under its number (0: none).
	Keep int
	// Devices are the GPU units the attempt is given (Capacity.GPUs' IDs); the driver answers
	// DevicesBusy instead of Started when another run on the host holds one.
	Devices []string
	// Shares are the thousandths of each device the attempt takes (1000: the whole device).
	Shares []int
	// Adopted is set when the backend re-attaches to this attempt, which an earlier runner
	// started (Config.Adopted): its local folder is kept, since the attempt may still be
	// writing there.
	Adopted bool
}

// StopAttempt asks for an attempt to be stopped (SIGTERM, then SIGKILL after the grace period);
// the driver answers with its Exited when it has ended.
type StopAttempt struct {
	Trial, Attempt int
	Reason         string
}

// WatchHealth asks for an attempt's health check to be run until it passes (Healthy), cannot
// pass (Unhealthy), or the attempt ends. The deadline is the core's (a timer).
type WatchHealth struct {
	Trial, Attempt int
	Deadline       time.Time
}

// Persist asks for a trial's record to be written to the store; the driver answers with
// Persisted (or PersistFailed). Later versions of the same trial's record supersede earlier
// ones: a driver may write only the latest, and then report every version up to it persisted.
type Persist struct {
	Trial, Version int
	Record         *record.Trial
}

// SetTimer asks for a TimerFired at At. A core ignores timers that no longer matter, so
// timers are never cancelled.
type SetTimer struct {
	Timer Timer
	At    time.Time
}

// Report tells the user of a change the store already holds.
type Report struct {
	Trial   int
	Name    string
	Status  record.Status
	Attempt int
	Reason  string
	Counts  Counts
}

func (StartAttempt) isAction() {}
func (StopAttempt) isAction()  {}
func (WatchHealth) isAction()  {}
func (Persist) isAction()      {}
func (SetTimer) isAction()     {}
func (Report) isAction()       {}

// Timer names what a timer is for.
type Timer struct {
	Kind           TimerKind
	Trial, Attempt int
}

// TimerKind is the purpose of a timer.
type TimerKind uint8

// The timers the core sets.
const (
	// Timeout ends an attempt that ran longer than its trial's timeout.
	Timeout TimerKind = iota + 1
	// HealthDeadline fails an attempt that was not healthy in time.
	HealthDeadline
	// Retry starts the next attempt after the backoff.
	Retry
	// Recheck offers again the devices other runs on the host held.
	Recheck
)

// Counts are the run's trials by state.
type Counts struct {
	Total, Pending, Running, Succeeded, Failed, Skipped, Killed, Stopped, Pruned, Eliminated int
}
