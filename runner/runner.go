package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/lease"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/runner/plan"
	"github.com/jikken-dev/jikken/runner/raceplan"
	"github.com/jikken-dev/jikken/runner/seqplan"
	"github.com/jikken-dev/jikken/store"
)

// Runner runs the trials of one run: it drives a core.Core with a Backend, the store and real
// time.
type Runner struct {
	Backend Backend
	Runs    store.Runs
	// Jobs caps how many trials run at once; services do not count against it.
	Jobs     int
	FailFast bool
	// WorkRoot holds attempt folders while they run.
	WorkRoot string
	// Workdir is where trials run unless they set workdir: the experiment's folder or its
	// materialised code snapshot.
	Workdir string
	Host    string
	// OnEvent, when set, is told of every change of a trial's state once the store holds it,
	// from one goroutine.
	OnEvent func(Event)
	Log     *slog.Logger
	// StopGrace is how long a stopped trial gets between SIGTERM and SIGKILL (default 5s).
	StopGrace time.Duration
	// Capacity, when set, is what the host offers: trials start when their resources fit,
	// and each GPU attempt is given devices of its own (backends that run trials on this host
	// or one engine; a cluster places trials itself).
	Capacity *core.Capacity
	// Leases, when set, keeps the runs on this host from using the same GPUs at once.
	Leases *lease.Book
	// Admitted is set when the command has already decided that the plan can run here (Admit,
	// with the same Backend and Capacity): Run does not ask the backend again.
	Admitted bool
	// LiveEvery is how often the new metric points of running attempts are appended to the
	// store's live chunks (default DefaultLiveEvery; negative: never). Attempts whose executor
	// stores their outputs (OutputStorer) append their own; for a search's pruner, the runner
	// reads those back this often (default DefaultLivePoll).
	LiveEvery time.Duration
	// Search, when set, grows the plan with the trials of the experiment's search block (see
	// package plan): on a resume, those an earlier runner added are rebuilt from their records.
	Search *experiment.Search
	// Sequential, when set, are the run's matrices whose seeds grow until their comparison is
	// decided (package seqplan).
	Sequential []experiment.Sequential
	// Races, when set, are the run's raced matrices (package raceplan).
	Races []experiment.Race
	// Keep names trials whose final record stands, failed or not (only a killed one runs
	// again): the trials of the plan before 'jikken extend' added to it, which it does not run.
	Keep map[string]bool
}

// ErrUnfit is returned (wrapped) when trials ask for more than the host has.
var ErrUnfit = errors.New("trials ask for more than this host has")

// Event reports a change in a run.
type Event struct {
	Trial   string
	Status  store.Status
	Attempt int
	Reason  string
	Counts  Counts
}

// Counts are the run's trials by state.
type Counts = core.Counts

// Summary is how a run ended.
type Summary struct {
	RunID       string
	Status      store.Status
	Trials      []*store.TrialRecord // in plan order; nil where a trial never started
	Counts      Counts
	Interrupted bool
	// Stopped is why a search ended before its budget as a failure (its trials logged no
	// objective), or ""; StoppedField is the experiment's field at fault, when it is.
	Stopped, StoppedField string
}

// ErrTrialsFailed is returned (wrapped) when the run ended with trials that did not succeed.
var ErrTrialsFailed = errors.New("some trials did not succeed")

// ErrStore is returned (wrapped) when the run stopped because the store could not be written.
var ErrStore = errors.New("the store cannot be written")

