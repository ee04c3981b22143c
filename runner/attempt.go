package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/lease"
	"github.com/jikken-dev/jikken/live"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// attempt is one attempt's I/O, run in its own goroutine: prepare its folder, start it, wait for
// it, collect its outputs, and tell the core.
type attempt struct {
	d        *driver
	trial, n int
	// spec is the trial, as the core holds it (a growing plan has more than the manifest).
	spec  *experiment.Trial
	clear bool
	// adopted is set when the backend re-attaches to this attempt: its folder is kept.
	adopted bool
	// keep is the attempt whose stored logs are kept aside before this one replaces them.
	keep int
	// devices are the GPU units the core gave the attempt, shares the thousandths of each.
	devices []string
	shares  []int

	// lease is the attempt's lease of its devices (nil: none).
	lease *lease.Lease

	mu    sync.Mutex
	proc  Process
	ended chan struct{}
	// feed appends the attempt's metric points to the store while it runs (nil: not here).
	feed *live.Feeder
	// poll reads the points an executor next to the trial stores, for a pruner (nil: not here).
	poll *livePoller
}

// AttemptDir is the folder of attempt n of a trial while it runs, under the runner's work root.
func AttemptDir(workRoot, run, trial string, n int) string {
	return filepath.Join(workRoot, run, trial+"@"+strconv.Itoa(n))
}

// run prepares the attempt, starts it, and waits for its end and collects its outputs; for a
// process that notifies its end (Notifier), the goroutine returns once the attempt has started
// and another finishes it when the end comes.
func (a *attempt) run(ctx context.Context) {
	proc, att, ok := a.start(ctx)
	a.d.startDone()
	if !ok {
		return
	}
	if n, notifies := proc.(Notifier); notifies {
		n.Notify(func() { go a.finish(ctx, proc, att) })
		return
	}
	a.finish(ctx, proc, att)
}

// start prepares the attempt's folder and starts it, and reports whether it did; when it did
// not, the attempt has ended and the core has been told.
func (a *attempt) start(ctx context.Context) (Process, *Attempt, bool) {
	d := a.d
	r, t, run := d.r, a.spec, d.m.RunID
	dir := AttemptDir(r.WorkRoot, run, t.Name, a.n)
	fail := func(err error, notes []string) (Process, *Attempt, bool) {
		a.end(core.Exited{Trial: a.trial, Attempt: a.n, Code: -1, Err: err.Error(), Notes: notes})
		return nil, nil, false
	}
	if len(a.devices) > 0 && r.Leases != nil {
		l, held, err := r.Leases.Take(a.devices, a.shares, lease.Holder{Run: run, Trial: t.Name, Attempt: a.n})
		switch {
		case err != nil:
			return fail(err, nil)
		case len(held) > 0:
			a.end(core.DevicesBusy{Trial: a.trial, Attempt: a.n, Devices: held, At: time.Now()})
			return nil, nil, false
		}
		a.lease = l
	}
	if a.clear {
		if err := a.clearOutputs(ctx); err != nil {
			return fail(fmt.Errorf("remove the outputs of earlier attempts: %w", err), nil)
		}
	}
	var att *Attempt
	var err error
	switch {
	case a.adopted:
		if err = os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
			err = fmt.Errorf("prepare attempt folder: %w", err)
			break
		}
		att, err = attemptIn(dir, run, *t, a.n, true)
	case d.folders != nil && d.folders.take(dir):
		att, err = attemptIn(dir, run, *t, a.n, false)
	default:
		att, err = NewAttempt(dir, run, *t, a.n)
	}
	if err != nil {
		return fail(err, nil)
	}
	att.Workdir = r.workdir(t)
	att.Devices = a.devices
	if a.lease != nil {
		att.Hold = a.lease.Hold()
	}
	att.Queued = func(reason string) {
		d.send(core.Queued{Trial: a.trial, Attempt: a.n, Reason: reason, At: time.Now()})
	}
	var ck checkpointState
	if t.Checkpointed() {
		if ck, err = a.prepareCheckpoint(ctx, att); err != nil {
			return fail(err, nil)
		}
	}

	proc, err := r.Backend.Start(ctx, att)
	if err != nil {
		close(a.ended)
		notes, _ := a.collect(ctx, att, filepath.Join(dir, "params.json"), false)
		return fail(err, notes)
	}
	a.mu.Lock()
	a.proc = proc
	a.mu.Unlock()
	if g, ok := proc.(GroupLeader); ok && a.lease != nil && g.GroupLeader() > 1 {
		if err := a.lease.Bind(g.GroupLeader()); err != nil {
			r.Log.Warn("hand the GPU lease to the trial's processes; it ends with this runner", "trial", t.Name, "err", err)
		}
	}
	started := core.Started{Trial: a.trial, Attempt: a.n, Handle: proc.Handle(), Dir: dir}
	if t.Checkpointed() {
		started.Checkpoint = ck.local
		if s, ok := proc.(OutputStorer); ok && s.OutputsStored() {
			started.Checkpoint = ck.stored
		}
	}
	if dg, ok := proc.(ImageDigester); ok {
		started.ImageDigest = dg.ImageDigest()
	}
	if hc, ok := proc.(HealthChecked); ok && t.Health == nil {
		started.HealthCheck = hc.HasHealthCheck()
	}
	started.At = time.Now()
	d.send(started)
	a.feedLive(ctx, proc, att)
	return proc, att, true
}

