package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Scenario is the YAML file's schema. Durations are seconds (a number) or Go durations
// ("1h30m"); quantities are Kubernetes quantities ("500m", "16Gi").
type Scenario struct {
	Name      string     `json:"name,omitempty"`
	Seed      uint64     `json:"seed"`
	Cluster   Cluster    `json:"cluster"`
	Workload  []Workload `json:"workload"`
	Scheduler Scheduler  `json:"scheduler"`
	Events    []Event    `json:"events,omitempty"`
	Failures  Failures   `json:"failures,omitempty"`
	Stop      Stop       `json:"stop,omitempty"`
	Tick      Duration   `json:"tick,omitempty"`
	// TickOnly schedules at ticks only (tick-based simulator compatibility).
	TickOnly bool         `json:"tickOnly,omitempty"`
	Sample   Duration     `json:"sample,omitempty"`
	Output   OutputConfig `json:"output,omitempty"`

	// Dir is the folder relative paths are resolved against (the scenario file's folder).
	Dir string `json:"-"`
}

// Duration is seconds as a number or a Go duration string.
type Duration string

// UnmarshalJSON accepts numbers and strings.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	*d = Duration(s)
	return nil
}

// Cluster is the set of node groups.
type Cluster struct {
	NodeGroups []NodeGroup `json:"nodeGroups"`
}

// NodeGroup is Count identical nodes named <name>-0, <name>-1, ...
type NodeGroup struct {
	Name     string            `json:"name"`
	Count    int               `json:"count"`
	Capacity map[string]string `json:"capacity"`
	Labels   map[string]string `json:"labels,omitempty"`
	Taints   []Taint           `json:"taints,omitempty"`
}

// Taint is a node taint.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Workload is one submitter; exactly one field is set.
type Workload struct {
	Trace    *TraceSource    `json:"trace,omitempty"`
	Preset   *PresetSource   `json:"preset,omitempty"`
	Poisson  *Generator      `json:"poisson,omitempty"`
	Uniform  *Generator      `json:"uniform,omitempty"`
	Binomial *Generator      `json:"binomial,omitempty"`
	Users    []UserProfile   `json:"users,omitempty"`
	Feedback *FeedbackSource `json:"feedback,omitempty"`
	Remote   *RemoteSource   `json:"remote,omitempty"`
}

// TraceSource replays a file: .csv, .jsonl, or .yaml/.yml/.json Pod manifests.
type TraceSource struct {
	Path string `json:"path"`
}

// PresetSource is a synthetic preset (philly, gavel).
type PresetSource struct {
	Name string `json:"name"`
	Jobs int    `json:"jobs"`
	// Load is the offered GPU load relative to the cluster's GPUs (default 0.8); Rate, jobs per
	// second, overrides it.
	Load         float64  `json:"load,omitempty"`
	Rate         float64  `json:"rate,omitempty"`
	CPUPerGPU    float64  `json:"cpuPerGPU,omitempty"`
	MemoryPerGPU string   `json:"memoryPerGPU,omitempty"`
	MaxDuration  Duration `json:"maxDuration,omitempty"`
}

// Generator is an arrival process with a job shape. Poisson uses Rate (jobs/s); Uniform uses
// Min and Max inter-arrival seconds; Binomial uses Interval, N and P.
type Generator struct {
	Name     string   `json:"name,omitempty"`
	Count    int      `json:"count,omitempty"`
	Until    Duration `json:"until,omitempty"`
	Rate     float64  `json:"rate,omitempty"`
	Min      float64  `json:"min,omitempty"`
	Max      float64  `json:"max,omitempty"`
	Interval float64  `json:"interval,omitempty"`
	N        int      `json:"n,omitempty"`
	P        float64  `json:"p,omitempty"`
	Shape    Shape    `json:"shape"`
}

// UserProfile is one user's behaviour: Rate jobs per second scaled by a 24-entry time-of-day
// profile, with bursts and a shape.
type UserProfile struct {
	Name   string    `json:"name"`
	Rate   float64   `json:"rate"`
	Hourly []float64 `json:"hourly,omitempty"`
	Burst  float64   `json:"burst,omitempty"`
	Count  int       `json:"count,omitempty"`
	Until  Duration  `json:"until,omitempty"`
	Shape  Shape     `json:"shape"`
}

// FeedbackSource tops the queue up to MaxPending every Interval from a generator's shape.
type FeedbackSource struct {
	Interval   Duration `json:"interval"`
	MaxPending int      `json:"maxPending"`
	Count      int      `json:"count"`
	Shape      Shape    `json:"shape"`
}

// RemoteSource is a submitter in another process, reached over HTTP/JSON (see sim/remote).
type RemoteSource struct {
	URL string `json:"url"`
}

