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
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// attemptRun is one attempt, run in its own goroutine.
type attemptRun struct {
	l       *loop
	i       int
	s       *trialState
	rec     *store.TrialRecord
	lastTry bool
}

// reserved are trial-folder names the runner writes; a trial's own files of these names are
// kept under artifacts/ instead.
var reserved = map[string]bool{"trial.json": true, "params.json": true, "stdout.log": true, "stderr.log": true}

func (a *attemptRun) run(ctx context.Context) {
	r, t := a.l.r, a.s.t
	n := len(a.rec.Attempts) + 1
	now := time.Now()
	a.rec.Attempts = append(a.rec.Attempts, store.Attempt{N: n, Started: now})
	att := &a.rec.Attempts[len(a.rec.Attempts)-1]
	if a.rec.Started == nil {
		a.rec.Started = &now
	}
	a.rec.Finished, a.rec.ExitCode, a.rec.Reason = nil, nil, ""

	exit := a.execute(ctx, n)

	end := time.Now()
	att.Finished = end
	code := exit.Code
	att.ExitCode, att.Reason = &code, exit.Reason
	a.rec.ExitCode, a.rec.Reason, a.rec.Live = &code, exit.Reason, nil
	if exit.Err != nil {
		att.ExitCode, a.rec.ExitCode = nil, nil
		att.Reason = exit.Err.Error()
		a.rec.Reason = att.Reason
	}

	kind := evExited
	var retryIn time.Duration
	switch {
	case a.s.killed.Load():
		a.rec.Status, a.rec.Reason = store.Killed, "killed"
	case t.Service && a.s.stopping:
		a.rec.Status, a.rec.Reason = store.Succeeded, "stopped after its dependants ended"
	case exit.Err == nil && exit.Code == 0:
		a.rec.Status = store.Succeeded
	case !a.lastTry:
		a.rec.Status = store.Pending
		retryIn = backoff(time.Duration(t.Backoff), n)
		a.rec.Reason = fmt.Sprintf("%s; retrying in %s", reasonOf(exit), retryIn)
		kind = evRetry
	default:
		a.rec.Status, a.rec.Reason = store.Failed, reasonOf(exit)
	}
	if a.rec.Status.Final() {
		a.rec.Finished = &end
	}
	if err := r.Runs.WriteTrial(ctx, a.rec); err != nil {
		// The record is the journal: without it resume would redo the trial. Say so loudly.
		r.Log.Error("record trial", "trial", t.Name, "err", err)
	}
	a.l.events <- event{i: a.i, kind: kind, rec: a.rec, retryIn: retryIn}
}

func reasonOf(e Exit) string {
	switch {
	case e.Err != nil:
		return e.Err.Error()
	case e.Reason != "":
		return e.Reason
	default:
		return fmt.Sprintf("exit status %d", e.Code)
	}
}

func backoff(base time.Duration, attempt int) time.Duration {
	if base <= 0 {
		base = time.Second
	}
	d := base << (attempt - 1)
	if d > time.Minute || d <= 0 {
		d = time.Minute
	}
	return d
}

