package trial

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Trial is one unit of work: a command run once per attempt on some backend.
type Trial struct {
	Name  string `json:"name"`
	Index int    `json:"index"`
	// Group is the matrix group a trial was expanded from, or empty.
	Group string `json:"group,omitempty"`

	Image   string            `json:"image,omitempty"`
	Cmd     Command           `json:"cmd"`
	Env     map[string]string `json:"env,omitempty"`
	Params  map[string]any    `json:"params,omitempty"`
	Seed    *int64            `json:"seed,omitempty"`
	Workdir string            `json:"workdir,omitempty"`

	Timeout Duration `json:"timeout,omitempty"`
	Retries int      `json:"retries,omitempty"`
	Backoff Duration `json:"backoff,omitempty"`
	// Preemptible makes an attempt that was preempted, lost its node or reached its time limit
	// start again without using up Retries, up to Requeues times: such an end is the
	// cluster's doing, not the trial's.
	Preemptible bool `json:"preemptible,omitempty"`
	// Requeues caps the attempts a preemptible trial starts again for such ends (default
	// DefaultRequeues); once spent, they count against Retries like any failure.
	Requeues int `json:"requeues,omitempty"`
	// Checkpoint, when set, is how the trial saves its work between attempts
	// ($JIKKEN_CHECKPOINT_DIR); a preemptible trial gets a checkpoint folder without it.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`

	Resources Resources `json:"resources,omitzero"`
	Service   bool      `json:"service,omitempty"`
	// ServiceImplied is set when Service was inferred: other trials depend on the trial to have
	// started (or be healthy) and none waits for it to end, as combu and compose treat it.
	ServiceImplied bool `json:"service_implied,omitempty"`
	// Restart says when a service that ends while trials still need it is started again.
	Restart Restart `json:"restart,omitempty"`
	// Show asks 'jikken run' to print the trial's stdout when the run ends (a final summary).
	Show   bool    `json:"show,omitempty"`
	Health *Health `json:"health,omitempty"`

	// Depends are trials that must have started (or be healthy, or have completed) first.
	Depends []Dependency `json:"depends,omitempty"`
	// After are trials that must have succeeded first.
	After []string `json:"after,omitempty"`

	Ports    []string `json:"ports,omitempty"`
	Volumes  []string `json:"volumes,omitempty"`
	Networks []string `json:"networks,omitempty"`

	NodeSelector map[string]string `json:"node_selector,omitempty"`
	Tolerations  []Toleration      `json:"tolerations,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
}

// DeclaredService reports whether the trial says it is a service (service: true). Only such a
// trial runs outside -j, is stopped by the runner once no trial needs it, and is left out of
// results. A service implied by depends is a trial like the others while the runner is
// concerned: it takes a slot, is never stopped for being idle, and succeeds when it exits 0;
// its dependants only need it running (or succeeded) when they start.
func (t *Trial) DeclaredService() bool { return t.Service && !t.ServiceImplied }

// DefaultRequeues is how many times a preemptible trial is started again after preemptions,
// lost nodes and time limits when it sets no requeues: enough for a busy cluster, finite so a
// trial that can never finish in its time limit ends.
const DefaultRequeues = 10

// Checkpoint is how a trial keeps its work across attempts: its $JIKKEN_CHECKPOINT_DIR survives
// them, the trial is warned before it is stopped, and an executor uploads the folder to the store
// while the trial runs.
type Checkpoint struct {
	// Signal is sent to the trial when it is about to be stopped (a timeout, a preemption the
	// engine announces, a stop): "TERM" (the default), "USR1", "USR2", "INT" or "HUP".
	Signal string `json:"signal,omitempty"`
	// Before is how long the trial has between the signal and SIGKILL (default
	// DefaultCheckpointBefore); a timeout sends the signal this long before it ends the attempt.
	Before Duration `json:"before,omitempty"`
	// Every is how often an executor uploads the folder to an S3 store while the trial runs
	// (default DefaultCheckpointEvery); it also uploads it once the trial has ended.
	Every Duration `json:"every,omitempty"`
	// MaxSize caps the folder in bytes (default DefaultCheckpointMax): a larger one is not
	// saved, the trial is told in its log and the last good checkpoint is kept.
	MaxSize int64 `json:"max_size,omitempty"`
}

// Defaults of a trial's checkpoint settings.
const (
	DefaultCheckpointBefore = 30 * time.Second
	DefaultCheckpointEvery  = 10 * time.Minute
	DefaultCheckpointMax    = 50 << 30
)

// Checkpointed reports whether the trial gets a checkpoint folder: it set checkpoint or
// preemptible.
func (t *Trial) Checkpointed() bool { return t.Checkpoint != nil || t.Preemptible }

// CheckpointSettings are the trial's checkpoint settings with the defaults filled in.
func (t *Trial) CheckpointSettings() Checkpoint {
	var c Checkpoint
	if t.Checkpoint != nil {
		c = *t.Checkpoint
	}
	if c.Signal == "" {
		c.Signal = "TERM"
	}
	if c.Before <= 0 {
		c.Before = Duration(DefaultCheckpointBefore)
	}
	if c.Every <= 0 {
		c.Every = Duration(DefaultCheckpointEvery)
	}
	if c.MaxSize <= 0 {
		c.MaxSize = DefaultCheckpointMax
	}
	return c
}

// CheckpointSignals are the signals a trial may ask to be warned with.
var CheckpointSignals = []string{"TERM", "USR1", "USR2", "INT", "HUP"}

// Toleration lets a trial's pods onto nodes with a matching taint (Kubernetes backend), with
// Kubernetes' meaning: operator Equal (the default) matches key and value, Exists any value of
// key (or every taint when key is empty); an empty effect matches every effect; Seconds bounds
// how long a NoExecute taint is tolerated.
type Toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect,omitempty"`
	Seconds  *int64 `json:"toleration_seconds,omitempty"`
}