// Run runs the trials of m that have not succeeded in prior (the records of an earlier runner
// of the same run, for resume), and returns when every trial has ended or ctx is cancelled.
func (r *Runner) Run(ctx context.Context, m *store.Manifest, prior map[string]*store.TrialRecord) (*Summary, error) {
	if r.Jobs < 1 {
		r.Jobs = 1
	}
	if r.StopGrace == 0 {
		r.StopGrace = 5 * time.Second
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	if r.Host == "" {
		r.Host = hostname()
	}
	planner, added, err := r.planner(m, prior)
	if err != nil {
		return nil, err
	}
	trials := append(slices.Clip(m.Trials), added...)
	var kept map[string]bool
	if planner != nil {
		kept = map[string]bool{}
		for _, t := range added {
			kept[t.Name] = true
		}
	}
	if !r.Admitted {
		check := trials
		if r.Search != nil {
			ex, err := r.Search.Example()
			if err != nil {
				return nil, err
			}
			check = append(slices.Clip(trials), ex)
		}
		if err := Admit(ctx, r.Backend, check, r.Capacity); err != nil {
			return nil, err
		}
	}
	r.Backend.Plan(trials)
	if err := r.reapOrphans(ctx, m.RunID, false); err != nil {
		return nil, fmt.Errorf("stop what an earlier runner left running: %w", err)
	}
	var adopted map[string]int
	if a, ok := r.Backend.(Adopter); ok {
		adopted = a.Adopted(m.RunID)
	}
	r.sweep(ctx, m.RunID, prior, adopted)
	curves, err := r.searchCurves(ctx, m.RunID, prior)
	if err != nil {
		return nil, err
	}
	if len(r.Keep) > 0 {
		if kept == nil {
			kept = map[string]bool{}
		}
		maps.Copy(kept, r.Keep)
	}
	c := core.New(core.Config{
		RunID: m.RunID, Backend: r.Backend.Name(), Host: r.Host,
		Trials: trials, Jobs: r.Jobs, FailFast: r.FailFast, Journal: prior, Capacity: r.Capacity,
		Adopted: adopted, Planner: planner, Curves: curves, Kept: kept, DeferAsk: true,
	})
	d := newDriver(r, m, c)
	return d.run(ctx)
}

// planner builds the planner of a run whose plan grows (a search, sequential seeds or a race:
// one at most), with the trials it added before, from prior; nil for a fixed plan.
func (r *Runner) planner(m *store.Manifest, prior map[string]*store.TrialRecord) (core.Planner, []experiment.Trial, error) {
	kinds := 0
	for _, on := range []bool{r.Search != nil, len(r.Sequential) > 0, len(r.Races) > 0} {
		if on {
			kinds++
		}
	}
	if kinds > 1 {
		return nil, nil, fmt.Errorf("a run can have one of a search, sequential seeds and a race, not several")
	}
	switch {
	case r.Search != nil:
		return plan.Resume(r.Search, plan.SettingsOf(m), prior)
	case len(r.Sequential) > 0:
		p, err := seqplan.New(m.File, m.Evaluated, r.Sequential)
		if err != nil {
			return nil, nil, err
		}
		return p, p.Resume(prior), nil
	case len(r.Races) > 0:
		p, err := raceplan.New(m.File, m.Evaluated, r.Races)
		if err != nil {
			return nil, nil, err
		}
		return p, p.Resume(prior), nil
	}
	return nil, nil, nil
}

// reapOrphans stops attempts an earlier runner of this run left behind (it was killed), or,
// when the run ends, processes its trials left behind.
func (r *Runner) reapOrphans(ctx context.Context, run string, atEnd bool) error {
	live, err := r.Backend.Live(ctx, run)
	if err != nil {
		return fmt.Errorf("find trials left running: %w", err)
	}
	what := "stopping trial left running by an earlier runner"
	if atEnd {
		what = "stopping processes a trial left running"
	}
	for _, lt := range live {
		r.Log.Info(what, "trial", lt.Trial, "attempt", lt.Attempt, "handle", lt.Handle)
		if err := r.Backend.StopLive(ctx, lt); err != nil {
			return fmt.Errorf("stop %s: %w", lt.Trial, err)
		}
	}
	return nil
}

// Admit decides once whether trials can run on b: the backend's own check (Checker), then
// whether each fits the capacity c the host offers (nil: no limit). Nothing has started when it
// refuses them.
func Admit(ctx context.Context, b Backend, trials []experiment.Trial, c *core.Capacity) error {
	if ch, ok := b.(Checker); ok {
		if err := ch.Check(ctx, trials); err != nil {
			return err
		}
	}
	return CheckFit(trials, c)
}

// CheckFit refuses trials that can never start on c (nil: no limit), with the numbers.
func CheckFit(trials []experiment.Trial, c *core.Capacity) error {
	bad := core.Unfit(trials, c)
	if len(bad) == 0 {
		return nil
	}
	more := ""
	if len(bad) > 5 {
		bad, more = bad[:5], fmt.Sprintf("\n  ... and %d more", len(bad)-5)
	}
	return fmt.Errorf("%w: nothing was started:\n  %s%s\nlower their resources, or run them where there is more (--backend kubernetes); 'jikken validate FILE --host' shows what this host has",
		ErrUnfit, strings.Join(bad, "\n  "), more)
}

// workdir resolves where trial t runs.
func (r *Runner) workdir(t *experiment.Trial) string {
	switch {
	case t.Workdir == "":
		return r.Workdir
	case filepath.IsAbs(t.Workdir):
		return t.Workdir
	default:
		return filepath.Join(r.Workdir, t.Workdir)
	}
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
