package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/jikken-dev/jikken/internal/version"
	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/snapshot"
	"github.com/jikken-dev/jikken/trial"
)

// The layout of a run in a store:
//
//	runs/<run>/manifest.json              what was run: sources, plan, code snapshot
//	runs/<run>/state.json                 the run's status, rewritten as it changes
//	runs/<run>/summary.json               the trials' final results, fresh while state.json names it (summary.go)
//	runs/<run>/lock                       held by the runner process while it works
//	runs/<run>/trials/<trial>/trial.json  the trial's record: the journal resume reads
//	runs/<run>/trials/<trial>/{params.json,metrics.jsonl,result.json,stdout.log,stderr.log,artifacts/...}

// Manifest records what a run is: written once before any trial starts.
type Manifest struct {
	RunID      string    `json:"run_id"`
	Experiment string    `json:"experiment"`
	File       string    `json:"file"`
	Form       string    `json:"form"`
	Created    time.Time `json:"created"`
	// Tool and Build name the jikken that wrote the manifest (see CreateManifest).
	Tool    string        `json:"tool"`
	Build   *version.Info `json:"build,omitempty"`
	Host    string        `json:"host"`
	User    string        `json:"user"`
	Backend string        `json:"backend"`
	Options RunOptions    `json:"options"`
	// Code is the exact code the run used: the experiment repository's commit plus, when the
	// working tree differed, a snapshot commit (and ghosts when a ghost repository is set).
	Code *snapshot.Snapshot `json:"code,omitempty"`
	// Reproduces names the RUN/TRIAL a 'jikken reproduce' run re-creates.
	Reproduces string            `json:"reproduces,omitempty"`
	Sources    map[string]string `json:"sources"`
	Evaluated  json.RawMessage   `json:"evaluated"`
	Trials     []trial.Trial     `json:"trials"`
	// Extensions are the times 'jikken extend' added trials to the run, oldest first; Sources,
	// Evaluated and Trials are then the grown plan's.
	Extensions []Extension `json:"extensions,omitempty"`
}

// Extension records one growth of a run's plan.
type Extension struct {
	At time.Time `json:"at"`
	// Was names the jikken that wrote the manifest before (Tool names the one that extended it).
	Was string `json:"was"`
	// From is how many trials the plan had; Added how many were added after them.
	From  int `json:"from"`
	Added int `json:"added"`
	// Seeds are the seeds added to every matrix with seeds (--seeds), or empty.
	Seeds string `json:"seeds,omitempty"`
	// Rerun are trials that ran before and run again after the added ones (they wait for them).
	Rerun []string `json:"rerun,omitempty"`
}

// RunOptions are the runner settings a run was started with; resume uses them again.
type RunOptions struct {
	Jobs     int  `json:"jobs"`
	FailFast bool `json:"fail_fast,omitempty"`
	// SearchAhead is how many trials a search suggests beyond those it runs at once
	// (runner/plan.Settings); runs created before it was recorded have none.
	SearchAhead int `json:"search_ahead,omitempty"`
	// InPlace runs trials in the working tree instead of a copy of the code snapshot.
	InPlace bool              `json:"in_place,omitempty"`
	ExtStr  map[string]string `json:"ext_str,omitempty"`
	TLAStr  map[string]string `json:"tla_str,omitempty"`
	// Backend holds what resume and kill need to find the run's trials again (the kubernetes
	// backend's namespace).
	Backend map[string]string `json:"backend_settings,omitempty"`
	// GPUs, CPUs and Memory restrict what of the host its trials may use (--gpus, --cpus,
	// --memory); NoEnforce runs limited trials where no cgroup can enforce the limits.
	GPUs      string  `json:"gpus,omitempty"`
	CPUs      float64 `json:"cpus,omitempty"`
	Memory    string  `json:"memory,omitempty"`
	NoEnforce bool    `json:"no_enforce,omitempty"`
}

// The trial records of the journal live in package record, a leaf the runner's core writes
// without linking the store; these names keep store.TrialRecord and its parts for the store's
// callers.
type (
	Status      = record.Status
	TrialRecord = record.Trial
	Attempt     = record.Attempt
	Compute     = record.Compute
	Live        = record.Live
)

