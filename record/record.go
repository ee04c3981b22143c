package record

import "time"

// Status of a trial or a run.
type Status string

// Trial and run statuses.
const (
	Pending   Status = "pending"
	Running   Status = "running"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	Skipped   Status = "skipped" // an `after` dependency did not succeed
	Killed    Status = "killed"  // stopped by kill, Ctrl-C or fail-fast
	// Stopped is a declared service the runner stopped (or did not start again) because no
	// trial needed it any more: neither a success nor a failure of the run.
	Stopped Status = "stopped"
	// Pruned is a trial a search's pruner stopped early because its intermediate values were not
	// promising: final, never retried, and neither a success nor a failure.
	Pruned Status = "pruned"
	// Eliminated is a pending trial a race dropped because a test found its configuration worse
	// than the best (the reason names the test): final, never retried, and neither a success nor
	// a failure.
	Eliminated Status = "eliminated"
)

// Final reports whether a trial with this status will not run again in this runner.
func (s Status) Final() bool {
	return s == Succeeded || s == Failed || s == Skipped || s == Killed || s == Stopped || s == Pruned || s == Eliminated
}

// Trial is a trial's journal entry, rewritten atomically on every change of state.
type Trial struct {
	Run      string         `json:"run"`
	Name     string         `json:"name"`
	Index    int            `json:"index"`
	Group    string         `json:"group,omitempty"`
	Status   Status         `json:"status"`
	Service  bool           `json:"service,omitempty"`
	Params   map[string]any `json:"params,omitempty"`
	Seed     *int64         `json:"seed,omitempty"`
	ExitCode *int           `json:"exit_code,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Attempts []Attempt      `json:"attempts"`
	Started  *time.Time     `json:"started,omitempty"`
	Finished *time.Time     `json:"finished,omitempty"`
	Backend  string         `json:"backend"`
	Image    string         `json:"image,omitempty"`
	// ImageDigest pins the image a container backend resolved Image to.
	ImageDigest string `json:"image_digest,omitempty"`
	// Devices are the GPU units the last attempt was given (UUIDs when known).
	Devices []string `json:"devices,omitempty"`
	// Compute sums the wall time of the trial's ended attempts (nil before one has ended).
	Compute *Compute `json:"compute,omitempty"`
	// Live is set while an attempt runs, so kill and resume can find it after a runner crash.
	Live *Live `json:"live,omitempty"`
	// Values are the trial's final metric values (the last value of each metric) once it has
	// ended, kept in the journal for a search, whose next suggestions depend on them. NaN and
	// infinities are written as summary.json writes them (Metrics): a trial whose objective came
	// out NaN is recorded like any other, not lost to a failed write.
	Values Metrics `json:"values,omitempty"`
	// PrunedAt is, for a pruned trial, how many of its last attempt's live points the pruner
	// had seen when it decided: the curve it was judged on, which a resumed search reads back.
	PrunedAt int64 `json:"pruned_at,omitempty"`
	// Eliminated is, for a trial that had started when a race eliminated its configuration, the
	// test that did: the trial ran on to its end, and its status and values stand.
	Eliminated string `json:"eliminated,omitempty"`
	// Tool names the jikken that last wrote the record (version and commit), set by the store's
	// WriteTrial and WriteTrials.
	Tool string `json:"tool,omitempty"`
}

// Attempt is one execution of a trial.
type Attempt struct {
	N        int       `json:"n"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	// Notes tell what the runner noticed about the attempt (an output that could not be stored).
	Notes []string `json:"notes,omitempty"`
	// Devices are the GPU units the attempt was given (UUIDs when known).
	Devices []string `json:"devices,omitempty"`
	// Interrupted is set when the attempt ended by the cluster's doing, not the trial's:
	// "preempted", "node lost" or "time limit".
	Interrupted string `json:"interrupted,omitempty"`
	// Requeued is set when the attempt's interruption started another attempt without using up
	// the trial's retries (a preemptible trial).
	Requeued bool `json:"requeued,omitempty"`
	// Checkpoint is the version of the trial's checkpoint the attempt started from (0: none);
	// CheckpointEnd the newest version when it ended, and CheckpointAt when that was saved.
	Checkpoint    int       `json:"checkpoint,omitempty"`
	CheckpointEnd int       `json:"checkpoint_end,omitempty"`
	CheckpointAt  time.Time `json:"checkpoint_at,omitzero"`
}

// Compute is the wall time a trial's attempts took, and how much of it was lost: the seconds
// of interrupted attempts after their last checkpoint (all of it, when they saved none).
type Compute struct {
	Spent float64 `json:"spent_s"`
	Lost  float64 `json:"lost_s"`
}

// Live locates a running attempt.
type Live struct {
	Host    string `json:"host"`
	Attempt int    `json:"attempt"`
	// Handle is the backend's id for the attempt (a process group, a container, a Job).
	Handle string `json:"handle"`
	// Dir is the attempt's local folder, where its logs grow until they are stored.
	Dir string `json:"dir,omitempty"`
	// Queued is why the attempt still waits in its cluster's queue, in the scheduler's words
	// (Slurm's pending reason: Resources, Priority, QOSMaxGRESPerUser); empty once it runs.
	Queued string `json:"queued,omitempty"`
}