// Shape draws a job's size and duration.
type Shape struct {
	GPUs           *Dist           `json:"gpus,omitempty"`
	Duration       *Dist           `json:"duration"`
	DurationByGPUs map[string]Dist `json:"durationByGPUs,omitempty"`
	CPU            float64         `json:"cpu,omitempty"`
	Memory         string          `json:"memory,omitempty"`
	CPUPerGPU      float64         `json:"cpuPerGPU,omitempty"`
	MemoryPerGPU   string          `json:"memoryPerGPU,omitempty"`
	MaxGPUsPerPod  int             `json:"maxGPUsPerPod,omitempty"`
	Users          []string        `json:"users,omitempty"`
	UserWeights    []float64       `json:"userWeights,omitempty"`
	Priority       int32           `json:"priority,omitempty"`
}

// Dist is a distribution; exactly one field is set (a bare number means const).
type Dist struct {
	Const       *float64    `json:"const,omitempty"`
	Uniform     *MinMax     `json:"uniform,omitempty"`
	Exponential *MeanOnly   `json:"exponential,omitempty"`
	LogNormal   *LogNormal  `json:"lognormal,omitempty"`
	LogUniform  *LogUniform `json:"logUniform,omitempty"`
	Choice      *ChoiceSpec `json:"choice,omitempty"`
}

// UnmarshalJSON accepts a bare number as a constant.
func (d *Dist) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		d.Const = &f
		return nil
	}
	type plain Dist
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*d = Dist(p)
	return nil
}

// MinMax bounds a uniform distribution.
type MinMax struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// MeanOnly is an exponential distribution's mean.
type MeanOnly struct {
	Mean float64 `json:"mean"`
}

// LogNormal is exp(N(mu, sigma^2)) truncated at max if set.
type LogNormal struct {
	Mu    float64 `json:"mu"`
	Sigma float64 `json:"sigma"`
	Max   float64 `json:"max,omitempty"`
}