// Trial and run statuses (see package record).
const (
	Pending    = record.Pending
	Running    = record.Running
	Succeeded  = record.Succeeded
	Failed     = record.Failed
	Skipped    = record.Skipped
	Killed     = record.Killed
	Stopped    = record.Stopped
	Pruned     = record.Pruned
	Eliminated = record.Eliminated
)

// RunState is the run's status as a whole.
type RunState struct {
	Status   Status         `json:"status"`
	Started  time.Time      `json:"started"`
	Finished *time.Time     `json:"finished,omitempty"`
	Counts   map[Status]int `json:"counts,omitempty"`
	Runner   *LockInfo      `json:"runner,omitempty"`
}

// LockInfo says which runner process holds a run.
type LockInfo struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// Runs reads and writes runs in the layout above.
type Runs struct {
	Blob Blob
}

// RunKey returns the key of a file of a run.
func RunKey(run, file string) string { return path.Join("runs", run, file) }

// TrialKey returns the key of a file of a trial.
func TrialKey(run, trial, file string) string { return path.Join("runs", run, "trials", trial, file) }

func (r Runs) putJSON(ctx context.Context, key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	return r.Blob.Put(ctx, key, bytes.NewReader(b), int64(len(b)))
}

func (r Runs) getJSON(ctx context.Context, key string, v any) error {
	b, err := ReadAll(ctx, r.Blob, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	return nil
}

// WriteManifest stores m, stamped and compacted as CreateManifest does.
func (r Runs) WriteManifest(ctx context.Context, m *Manifest) error {
	stamp(m)
	b, err := encodeManifest(m)
	if err != nil {
		return err
	}
	return r.Blob.Put(ctx, RunKey(m.RunID, "manifest.json"), bytes.NewReader(b), int64(len(b)))
}

// stamp sets the manifest's Tool and Build to this jikken: a manifest names the binary that
// wrote it, whatever the caller copied it from.
func stamp(m *Manifest) {
	in := version.Get()
	m.Tool, m.Build = "jikken "+in.String(), &in
}

// CreateManifest stores the manifest of a new run, failing rather than replacing the manifest
// of another run that got the same id. It sets m.Tool and m.Build to this jikken's version. A
// large plan is stored compact (see Expansion); m itself is left whole.
func (r Runs) CreateManifest(ctx context.Context, m *Manifest) error {
	stamp(m)
	b, err := encodeManifest(m)
	if err != nil {
		return err
	}
	if err := r.Blob.Create(ctx, RunKey(m.RunID, "manifest.json"), bytes.NewReader(b), int64(len(b))); err != nil {
		if errors.Is(err, ErrExists) {
			return fmt.Errorf("run %s already exists in %s; start the run again for a new id", m.RunID, r.Blob.Location())
		}
		return err
	}
	return nil
}

// Manifest reads the manifest of run, with its trials expanded again when it was stored
// compact.
func (r Runs) Manifest(ctx context.Context, run string) (*Manifest, error) {
	var sm storedManifest
	sm.Manifest = &Manifest{}
	if err := r.getJSON(ctx, RunKey(run, "manifest.json"), &sm); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("run %q: %w in %s; list runs with 'jikken runs'", run, ErrNotFound, r.Blob.Location())
		}
		return nil, err
	}
	m := sm.Manifest
	m.Trials = sm.Trials
	if sm.Expansion != nil {
		trials, err := sm.Expansion.expand(m)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", run, err)
		}
		m.Trials = trials
	}
	return m, nil
}

// CompactAbove is how many trials a stored manifest lists at most: a larger plan that is exactly
// what its evaluated experiment expands to is stored as that experiment (Evaluated, which holds
// the matrix) and an Expansion, so a million-trial matrix costs kilobytes, not a copy of every
// trial. Manifest.Trials, what everything reads, is always the whole list.
const CompactAbove = 1000

// Expander gives the trials an evaluated experiment expands to (file names it, for messages):
// what a compact manifest's Expansion stands for. The store knows nothing of experiments;
// package experiment registers the one Expander with SetExpander when it is linked, as
// database/sql drivers register. Without one, manifests are stored whole, and a compact one
// cannot be read.
type Expander func(file string, evaluated json.RawMessage) ([]trial.Trial, error)

var expander atomic.Pointer[Expander]