// Command is what a trial runs: a shell string (run by sh -c) or an argv array.
type Command struct {
	Shell string
	Argv  []string
}

// IsZero reports whether no command is set.
func (c Command) IsZero() bool { return c.Shell == "" && len(c.Argv) == 0 }

// String renders the command for people.
func (c Command) String() string {
	if c.Shell != "" {
		return c.Shell
	}
	return strings.Join(c.Argv, " ")
}

// Short renders the command for a message or a table: cut at 200 bytes, with its length, so
// that an error about a huge command does not repeat it.
func (c Command) Short() string { return Clip(c.String()) }

// MarshalJSON writes a string or an array, as the command was given.
func (c Command) MarshalJSON() ([]byte, error) {
	if c.Argv != nil {
		return json.Marshal(c.Argv)
	}
	return json.Marshal(c.Shell)
}

// UnmarshalJSON reads a string or an array of strings.
func (c *Command) UnmarshalJSON(b []byte) error {
	*c = Command{}
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '[' {
		if err := json.Unmarshal(b, &c.Argv); err != nil {
			return fmt.Errorf("cmd must be a string or an array of strings")
		}
		return nil
	}
	if err := json.Unmarshal(b, &c.Shell); err != nil {
		return fmt.Errorf("cmd must be a string or an array of strings")
	}
	return nil
}

// Dependency is an edge to a trial that must reach Condition before this one starts.
type Dependency struct {
	Trial     string    `json:"trial"`
	Condition Condition `json:"condition"`
}

// Condition is the state a dependency must reach.
type Condition string

// The conditions a dependency may wait for.
const (
	Started   Condition = "started"
	Healthy   Condition = "healthy"
	Completed Condition = "completed" // ended, whatever the exit code
	Succeeded Condition = "succeeded"
)

// Restart is a service's restart policy, as in compose.
type Restart string

// The restart policies.
const (
	RestartNo        Restart = "no"         // the default: a service that ends fails its dependants
	RestartOnFailure Restart = "on-failure" // restarted when it exits non-zero or fails its health check
	RestartAlways    Restart = "always"     // restarted whenever it ends while needed
)

// Health is a service's probe: a command that exits 0, a TCP address that accepts
// connections, or an HTTP URL that answers 2xx or 3xx to a GET. It is checked every Interval
// until it passes (within Timeout of the start: readiness), then every Interval while the
// service runs (liveness: FailureThreshold failures in a row and the service is unhealthy).
type Health struct {
	Cmd      Command  `json:"cmd,omitzero"`
	TCP      string   `json:"tcp,omitempty"`
	HTTP     string   `json:"http,omitempty"`
	Interval Duration `json:"interval,omitempty"`
	Timeout  Duration `json:"timeout,omitempty"`
}

// Resources a trial asks for. CPU is in cores, Memory in bytes. GPU is a number of whole GPUs,
// or a share of one below 1 (0.5: at most two such trials on a device); MIG asks instead for one
// MIG instance of a profile ("1g.10gb").
type Resources struct {
	CPU    float64 `json:"cpu,omitempty"`
	Memory int64   `json:"memory,omitempty"`
	GPU    float64 `json:"gpu,omitempty"`
	MIG    string  `json:"mig,omitempty"`
}

// GPUs is how many whole GPUs r asks for (0 for a share of one or a MIG instance).
func (r Resources) GPUs() int {
	if r.GPU >= 1 {
		return int(r.GPU)
	}
	return 0
}

// UsesGPU reports whether r asks for any GPU: whole, a share, or a MIG instance.
func (r Resources) UsesGPU() bool { return r.GPU > 0 || r.MIG != "" }

// IsZero reports whether r asks for nothing.
func (r Resources) IsZero() bool { return r == Resources{} }

// Duration is a time.Duration written as a Go duration string ("90s", "1h30m") or a number of
// seconds.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case float64:
		if x < 0 {
			return fmt.Errorf("duration %v is negative", x)
		}
		*d = Duration(x * float64(time.Second))
	case string:
		p, err := time.ParseDuration(x)
		if err != nil {
			return fmt.Errorf("duration %q: use a number of seconds or a string like \"90s\" or \"1h30m\"", x)
		}
		if p < 0 {
			return fmt.Errorf("duration %q is negative", x)
		}
		*d = Duration(p)
	case nil:
		*d = 0
	default:
		return fmt.Errorf("duration must be a number of seconds or a string like \"90s\"")
	}
	return nil
}

// Clip shortens a value of a trial's spec quoted in a message (a command, a folder, params): a
// message repeats no huge strings, and says how long the value was.
func Clip(s string) string {
	const keep = 200
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%s bytes)", s[:cut], thousands(len(s)))
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
