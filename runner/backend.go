// Package runner drives a run: it schedules a plan's trials over a Backend with a concurrency
// cap, dependencies, retries and timeouts, collects each attempt's outputs into the store, and
// journals every change of state there so a killed runner can be resumed.
package runner

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner/core"
)

// Backend starts trial attempts on one engine (local processes, Docker, Kubernetes).
//
// Contract:
//   - Start launches one attempt and returns once it is running (or has failed to start).
//     Everything it creates carries the run id and trial name (labels, env) so Live can find it.
//     The attempt's stdout and stderr end up in a.StdoutPath and a.StderrPath, and the files the
//     trial writes to its output dir end up in a.OutputDir, by the time Wait returns.
//   - Live lists what an earlier runner of this run left running, found on the engine itself
//     (labels, process environment), never by re-reading the experiment file.
//   - StopLive stops one of those; stopping something already gone is not an error.
//   - Plan announces the trials a runner is about to run. A runner calls, in this order: Plan,
//     then Live (stopping what it lists), then Adopted (Adopter), then Start. A backend that
//     adopts leaves out of Live the attempts of the plan's trials that it will re-attach to; a
//     command that only stops a run (kill) never calls Plan, so Live lists everything. Plan
//     only remembers: whether the plan can run is Checker's question, asked once per command.
type Backend interface {
	Name() string
	Plan(trials []experiment.Trial)
	Start(ctx context.Context, a *Attempt) (Process, error)
	Live(ctx context.Context, runID string) ([]LiveTrial, error)
	StopLive(ctx context.Context, lt LiveTrial) error
}

// Checker is implemented by backends that can tell, before anything starts, that they cannot
// run a plan (an unreachable engine, a GPU request on a host without GPUs). Check changes
// nothing in the backend.
type Checker interface {
	Check(ctx context.Context, trials []experiment.Trial) error
}

// Adopter is implemented by backends that re-attach to the attempts an earlier runner of the
// run left running instead of stopping them (a cluster's Jobs outlive their runner). After
// Live, Adopted names them, trial -> attempt number; Start of that trial then re-attaches to
// its attempt, which the runner records as the same attempt, not a new one.
type Adopter interface {
	Adopted(runID string) map[string]int
}

// Process is one running attempt.
type Process interface {
	// Handle identifies the attempt on its engine (process group, container id, Job name).
	Handle() string
	// Wait blocks until the attempt has ended and its outputs are collected. The runner calls
	// it once.
	Wait() Exit
	// Stop asks the attempt to end, and kills it after grace.
	Stop(grace time.Duration) error
}

// GroupLeader is implemented by processes that run on this host as a process group (a local
// attempt's session, a container's init): the pid of its leader. An attempt's GPU leases name
// that group once it has started, so they hold while its processes run, even after the runner
// that started it was killed.
type GroupLeader interface {
	GroupLeader() int
}

// Notifier is implemented by processes whose end the backend learns from its engine without a
// goroutine waiting on each attempt (a cluster's watch delivers every change). The runner then
// holds no goroutine while such an attempt runs: right after Start it calls Notify once, and it
// calls Wait only once f has been called. Wait then returns without waiting for the attempt,
// though it may still make the requests that finish it (a failed container's log).
type Notifier interface {
	// Notify arranges for f to be called once, from any goroutine, when the attempt has ended
	// (at once if it already has). f must not block.
	Notify(f func())
}

// StartLimiter is implemented by backends that gain nothing from more than a number of Starts at
// once (a cluster's client lets a few hundred requests a second through). The runner keeps the
// attempts it starts beyond that number in a queue, in the order it decided to start them,
// instead of a goroutine each waiting inside Start: a sweep of -j 10000 would otherwise hold
// 10,000 goroutine stacks while the first few hundred Jobs are created.
type StartLimiter interface {
	MaxStarts() int
}

// Healthier is implemented by processes that can report readiness (a service's health check).
type Healthier interface {
	// WaitHealthy runs the attempt's health check until it passes (nil), ctx is done
	// (ctx.Err()), the attempt ends (an error wrapping ErrAttemptEnded), or the check can never
	// pass (another error). It sets no deadline of its own: the runner owns the deadline and
	// cancels ctx. Each probe is bounded by ctx, so a hanging probe does not outlive it.
	WaitHealthy(ctx context.Context) error
}