// SetExpander sets how the store expands an evaluated experiment into its trials (nil: it
// cannot).
func SetExpander(e Expander) {
	if e == nil {
		expander.Store(nil)
		return
	}
	expander.Store(&e)
}

// Expansion stands for a stored manifest's trials: expanding its Evaluated experiment again
// gives Count trials whose JSON has this SHA-256.
type Expansion struct {
	Count  int    `json:"count"`
	SHA256 string `json:"sha256"`
}

// storedManifest is the form of a Manifest in the store: Trials is left out when Expansion
// stands for it. (Its Trials field hides the embedded Manifest's in JSON.)
type storedManifest struct {
	*Manifest
	Trials    []trial.Trial `json:"trials,omitempty"`
	Expansion *Expansion    `json:"trials_expansion,omitempty"`
}

// encodeManifest returns m's stored form, indented.
func encodeManifest(m *Manifest) ([]byte, error) {
	sm := storedManifest{Manifest: m, Trials: m.Trials}
	if len(m.Trials) > CompactAbove {
		e, err := compact(m)
		if err != nil {
			return nil, err
		}
		if e != nil {
			sm.Trials, sm.Expansion = nil, e
		}
	}
	b, err := json.MarshalIndent(sm, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// compact returns the Expansion that stands for m's trials, or nil when expanding its
// Evaluated experiment does not give exactly them (a reproduce run keeps one trial of a plan).
func compact(m *Manifest) (*Expansion, error) {
	want, err := digest(m.Trials)
	if err != nil {
		return nil, err
	}
	expand := expander.Load()
	if expand == nil {
		return nil, nil
	}
	trials, err := (*expand)(m.File, m.Evaluated)
	if err != nil {
		return nil, nil
	}
	if got, err := digest(trials); err != nil || got != want {
		return nil, err
	}
	return &Expansion{Count: len(m.Trials), SHA256: want}, nil
}

// digest is the SHA-256 of the trials' JSON, streamed: no copy of a large plan is kept.
func digest(trials []trial.Trial) (string, error) {
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(trials); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// expand gives back the trials e stands for, checking they are the ones that were stored: a
// jikken whose expansion differs from the writer's must not run or report other trials.
func (e *Expansion) expand(m *Manifest) ([]trial.Trial, error) {
	expand := expander.Load()
	if expand == nil {
		return nil, fmt.Errorf("its manifest stores its %d trials as the expansion of its experiment, and this program cannot expand experiments (it does not link package experiment)", e.Count)
	}
	trials, err := (*expand)(m.File, m.Evaluated)
	if err != nil {
		return nil, fmt.Errorf("expand the stored plan: %w", err)
	}
	sum, err := digest(trials)
	if err != nil {
		return nil, err
	}
	if len(trials) != e.Count || sum != e.SHA256 {
		return nil, fmt.Errorf("its manifest stores its %d trials as the expansion of its experiment, and this jikken, %s, expands that to other trials than the one that wrote it, %s; read the run with that jikken",
			e.Count, version.String(), strings.TrimPrefix(m.Tool, "jikken "))
	}
	return trials, nil
}

// WriteState stores the run's state.
func (r Runs) WriteState(ctx context.Context, run string, s *RunState) error {
	return r.putJSON(ctx, RunKey(run, "state.json"), s)
}

// State reads the run's state.
func (r Runs) State(ctx context.Context, run string) (*RunState, error) {
	var s RunState
	if err := r.getJSON(ctx, RunKey(run, "state.json"), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// WriteTrial stores a trial record with its Tool set to this jikken's version (on a copy: the
// caller's record may be read concurrently).
func (r Runs) WriteTrial(ctx context.Context, rec *TrialRecord) error {
	return r.putJSON(ctx, TrialKey(rec.Run, rec.Name, "trial.json"), stamped(rec))
}

// stamped is a copy of rec naming this jikken as the one that wrote it.
func stamped(rec *TrialRecord) *TrialRecord {
	c := *rec
	c.Tool = "jikken " + version.String()
	return &c
}

// Trial reads one trial record.
func (r Runs) Trial(ctx context.Context, run, trial string) (*TrialRecord, error) {
	key := TrialKey(run, trial, "trial.json")
	b, err := ReadAll(ctx, r.Blob, key)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		// What a record written shortly before a machine crash can become (its data never
		// synced): as if never written, so the trial runs again on resume.
		return nil, fmt.Errorf("read %s: empty record: %w", key, ErrNotFound)
	}
	var rec TrialRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	return &rec, nil
}

// Trials reads every trial record of a run, keyed by trial name. Trials that never started have
// no record.
//
// With a DirLister it lists the trial folders (one request per 1,000 trials on S3) and reads
// each folder's trial.json, instead of listing every log, metric and artifact of the run. A trial
// is a single key segment under trials/ in both ways: TrialKey joins the name in as it is, so a
// name holding "/" lands deeper, where neither way finds it; a folder without trial.json (a
// trial being written, or being copied by 'store sync') is left out by both.
func (r Runs) Trials(ctx context.Context, run string) (map[string]*TrialRecord, error) {
	prefix := RunKey(run, "trials") + "/"
	dl, ok := r.Blob.(DirLister)
	if !ok || ValidDirPrefix(prefix) != nil {
		return r.trialsScan(ctx, run, prefix)
	}
	var names []string
	if err := dl.ListDirs(ctx, prefix, func(name string) error {
		names = append(names, name)
		return nil
	}); err != nil {
		return map[string]*TrialRecord{}, err
	}
	recs := make([]*TrialRecord, len(names))
	err := inParallel(len(names), func(i int) error {
		rec, err := r.Trial(ctx, run, names[i])
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		recs[i] = rec
		return err
	})
	out := map[string]*TrialRecord{}
	for i, rec := range recs {
		if rec != nil {
			out[names[i]] = rec
		}
	}
	return out, err
}

// trialsScan is Trials by listing every key under the run's trials/: for a Blob without
// DirLister.
func (r Runs) trialsScan(ctx context.Context, run, prefix string) (map[string]*TrialRecord, error) {
	out := map[string]*TrialRecord{}
	err := r.Blob.List(ctx, prefix, func(in Info) error {
		rest := strings.TrimPrefix(in.Key, prefix)
		name, file, ok := strings.Cut(rest, "/")
		if !ok || file != "trial.json" {
			return nil
		}
		rec, err := r.Trial(ctx, run, name)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		out[name] = rec
		return nil
	})
	return out, err
}

// RunIDs lists the ids of the runs in the store, oldest first (ids start with their time).
//
// A run counts once its manifest.json exists: 'store sync' writes the manifest last so that a
// run shows in the target only when complete, and a runner creates it before anything else.
// With a DirLister the run folders are listed (one request per 1,000 runs on S3) and each
// manifest is checked with a Stat, lookupConcurrency at a time; without one, every key under
// runs/ is listed, as before.
func (r Runs) RunIDs(ctx context.Context) ([]string, error) {
	dl, ok := r.Blob.(DirLister)
	if !ok {
		return r.runIDsScan(ctx)
	}
	var dirs []string
	if err := dl.ListDirs(ctx, "runs/", func(name string) error {
		dirs = append(dirs, name)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list runs in %s: %w", r.Blob.Location(), err)
	}
	has := make([]bool, len(dirs))
	err := inParallel(len(dirs), func(i int) error {
		_, err := r.Blob.Stat(ctx, RunKey(dirs[i], "manifest.json"))
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		has[i] = err == nil
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list runs in %s: %w", r.Blob.Location(), err)
	}
	var ids []string
	for i, id := range dirs {
		if has[i] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// runIDsScan is RunIDs by listing every key under runs/: for a Blob without DirLister.
func (r Runs) runIDsScan(ctx context.Context) ([]string, error) {
	var ids []string
	err := r.Blob.List(ctx, "runs/", func(in Info) error {
		rest := strings.TrimPrefix(in.Key, "runs/")
		id, file, ok := strings.Cut(rest, "/")
		if ok && file == "manifest.json" {
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list runs in %s: %w", r.Blob.Location(), err)
	}
	sort.Strings(ids)
	return ids, nil
}

// lookupConcurrency is how many reads RunIDs and Trials have in flight after listing folders:
// enough to hide S3 round trips, few enough not to flood a server.
const lookupConcurrency = 16

// inParallel calls fn(0) .. fn(n-1), lookupConcurrency at a time, and returns the first error;
// after an error no further call starts.
func inParallel(n int, fn func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(lookupConcurrency)
	var failed atomic.Bool
	for i := range n {
		if failed.Load() {
			break
		}
		g.Go(func() error {
			if failed.Load() {
				return nil
			}
			err := fn(i)
			if err != nil {
				failed.Store(true)
			}
			return err
		})
	}
	return g.Wait()
}

// Resolve turns what a user typed into a run id: a full id, a unique prefix of one, or
// "latest" (also "last") for the newest run.
func (r Runs) Resolve(ctx context.Context, ref string) (string, error) {
	ids, err := r.RunIDs(ctx)
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("no runs in %s; start one with 'jikken run FILE'", r.Blob.Location())
	}
	if ref == "latest" || ref == "last" {
		return r.newest(ctx, ids), nil
	}
	var match []string
	for _, id := range ids {
		if id == ref {
			return id, nil
		}
		if strings.HasPrefix(id, ref) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("no run %q in %s; list runs with 'jikken runs'", ref, r.Blob.Location())
	case 1:
		return match[0], nil
	}
	if len(match) > 5 {
		match = append(match[:5], "...")
	}
	return "", fmt.Errorf("%q matches several runs (%s); give more of the id", ref, strings.Join(match, ", "))
}

// newest returns the newest of ids. Ids sort by their start second; runs started in the same
// second are told apart by their manifests' creation times.
func (r Runs) newest(ctx context.Context, ids []string) string {
	last := ids[len(ids)-1]
	const stamp = len("20060102-150405")
	best, bestT := last, time.Time{}
	for i := len(ids) - 1; i >= 0 && len(ids[i]) >= stamp && len(last) >= stamp && ids[i][:stamp] == last[:stamp]; i-- {
		m, err := r.Manifest(ctx, ids[i])
		if err == nil && m.Created.After(bestT) {
			best, bestT = ids[i], m.Created
		}
	}
	return best
}

// ErrLocked is returned by Lock when another live runner holds the run.
var ErrLocked = errors.New("run is locked by another runner")

// Lock takes the run's lock for this process. A lock left by a dead process on this host is
// taken over; a live one, or one from another host, is refused (unless force).
func (r Runs) Lock(ctx context.Context, run string, me LockInfo, force bool) (release func(), err error) {
	key := RunKey(run, "lock")
	b, _ := json.Marshal(me)
	for try := 0; try < 2; try++ {
		err := r.Blob.Create(ctx, key, bytes.NewReader(b), int64(len(b)))
		if err == nil {
			return func() { _ = r.Blob.Delete(context.WithoutCancel(ctx), key) }, nil
		}
		if !errors.Is(err, ErrExists) {
			return nil, fmt.Errorf("lock run %s: %w", run, err)
		}
		old, rerr := ReadAll(ctx, r.Blob, key)
		if rerr != nil {
			continue // released between Create and read: try again
		}
		var holder LockInfo
		_ = json.Unmarshal(old, &holder)
		stale := holder.Host == me.Host && !processAlive(holder.PID)
		if !stale && !force {
			return nil, fmt.Errorf("%w: pid %d on %s since %s; wait for it, stop it with 'jikken kill %s', or pass --force if that runner is gone",
				ErrLocked, holder.PID, holder.Host, holder.Started.Format(time.RFC3339), run)
		}
		// Only remove the lock we judged stale, not one a concurrent taker just wrote.
		if cur, _ := ReadAll(ctx, r.Blob, key); bytes.Equal(cur, old) {
			_ = r.Blob.Delete(ctx, key)
		}
	}
	return nil, fmt.Errorf("lock run %s: %w: another runner took it just now", run, ErrLocked)
}

// LockHolder returns who holds the run's lock, if anyone.
func (r Runs) LockHolder(ctx context.Context, run string) (*LockInfo, error) {
	var li LockInfo
	if err := r.getJSON(ctx, RunKey(run, "lock"), &li); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return &li, nil
}

// HolderAlive reports whether the lock holder is a live process on this host.
func HolderAlive(li *LockInfo, host string) bool {
	return li != nil && li.Host == host && processAlive(li.PID)
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return signalZero(p) == nil
}