// execute prepares the attempt folder, runs the attempt and collects its outputs into the store.
func (a *attemptRun) execute(ctx context.Context, n int) Exit {
	r, t, run := a.l.r, a.s.t, a.l.m.RunID
	dir := filepath.Join(r.WorkRoot, run, t.Name, strconv.Itoa(n))
	att := &Attempt{
		RunID: run, Trial: *t, N: n, Dir: dir,
		OutputDir:  filepath.Join(dir, "out"),
		StdoutPath: filepath.Join(dir, "stdout.log"),
		StderrPath: filepath.Join(dir, "stderr.log"),
		Workdir:    r.workdir(t),
	}
	if err := os.RemoveAll(dir); err != nil {
		return Exit{Err: fmt.Errorf("prepare attempt folder: %w", err)}
	}
	if err := os.MkdirAll(att.OutputDir, 0o755); err != nil {
		return Exit{Err: fmt.Errorf("prepare attempt folder: %w", err)}
	}
	paramsPath := filepath.Join(dir, "params.json")
	if err := writeParams(paramsPath, t.Params, t.Seed); err != nil {
		return Exit{Err: fmt.Errorf("write params.json: %w", err)}
	}
	att.Env = trialEnv(att, paramsPath)

	if n > 1 || len(a.rec.Attempts) > 1 {
		a.clearOutputs(ctx)
	}
	proc, err := r.Backend.Start(ctx, att)
	if err != nil {
		a.collect(ctx, att, paramsPath, false)
		return Exit{Code: -1, Err: err}
	}
	a.rec.Status = store.Running
	if d, ok := proc.(ImageDigester); ok {
		a.rec.ImageDigest = d.ImageDigest()
	}
	a.rec.Live = &store.Live{Host: r.Host, Attempt: n, Handle: proc.Handle(), Dir: dir}
	if err := r.Runs.WriteTrial(ctx, a.rec); err != nil {
		r.Log.Error("record trial", "trial", t.Name, "err", err)
	}
	a.l.events <- event{i: a.i, kind: evStarted, proc: proc}
	if h, ok := proc.(Healthier); ok && hasHealthCheck(t, proc) {
		go func() {
			if h.WaitHealthy(ctx) == nil {
				a.l.events <- event{i: a.i, kind: evHealthy}
			}
		}()
	}
	var timedOut atomic.Bool
	if t.Timeout > 0 {
		timer := time.AfterFunc(time.Duration(t.Timeout), func() {
			timedOut.Store(true)
			_ = proc.Stop(r.StopGrace)
		})
		defer timer.Stop()
	}
	exit := proc.Wait()
	if d, ok := proc.(ImageDigester); ok && a.rec.ImageDigest == "" {
		// A cluster knows the digest only once a node has pulled the image.
		a.rec.ImageDigest = d.ImageDigest()
	}
	if timedOut.Load() && !a.s.killed.Load() {
		exit.Reason = fmt.Sprintf("timed out after %s", time.Duration(t.Timeout))
		if exit.Code == 0 {
			exit.Code = -1
		}
	}
	stored := false
	if s, ok := proc.(OutputStorer); ok {
		stored = s.OutputsStored()
	}
	if err := a.collect(ctx, att, paramsPath, stored); err != nil && exit.Err == nil {
		// Outputs that did not reach the store make the attempt a failure: its result is lost.
		exit.Err = fmt.Errorf("collect outputs: %w", err)
	}
	return exit
}

// clearOutputs removes what an earlier attempt stored, so the trial folder holds one attempt.
func (a *attemptRun) clearOutputs(ctx context.Context) {
	b := a.l.r.Runs.Blob
	prefix := store.TrialKey(a.l.m.RunID, a.s.t.Name, "") + "/"
	var keys []string
	_ = b.List(ctx, prefix, func(in store.Info) error {
		if in.Key != prefix+"trial.json" {
			keys = append(keys, in.Key)
		}
		return nil
	})
	for _, k := range keys {
		_ = b.Delete(ctx, k)
	}
}

// collect moves the attempt's outputs into the store: metrics (with ::metric lines from
// stdout appended), result, artifacts, logs and params. When stored, an executor has put them
// there already (OutputStorer): only what the attempt folder holds is uploaded, and stdout,
// which the executor scanned, is not scanned again.
func (a *attemptRun) collect(ctx context.Context, att *Attempt, paramsPath string, stored bool) error {
	b := a.l.r.Runs.Blob
	key := func(name string) string { return store.TrialKey(att.RunID, att.Trial.Name, name) }
	var errs []error
	if !stored {
		if err := track.AppendStdoutMetrics(att.StdoutPath, filepath.Join(att.OutputDir, "metrics.jsonl")); err != nil {
			errs = append(errs, err)
		}
	}
	err := filepath.WalkDir(att.OutputDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return nil // sockets, fifos and links stay behind
		}
		rel, err := filepath.Rel(att.OutputDir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if reserved[rel] {
			rel = path.Join("artifacts", rel)
		}
		if err := store.ValidKey(key(rel)); err != nil {
			errs = append(errs, fmt.Errorf("output %s: %w", rel, err))
			return nil
		}
		if err := store.PutFile(ctx, b, key(rel), p); err != nil {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	for name, p := range map[string]string{"stdout.log": att.StdoutPath, "stderr.log": att.StderrPath, "params.json": paramsPath} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := store.PutFile(ctx, b, key(name), p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		_ = os.RemoveAll(att.Dir)
	}
	return errors.Join(errs...)
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
	env := []string{
		"JIKKEN_RUN_ID=" + a.RunID,
		"JIKKEN_TRIAL=" + t.Name,
		"JIKKEN_TRIAL_INDEX=" + strconv.Itoa(t.Index),
		"JIKKEN_ATTEMPT=" + strconv.Itoa(a.N),
		"JIKKEN_PARAMS=" + paramsPath,
		"JIKKEN_OUTPUT_DIR=" + a.OutputDir,
	}
	if t.Seed != nil {
		env = append(env, "JIKKEN_SEED="+strconv.FormatInt(*t.Seed, 10))
	}
	names := make([]string, 0, len(t.Params))
	for k := range t.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		env = append(env, "JIKKEN_PARAM_"+strings.ToUpper(k)+"="+ParamString(t.Params[k]))
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

// ParamString renders a param value for an environment variable or a table cell: strings as
// they are, numbers in their shortest form, anything else as JSON.
func ParamString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