// LivenessWatcher is implemented by processes whose health check goes on once it has passed,
// as a Kubernetes liveness probe does.
type LivenessWatcher interface {
	// WatchLiveness probes every interval and returns when FailureThreshold probes in a row
	// have failed (an error saying why), when the attempt ends (an error wrapping
	// ErrAttemptEnded) or when ctx is done (ctx.Err()).
	WatchLiveness(ctx context.Context) error
}

// FailureThreshold is how many probes in a row must fail, once a service has been healthy,
// for it to be unhealthy (Kubernetes' and compose's default of 3): one slow answer is not
// the end of a server.
const FailureThreshold = 3

// ErrAttemptEnded is returned (wrapped) by Healthier.WaitHealthy when the attempt ended before
// it was healthy.
var ErrAttemptEnded = errors.New("the attempt ended before it was healthy")

// HealthChecked is implemented by processes that may have a health check the trial does not
// declare (a container image's HEALTHCHECK); the runner then waits for it before calling the
// attempt healthy.
type HealthChecked interface {
	HasHealthCheck() bool
}

// ImageDigester is implemented by processes of container backends: the digest of the image the
// attempt runs, which the runner records with the trial (TrialRecord.ImageDigest). The runner
// asks when the attempt starts and, if the answer was "", again when it has ended.
type ImageDigester interface {
	ImageDigest() string
}

// OutputStorer is implemented by processes whose outputs an executor next to the trial has
// already put in the run's store under the trial's key: metrics (stdout's ::metric lines
// included), result, artifacts, logs and params (the kubernetes backend's in-pod executor).
// When OutputsStored reports true after Wait, the runner does not scan stdout for metrics and
// uploads only what the process left in the attempt folder, such as a log it read from
// elsewhere because the executor never ran; the outputs are not sent through the runner twice.
// When it reports true right after Start, the executor also appends the attempt's live metrics,
// and the runner does not read them from the attempt folder.
type OutputStorer interface {
	OutputsStored() bool
}

// Warner is implemented by processes that can stop an attempt with another signal than SIGTERM
// (its trial's checkpoint.signal: "USR1", "USR2", "INT", "HUP" or "TERM"), so that it saves its
// work in the grace it has before SIGKILL.
type Warner interface {
	StopWith(signal string, grace time.Duration) error
}

// Exit is how an attempt ended.
type Exit struct {
	Code int
	// Reason explains an abnormal end ("killed by signal 9", "out of memory", "image not found").
	Reason string
	// Err is set when the attempt could not run or be watched at all.
	Err error
	// Interrupted classifies an end that was the engine's doing, as the engine told it:
	// preempted, node lost, time limit. A preemptible trial is requeued for it.
	Interrupted Interruption
}

// Interruption is why an attempt was ended by its engine (core.Interruption).
type Interruption = core.Interruption

// The interruptions a backend reports.
const (
	NotInterrupted = core.NotInterrupted
	Preempted      = core.Preempted
	NodeLost       = core.NodeLost
	TimeLimit      = core.TimeLimit
)

// Attempt is what a backend needs to run one attempt of a trial.
type Attempt struct {
	RunID string
	Trial experiment.Trial
	N     int // attempt number, from 1
	// Env is the trial interface (JIKKEN_*) plus the trial's env, as KEY=VALUE.
	Env []string
	// Dir is a local folder for this attempt; OutputDir, StdoutPath and StderrPath are inside it.
	Dir        string
	OutputDir  string
	StdoutPath string
	StderrPath string
	// Workdir is where a local process runs: the trial's workdir resolved against the
	// experiment's folder (or its code snapshot).
	Workdir string
	// Devices are the GPU units the runner gave the attempt (UUIDs when known, else indices);
	// empty when it gave none, or when the cluster places trials itself.
	Devices []string
	// Queued, when set, is for backends whose attempts wait in a cluster's queue after Start:
	// they call it with the scheduler's reason each time it changes, and with "" once the
	// attempt runs. It does not block for long, and may be called from any goroutine.
	Queued func(reason string)
	// CheckpointDir, when set, is the trial's checkpoint folder on this host
	// ($JIKKEN_CHECKPOINT_DIR), which outlives the attempt: a container backend mounts it.
	CheckpointDir string
	// Hold, when set, is a file the attempt's processes on this host should inherit (open, as
	// fd 3): it holds the attempt's GPU lease for as long as one of them has it open, so the
	// lease is never without a holder, even if the runner dies as the attempt starts.
	Hold *os.File
}

// LiveTrial is an attempt found running on an engine.
type LiveTrial struct {
	RunID   string
	Trial   string
	Attempt int
	Handle  string
}
