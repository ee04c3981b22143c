package runner

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/jikken-dev/jikken/store"
)

// Descriptor is what a backend declares about itself, registered by its own package (Register,
// from an init function) so that the commands know every backend without naming any: its
// name, its settings and their flags, what it can do, and how to make it.
type Descriptor struct {
	// Name is the --backend value, recorded with each run.
	Name string
	// Default marks the backend of 'jikken run' without --backend (one only).
	Default bool
	// Settings returns a new, zero settings value for Open: a pointer to a struct whose tagged
	// fields are the backend's settings, each spelt once. Tags: `flag:"name"` is its flag
	// (string, bool, int, float64 or []string), `help:"..."` the flag's help; `record:"key"`
	// marks a setting the run records (Backend's Settings method returns it under key), which
	// commands acting on a recorded run read from there instead of offering the flag; `was:"key"`
	// is a key earlier versions recorded it under, still read. nil: no settings.
	Settings func() any
	// Caps are what the backend can do beyond the Backend contract; backendtest checks each.
	Caps Capabilities
	// Noun names one of the objects DeleteRun counts ("Job", "container"), for 'jikken rm'.
	Noun string
	// LostLog says why the store can lack the log of an attempt that ran ("" for a generic
	// reason), for 'jikken logs'.
	LostLog string
	// Open makes the backend from env and the settings Settings returned, filled from flags
	// and the run's record. A setting whose value makes no sense is a *SettingError.
	Open func(ctx context.Context, env Env, settings any) (Backend, error)
	// Export, when set, says how the commands treat the runs this backend exports for another
	// engine to run (jikken export); nil: it exports none.
	Export *Export
}

// Export is what a backend declares about the runs it exports: jikken records such a run, and
// another engine (Argo, for the kubernetes backend) runs it, so no jikken runner holds it;
// the commands show the engine's view of it and refuse to run or stop it themselves.
type Export struct {
	// Backend is the backend name an exported run's manifest records ("argo"); no runner opens
	// it.
	Backend string
	// Engine names what runs an exported run, for messages ("Argo").
	Engine string
	// Workflow is the engine's name for an exported run, from its id and the backend settings
	// its manifest records.
	Workflow func(run string, recorded map[string]string) string
	// Show is the engine's command that shows a workflow ("argo get NAME"); Manage are those
	// that run it again or stop it.
	Show   func(workflow string) string
	Manage []string
	// State asks the engine how a workflow stands. It gives up soon: status asks while it
	// prints, and must not hang on an unreachable cluster.
	State func(ctx context.Context, recorded map[string]string, workflow string) (ExportState, error)
}

// ExportState is how an exported run stands, as its engine says.
type ExportState struct {
	// Status is the run's final status once the engine says it ended (Succeeded or Failed),
	// else "": the run's own state stands.
	Status store.Status
	// Note says where the workflow stands, in the engine's words.
	Note string
}

// ExportOf returns the export whose runs record backend as theirs, or nil when backend names
// no export (a backend that runs its trials itself, or one this jikken lacks).
func ExportOf(backend string) *Export {
	for _, d := range Descriptors() {
		if d.Export != nil && d.Export.Backend == backend {
			return d.Export
		}
	}
	return nil
}

// Capabilities are the optional behaviour a backend declares. Each names the interface its
// backend or its processes implement, so that runner/backendtest runs that part of the contract.
type Capabilities struct {
	// OnThisHost: trials run on this machine and share its cores, memory and GPUs, which the
	// runner then divides (the backend may still say otherwise per engine: OnThisHost()).
	OnThisHost bool
	// Images: trials' images are honoured (containers); without it a trial's image is ignored
	// and 'jikken run' says so.
	Images bool
	// Adopts: a resumed runner re-attaches to attempts an earlier one left running (Adopter).
	Adopts bool
	// Notifies: processes tell their end without a goroutine each (Notifier).
	Notifies bool
	// StoresOutputs: processes put their outputs in the store themselves, through jikken
	// trial-exec (OutputStorer).
	StoresOutputs bool
	// HealthChecks: processes run a trial's health check (Healthier).
	HealthChecks bool
	// DeletesRuns: the backend deletes what it keeps of a run (RunDeleter), counting Noun.
	DeletesRuns bool
	// StartLimit: the backend caps concurrent Starts (StartLimiter).
	StartLimit bool
	// ImageDigests: processes report the digest of the image they run (ImageDigester).
	ImageDigests bool
}

// Env is what every backend is made with, from the command that opens it.
type Env struct {
	// Store is the run's store, opened by the command.
	Store store.Blob
	// Executable is the jikken binary that trials may call ($JIKKEN_BIN) and that runs
	// trial-exec; "" when the process is not a jikken binary (tests).
	Executable string
	// Log receives the backend's warnings and progress messages (the command's stderr).
	Log io.Writer
	// Jobs is the run's -j cap (0 for commands that start no trial).
	Jobs int
	// NoEnforce runs trials with cpu or memory limits even where nothing can enforce them.
	NoEnforce bool
}

// SettingError is a backend setting whose value makes no sense; the command reports it as a
// usage error before anything is recorded or contacted.
type SettingError struct{ Msg string }

func (e *SettingError) Error() string { return e.Msg }

// RunDeleter is implemented by backends that delete what they keep of a run (Jobs, containers
// and networks) and return how many of their Noun went.
type RunDeleter interface {
	DeleteRun(ctx context.Context, runID string) (int, error)
}

var registry = struct {
	sync.Mutex
	byName map[string]Descriptor
}{byName: map[string]Descriptor{}}

// Register makes a backend known to the commands. It panics on a second backend of the same
// name, as a program that links two cannot tell which one a run means.
func Register(d Descriptor) {
	registry.Lock()
	defer registry.Unlock()
	if d.Name == "" || d.Open == nil {
		panic("runner.Register: a backend needs a name and Open")
	}
	if _, dup := registry.byName[d.Name]; dup {
		panic(fmt.Sprintf("runner.Register: backend %q registered twice", d.Name))
	}
	registry.byName[d.Name] = d
}

// Lookup returns the registered backend name.
func Lookup(name string) (Descriptor, bool) {
	registry.Lock()
	defer registry.Unlock()
	d, ok := registry.byName[name]
	return d, ok
}

// Descriptors returns the registered backends: the default first, then by name.
func Descriptors() []Descriptor {
	registry.Lock()
	defer registry.Unlock()
	out := make([]Descriptor, 0, len(registry.byName))
	for _, d := range registry.byName {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Default != out[j].Default {
			return out[i].Default
		}
		return out[i].Name < out[j].Name
	})
	return out
}