// finish waits for the attempt's end, collects its outputs and tells the core how it ended.
func (a *attempt) finish(ctx context.Context, proc Process, att *Attempt) {
	exit := proc.Wait()
	close(a.ended)
	exited := core.Exited{Trial: a.trial, Attempt: a.n}
	if dg, ok := proc.(ImageDigester); ok {
		// A cluster knows the digest only once a node has pulled the image.
		exited.ImageDigest = dg.ImageDigest()
	}
	stored := false
	if s, ok := proc.(OutputStorer); ok {
		stored = s.OutputsStored()
	}
	liveNotes := a.stopLive(ctx)
	notes, err := a.collect(ctx, att, filepath.Join(att.Dir, "params.json"), stored)
	exited.Code, exited.Reason, exited.Notes = exit.Code, exit.Reason, append(liveNotes, notes...)
	exited.Interrupted = exit.Interrupted
	if att.Trial.Checkpointed() {
		exited.Checkpoint, exited.CheckpointAt, notes = a.checkpointAfter(ctx, att, stored)
		exited.Notes = append(exited.Notes, notes...)
	}
	switch {
	case exit.Err != nil:
		exited.Err = exit.Err.Error()
	case err != nil:
		// Outputs that did not reach the store make the attempt a failure: its result is lost.
		exited.Err = fmt.Sprintf("collect outputs: %v", err)
		if store.IsNoSpace(err) {
			exited.Err += fmt.Sprintf("; free space, then 'jikken resume %s'", a.d.m.RunID)
		}
	}
	if (a.d.r.Search != nil || len(a.d.r.Sequential) > 0 || len(a.d.r.Races) > 0) && exited.Err == "" {
		// A search decides from these; they are read as 'jikken results' reads them.
		v, err := results.FinalMetrics(ctx, a.d.r.Runs.Blob, att.RunID, att.Trial.Name)
		if err != nil {
			a.d.r.Log.Warn("read the trial's final metrics", "trial", att.Trial.Name, "err", err)
		}
		exited.Values = v
	}
	a.end(exited)
}

// end releases what the attempt holds and tells the core that it ended (Exited, stamped now) or
// could not start (DevicesBusy).
func (a *attempt) end(ev core.Event) {
	d := a.d
	d.mu.Lock()
	if d.attempts[a.trial] == a {
		delete(d.attempts, a.trial)
	}
	d.mu.Unlock()
	if a.lease != nil {
		if err := a.lease.Release(); err != nil {
			d.r.Log.Warn("release GPU leases", "trial", a.spec.Name, "err", err)
		}
	}
	if e, ok := ev.(core.Exited); ok {
		e.At = time.Now()
		ev = e
	}
	d.send(ev)
}

// NewAttempt prepares attempt n of trial t of run in the folder dir, which it empties or
// creates: the output folder, params.json, and the trial interface's environment. Workdir is
// left for the caller.
func NewAttempt(dir, run string, t experiment.Trial, n int) (*Attempt, error) {
	if err := prepareDir(dir); err != nil {
		return nil, fmt.Errorf("prepare attempt folder: %w", err)
	}
	return attemptIn(dir, run, t, n, false)
}