// LogUniform is scale x 10^U(lo, hi).
type LogUniform struct {
	Scale float64 `json:"scale"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// ChoiceSpec is a discrete distribution.
type ChoiceSpec struct {
	Values  []float64 `json:"values"`
	Weights []float64 `json:"weights,omitempty"`
}

// Scheduler selects and configures the scheduler.
type Scheduler struct {
	// Profile is kube-default (the framework), kube-framework (kube-scheduler framework plugins
	// hosted by sim/kubehost) or a policy: fifo, fifo-backfill, sjf, srtf, las, las-time,
	// gittins, drf. "remote" uses Remote.
	Profile string `json:"profile"`
	// Placement is the policies' node choice: pack (default), spread, consolidated, first-fit.
	Placement string `json:"placement,omitempty"`
	// Plugins overrides the framework's extension points (kube-default only).
	Plugins *Plugins `json:"plugins,omitempty"`
	// PluginConfig passes arguments to custom plugins, as KubeSchedulerConfiguration's
	// pluginConfig does.
	PluginConfig             []PluginConfig               `json:"pluginConfig,omitempty"`
	ScoringStrategy          *ScoringStrategy             `json:"scoringStrategy,omitempty"`
	PercentageOfNodesToScore int                          `json:"percentageOfNodesToScore,omitempty"`
	Extenders                []Extender                   `json:"extenders,omitempty"`
	Quotas                   map[string]map[string]string `json:"quotas,omitempty"`
	// LASThresholds are the queue limits of las and gittins (GPU-seconds) and las-time
	// (seconds).
	LASThresholds []float64 `json:"lasThresholds,omitempty"`
	// StarveLimit turns on Tiresias's starvation guard for las, las-time and gittins: a job that
	// has waited StarveLimit times as long as it ran is promoted to the top queue.
	StarveLimit float64 `json:"starveLimit,omitempty"`
	// Gittins configures the gittins policy.
	Gittins *Gittins `json:"gittins,omitempty"`
	// GangTimeout is the default schedule timeout of gangs (coscheduling's
	// scheduleTimeoutSeconds): how long members placed early hold their nodes waiting for the
	// rest. A trace's gang_timeout_s column overrides it per gang. 0 places a gang within one
	// pass or not at all.
	GangTimeout Duration      `json:"gangTimeout,omitempty"`
	Remote      *RemoteSource `json:"remote,omitempty"`
}

// Gittins is the service distribution and quantum of the gittins policy.
type Gittins struct {
	// Samples is a CSV file with a header row whose first column holds one job's service in
	// GPU-seconds per row (Tiresias's yarn-gput files have this form). Empty: the service of
	// every job of this scenario's workload.
	Samples string `json:"samples,omitempty"`
	// Quantum is the service quantum in GPU-seconds (default: the first lasThreshold).
	Quantum float64 `json:"quantum,omitempty"`
}

// Plugins lists plugins per extension point; a nil list keeps the profile's default. PreEnqueue,
// PreScore, Permit, PreBind, PostBind and MultiPoint (plugins that join every point they
// implement) belong to the kube-framework profile only.
type Plugins struct {
	PreEnqueue []string    `json:"preEnqueue,omitempty"`
	QueueSort  string      `json:"queueSort,omitempty"`
	PreFilter  []string    `json:"preFilter,omitempty"`
	Filter     []string    `json:"filter,omitempty"`
	PreScore   []string    `json:"preScore,omitempty"`
	Score      []PluginRef `json:"score,omitempty"`
	Reserve    []string    `json:"reserve,omitempty"`
	Permit     []string    `json:"permit,omitempty"`
	PostFilter *[]string   `json:"postFilter,omitempty"`
	PreBind    []string    `json:"preBind,omitempty"`
	Bind       []string    `json:"bind,omitempty"`
	PostBind   []string    `json:"postBind,omitempty"`
	MultiPoint []PluginRef `json:"multiPoint,omitempty"`
}

// PluginConfig is one custom plugin's arguments, handed to its factory as JSON.
type PluginConfig struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// PluginRef is a score plugin and its weight.
type PluginRef struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// ScoringStrategy configures NodeResourcesFit.
type ScoringStrategy struct {
	Type      string      `json:"type"`
	Resources []PluginRef `json:"resources,omitempty"`
}

// Extender is a kube-scheduler extender, with KubeSchedulerConfiguration's field names.
type Extender struct {
	URLPrefix        string            `json:"urlPrefix"`
	FilterVerb       string            `json:"filterVerb,omitempty"`
	PrioritizeVerb   string            `json:"prioritizeVerb,omitempty"`
	BindVerb         string            `json:"bindVerb,omitempty"`
	PreemptVerb      string            `json:"preemptVerb,omitempty"`
	Weight           int64             `json:"weight,omitempty"`
	NodeCacheCapable bool              `json:"nodeCacheCapable,omitempty"`
	Ignorable        bool              `json:"ignorable,omitempty"`
	HTTPTimeout      Duration          `json:"httpTimeout,omitempty"`
	ManagedResources []ManagedResource `json:"managedResources,omitempty"`
}

// ManagedResource is an extended resource an extender manages.
type ManagedResource struct {
	Name               string `json:"name"`
	IgnoredByScheduler bool   `json:"ignoredByScheduler,omitempty"`
}

// Event is a scheduled cluster change. Type: nodeFail, nodeRecover, nodeAdd, nodeRemove,
// nodeDrain, nodeCordon, nodeUncordon. nodeAdd creates Name from Group's template.
type Event struct {
	At    Duration `json:"at"`
	Type  string   `json:"type"`
	Node  string   `json:"node,omitempty"`
	Group string   `json:"group,omitempty"`
	Name  string   `json:"name,omitempty"`
}

// Failures are random node and pod failures.
type Failures struct {
	Nodes []NodeFailure `json:"nodes,omitempty"`
	Pods  *PodFailure   `json:"pods,omitempty"`
}

// NodeFailure fails the nodes of Group (all if empty) with mean times MTBF and MTTR, drawn
// from a Weibull distribution of the given shape (default 1: exponential).
type NodeFailure struct {
	Group string   `json:"group,omitempty"`
	MTBF  Duration `json:"mtbf"`
	MTTR  Duration `json:"mttr"`
	Shape float64  `json:"shape,omitempty"`
}

// PodFailure fails pod runs at random with retries and exponential backoff.
type PodFailure struct {
	Probability float64  `json:"probability"`
	MaxRetries  int      `json:"maxRetries,omitempty"`
	Backoff     Duration `json:"backoff,omitempty"`
	MaxBackoff  Duration `json:"maxBackoff,omitempty"`
}

// Stop ends the run at Time or after Pods pods finished; by default when all work is done.
type Stop struct {
	Time Duration `json:"time,omitempty"`
	Pods int      `json:"pods,omitempty"`
}

// OutputConfig tunes the written files.
type OutputConfig struct {
	// TimelineRows caps timeline.csv's rows by averaging neighbours (default 2000, 0 in the file
	// means default, -1 keeps all).
	TimelineRows int `json:"timelineRows,omitempty"`
}

// Load reads and parses a scenario file. Unknown fields are errors, so a typo does not pass
// silently.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	sc, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	sc.Dir = filepath.Dir(path)
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return sc, nil
}

// Parse parses scenario YAML 1.2 (or JSON).
func Parse(data []byte) (*Scenario, error) {
	var sc Scenario
	if err := decodeYAML(data, &sc); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if len(sc.Cluster.NodeGroups) == 0 {
		return nil, errors.New("cluster.nodeGroups: no node groups; add at least one group with a count and a capacity")
	}
	if len(sc.Workload) == 0 {
		return nil, errors.New("workload: no submitters; add a trace, preset or generator")
	}
	return &sc, nil
}