// attemptIn is NewAttempt in a folder that is ready: one holding nothing but an empty out/
// folder, or, when adopted, the folder where an earlier runner's attempt still writes its logs
// and outputs (the slurm backend's jobs), kept as it is.
func attemptIn(dir, run string, t experiment.Trial, n int, adopted bool) (*Attempt, error) {
	att := &Attempt{
		RunID: run, Trial: t, N: n, Dir: dir,
		OutputDir:  filepath.Join(dir, "out"),
		StdoutPath: filepath.Join(dir, "stdout.log"),
		StderrPath: filepath.Join(dir, "stderr.log"),
	}
	paramsPath := filepath.Join(dir, "params.json")
	if _, err := os.Stat(paramsPath); err != nil || !adopted {
		// An adopted attempt may be reading the one its runner wrote: it is left alone.
		if err := writeParams(paramsPath, t.Params, t.Seed); err != nil {
			return nil, fmt.Errorf("write params.json: %w", err)
		}
	}
	att.Env = trialEnv(att, paramsPath)
	return att, nil
}

// prepareDir makes an empty attempt folder with its out/ folder inside.
func prepareDir(dir string) error {
	err := os.Mkdir(dir, 0o755)
	switch {
	case errors.Is(err, fs.ErrExist):
		// Left by an attempt of the same number that a killed runner started.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		err = os.Mkdir(dir, 0o755)
	case errors.Is(err, fs.ErrNotExist):
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	return os.Mkdir(filepath.Join(dir, "out"), 0o755)
}

func (a *attempt) stop(grace time.Duration, signal string) {
	a.mu.Lock()
	p := a.proc
	a.mu.Unlock()
	if p != nil {
		go func() {
			stop := p.Stop
			if w, ok := p.(Warner); ok && signal != "" && signal != "TERM" {
				stop = func(grace time.Duration) error { return w.StopWith(signal, grace) }
			}
			if err := stop(grace); err != nil {
				a.d.r.Log.Warn("stop trial", "trial", a.spec.Name, "err", err)
			}
		}()
	}
}

// watchHealth runs the attempt's health check until it passes, cannot pass, the attempt ends or
// the deadline comes (then the core's own timer decides); once it has passed, it goes on
// probing while the attempt runs, where the backend can (liveness).
func (a *attempt) watchHealth(deadline time.Time) {
	a.mu.Lock()
	p := a.proc
	a.mu.Unlock()
	h, ok := p.(Healthier)
	if !ok {
		a.d.send(core.Unhealthy{Trial: a.trial, Attempt: a.n, Reason: "the " + a.d.r.Backend.Name() + " backend cannot check health", At: time.Now()})
		return
	}
	go func() {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		ctx, stop := a.whileRunning(ctx)
		defer stop()
		err := h.WaitHealthy(ctx)
		switch {
		case err == nil:
			a.d.send(core.Healthy{Trial: a.trial, Attempt: a.n, At: time.Now()})
			if l, ok := p.(LivenessWatcher); ok {
				a.watchLiveness(l)
			}
		case ctx.Err() != nil || errors.Is(err, ErrAttemptEnded):
			// The deadline is the core's; an attempt that ended reports its exit.
		default:
			a.d.send(core.Unhealthy{Trial: a.trial, Attempt: a.n, Reason: err.Error(), At: time.Now()})
		}
	}()
}

// watchLiveness probes a healthy attempt until it ends, and reports it unhealthy when its
// probes keep failing: the core restarts or fails it as its restart policy says.
func (a *attempt) watchLiveness(l LivenessWatcher) {
	ctx, stop := a.whileRunning(context.Background())
	defer stop()
	err := l.WatchLiveness(ctx)
	if err != nil && ctx.Err() == nil && !errors.Is(err, ErrAttemptEnded) {
		a.d.send(core.Unhealthy{Trial: a.trial, Attempt: a.n, Reason: err.Error(), At: time.Now()})
	}
}

// whileRunning returns a context that is done when parent is or when the attempt ends, so a
// health check does not outlive the attempt it watches.
func (a *attempt) whileRunning(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-a.ended:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// clearOutputs removes what earlier attempts stored, so the trial folder holds one attempt's
// outputs; the logs of attempt keep are moved to attempts/<keep>/ rather than removed, and each
// attempt's live metrics (live/<n>/) are kept.
func (a *attempt) clearOutputs(ctx context.Context) error {
	b := a.d.r.Runs.Blob
	run, trial := a.d.m.RunID, a.spec.Name
	prefix := store.TrialKey(run, trial, "") + "/"
	var keys []string
	err := b.List(ctx, prefix, func(in store.Info) error {
		rel := strings.TrimPrefix(in.Key, prefix)
		if rel != "trial.json" && !strings.HasPrefix(rel, "attempts/") && !strings.HasPrefix(rel, "live/") && !strings.HasPrefix(rel, "checkpoint/") {
			keys = append(keys, in.Key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		rel := strings.TrimPrefix(k, prefix)
		if a.keep > 0 && (rel == "stdout.log" || rel == "stderr.log") {
			dst := store.TrialKey(run, trial, path.Join("attempts", strconv.Itoa(a.keep), rel))
			if err := store.Move(ctx, b, k, dst); err != nil {
				return err
			}
			continue
		}
		if err := b.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// collect moves the attempt's outputs into the store: metrics (with ::metric lines from
// stdout appended), result, artifacts, logs and params. When stored, an executor has put them
// there already (OutputStorer): only what the attempt folder holds is uploaded, and stdout,
// which the executor scanned, is not scanned again. It returns notes on what it left out.
func (a *attempt) collect(ctx context.Context, att *Attempt, paramsPath string, stored bool) ([]string, error) {
	b := a.d.r.Runs.Blob
	key := func(name string) string { return store.TrialKey(att.RunID, att.Trial.Name, name) }
	var errs []error
	if !stored {
		if st, err := os.Stat(att.StdoutPath); err == nil && st.Size() > 0 {
			if err := track.AppendStdoutMetrics(att.StdoutPath, filepath.Join(att.OutputDir, "metrics.jsonl")); err != nil {
				errs = append(errs, err)
			}
		}
	}
	notes, err := store.PutOutputs(ctx, b, att.RunID, att.Trial.Name, att.OutputDir, true)
	if err != nil {
		errs = append(errs, err)
	}
	for _, f := range [...]struct{ name, path string }{{"stdout.log", att.StdoutPath}, {"stderr.log", att.StderrPath}, {"params.json", paramsPath}} {
		if err := store.PutFile(ctx, b, key(f.name), f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 && (a.d.folders == nil || !a.d.folders.give(att.Dir)) {
		removeAttemptDir(att.Dir)
	}
	return notes, errors.Join(errs...)
}

// removeAttemptDir removes an attempt folder whose files went to the store: usually only its
// empty folders are left.
func removeAttemptDir(dir string) {
	if rmdir(filepath.Join(dir, "out")) != nil || rmdir(dir) != nil {
		_ = os.RemoveAll(dir)
	}
}

// rmdir removes an empty folder with one system call (os.Remove tries unlink first).
func rmdir(dir string) error {
	if runtime.GOOS == "windows" {
		return os.Remove(dir)
	}
	return syscall.Rmdir(dir)
}

func writeParams(p string, params map[string]any, seed *int64) error {
	out := make(map[string]any, len(params)+1)
	for k, v := range params {
		out[k] = v
	}
	if seed != nil {
		if _, taken := out["seed"]; !taken {
			out["seed"] = *seed
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, append(b, '\n'), 0o644)
}

// trialEnv is the trial interface: JIKKEN_* variables, then the trial's own env.
func trialEnv(a *Attempt, paramsPath string) []string {
	t := a.Trial
	env := make([]string, 0, 7+len(t.Params)+len(t.Env))
	env = append(env,
		"JIKKEN_RUN_ID="+a.RunID,
		"JIKKEN_TRIAL="+t.Name,
		"JIKKEN_TRIAL_INDEX="+strconv.Itoa(t.Index),
		"JIKKEN_ATTEMPT="+strconv.Itoa(a.N),
		"JIKKEN_PARAMS="+paramsPath,
		"JIKKEN_OUTPUT_DIR="+a.OutputDir,
	)
	if t.Seed != nil {
		env = append(env, "JIKKEN_SEED="+strconv.FormatInt(*t.Seed, 10))
	}
	names := make([]string, 0, len(t.Params))
	for k := range t.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := experiment.ParamString(t.Params[k])
		if len(v) > experiment.MaxEnvParam {
			continue // no program could start with it; the trial reads it from params.json
		}
		env = append(env, experiment.ParamEnv(k)+"="+v)
	}
	keys := make([]string, 0, len(t.Env))
	for k := range t.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+t.Env[k])
	}
	return env
}
