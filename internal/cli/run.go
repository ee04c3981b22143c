package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/cmdutil/expflags"
	"github.com/jikken-dev/jikken/internal/version"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/plan"
	"github.com/jikken-dev/jikken/store"
)

type runOptions struct {
	f        *cmdutil.Factory
	file     string
	jobs     int
	backend  string
	detach   bool
	failFast bool
	inPlace  bool
	ghost    string
	output   string
	exp      expflags.Flags
	settings backendSettings
	host     hostSettings
	// autoJobs: neither -j nor $JIKKEN_JOBS set the cap, so the host's fit may (jobsForHost).
	autoJobs bool
}

func newRunCmd(f *cmdutil.Factory) *cobra.Command {
	o := &runOptions{f: f}
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run an experiment's trials and keep their results",
		Long: `Run evaluates the Jsonnet experiment FILE, checks it, records a run in the store
(the file's sources, the expanded plan, the code's git commit) and runs every trial on the
backend, at most -j at a time, honouring depends/after, retries and timeouts.

One failed trial does not stop the others (unless --fail-fast); the exit code is 3 when any
trial did not succeed. Ctrl-C stops the trials and records them; 'jikken resume RUN' runs what
did not succeed. Trials see JIKKEN_* variables and write metrics to $JIKKEN_OUTPUT_DIR.

In a git repository the exact code (commit, staged, unstaged and untracked changes) is recorded
first and the trials run in a copy of it, so you can keep editing while the sweep runs and
'jikken reproduce RUN/TRIAL' can re-create it later. --in-place runs in the working tree instead.

Without -j (or $JIKKEN_JOBS), the cap is the number of cores, except where trials run on this
host and every trial declares gpu, mig or cpu: then their resources limit what runs together,
and the cap is the most trials of one kind the host holds at once (every trial asks for one GPU
on an 8-GPU host: -j 8). A file in combu's form (an array of containers) starts every trial
whose dependencies allow at once, as combu does: the cap is the number of trials. 'jikken
validate FILE --host' shows the figures.`,
		Example: `  jikken run examples/optimize/experiment.jsonnet
  jikken run sweep.jsonnet -j 8 --ext-str dataset=cifar10
  jikken run sweep.jsonnet --detach && jikken status latest
  jikken run sweep.jsonnet --backend docker -j 4
  jikken run sweep.jsonnet --backend kubernetes --namespace ml --store s3://bucket/runs
  jikken run sweep.jsonnet --backend slurm --partition gpu --account lab42 --sbatch-arg=--constraint=a100
  jikken run sweep.jsonnet -o json | jq '.trials[] | select(.status != "succeeded")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			o.autoJobs = !cmd.Flags().Changed("jobs") && os.Getenv("JIKKEN_JOBS") == ""
			return runRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&o.jobs, "jobs", "j", defaultJobs(), "how many trials run at once, services not counted (default: the cores, or what the host holds of trials that declare resources; see above)")
	fl.StringVar(&o.backend, "backend", defaultBackend(), "where trials run: "+backendUsage())
	fl.BoolVar(&o.detach, "detach", false, "start the run in the background and print its id")
	fl.BoolVar(&o.failFast, "fail-fast", false, "stop the run when a trial fails for good")
	fl.BoolVar(&o.inPlace, "in-place", false, "run trials in the working tree instead of a copy of its snapshot")
	fl.StringVar(&o.ghost, "ghost-repo", os.Getenv("GIT_GHOST_REPO"), "also push the code snapshot to this ghost repository, for other machines ($GIT_GHOST_REPO)")
	cmdutil.FormatFlag(cmd, &o.output, "text", "json")
	o.exp.Add(cmd)
	o.settings.addFlags(cmd, true)
	o.host.addFlags(cmd, true)
	return cmd
}

func defaultJobs() int {
	if n := os.Getenv("JIKKEN_JOBS"); n != "" {
		if j, err := strconv.Atoi(n); err == nil && j > 0 {
			return j
		}
	}
	return max(1, runtime.NumCPU())
}

func runRun(ctx context.Context, o *runOptions) error {
	if o.jobs < 1 {
		return cmdutil.UsageError("-j must be at least 1")
	}
	opts, err := o.exp.Options(o.f)
	if err != nil {
		return err
	}
	exp, err := experiment.Load(o.file, opts)
	if err != nil {
		return invalidInput(err)
	}
	runID := runner.NewRunID(exp.Name, time.Now())
	if exp.UsesRunID {
		// combu's "UUID" literals become this run's id: evaluate again now that it is known.
		opts.RunID = runID
		if exp, err = experiment.Load(o.file, opts); err != nil {
			return err
		}
	}
	printWarnings(o.f.IO.ErrOut, exp.Warnings)
	blob, err := store.Open(ctx, o.f.StoreURL)
	if err != nil {
		return err
	}
	runs := store.Runs{Blob: blob}
	o.settings.Jobs, o.settings.NoEnforce = o.jobs, o.host.NoEnforce
	backend, err := openBackend(ctx, o.f, blob, o.backend, o.settings)
	if err != nil {
		return err
	}
	adm, err := admit(ctx, backend, checkedTrials(exp), o.host)
	if err != nil {
		return err
	}
	if o.autoJobs {
		if n, ok := defaultJobsFor(exp, adm.capacity); ok {
			o.jobs, o.settings.Jobs = n, n
		}
	}
	if n := countImages(exp.Trials); n > 0 && !descriptorOf(backend.Name()).Caps.Images && o.output == "text" {
		fmt.Fprintf(o.f.IO.ErrOut, "note: the %s backend runs the cmd of %d trials with an image on this machine; use --backend docker to run them in containers\n", backend.Name(), n)
	}
	code, err := codeSnapshot(ctx, exp.Dir, o.ghost)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	m := &store.Manifest{
		RunID: runID, Experiment: exp.Name, File: exp.Path, Form: exp.Form,
		Created: time.Now().UTC(), Host: host, User: currentUser(),
		Backend: backend.Name(),
		Options: store.RunOptions{Jobs: o.jobs, FailFast: o.failFast, InPlace: o.inPlace, ExtStr: opts.ExtStr, TLAStr: opts.TLAStr, Backend: recordOf(backend),
			GPUs: o.host.GPUs, CPUs: o.host.CPUs, Memory: o.host.Memory, NoEnforce: o.host.NoEnforce},
		Code: code, Sources: exp.Sources, Evaluated: exp.Evaluated, Trials: exp.Trials,
	}
	if exp.Search != nil {
		m.Options.SearchAhead = plan.Ahead
	}
	if err := runs.CreateManifest(ctx, m); err != nil {
		return fmt.Errorf("record run: %w", err)
	}
	if o.detach {
		return detach(o.f, runs, m, o.backend, o.settings, o.host.GPUsBusy)
	}
	return execute(ctx, o.f, runs, m, backend, execOptions{jobs: o.jobs, failFast: o.failFast, output: o.output, host: o.host, admitted: adm, search: exp.Search})
}

// invalidInput makes an experiment that does not validate a usage error (exit 2): nothing
// started, and the message names the file, line and field to fix.
func invalidInput(err error) error {
	var verr *experiment.ValidationError
	if errors.As(err, &verr) {
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
	}
	return err
}

func countImages(trials []experiment.Trial) int {
	n := 0
	for _, t := range trials {
		if t.Image != "" {
			n++
		}
	}
	return n
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

type execOptions struct {
	jobs     int
	failFast bool
	force    bool
	output   string
	host     hostSettings
	// admitted is what the command decided about the plan already (nil: execute decides).
	admitted *admission
	// search is the run's search block (nil: none); execute reads it from the manifest when
	// it is not given.
	search *experiment.Search
	// keep names the trials whose final record stands (extend: the run's trials before it).
	keep map[string]bool
}

// execute runs (or resumes) a recorded run in this process and reports how it ended.
func execute(ctx context.Context, f *cmdutil.Factory, runs store.Runs, m *store.Manifest, backend runner.Backend, eo execOptions) error {
	ios := f.IO
	workdir, codeDone, err := codeWorkdir(ctx, m, workRoot(runs.Blob))
	if err != nil {
		return err
	}
	finished := false
	defer func() { codeDone(finished) }()
	if eo.search == nil && m.Reproduces == "" {
		// A reproduction reruns the trials of its plan only, whatever its experiment searched.
		if eo.search, err = searchOf(m); err != nil {
			return err
		}
	}
	var seq []experiment.Sequential
	var races []experiment.Race
	if bytes.Contains(m.Evaluated, []byte(`"until"`)) || bytes.Contains(m.Evaluated, []byte(`"race"`)) {
		exp, err := experiment.ParseMax(m.File, bytes.Clone(m.Evaluated), -1)
		if err != nil {
			return fmt.Errorf("read the sequential seeds and races of run %s from its manifest: %w", m.RunID, err)
		}
		seq, races = exp.Sequential, exp.Races
	}
	prog := newProgress(ios.ErrOut, ios.ErrTTY, eo.output != "text", ios.TerminalWidth())
	if eo.output == "text" {
		what := fmt.Sprintf("%d trials", len(m.Trials))
		if s := eo.search; s != nil {
			what = fmt.Sprintf("a search of %d trials (%s sampler, %s pruner)", s.Trials, s.Sampler.Name, s.Pruner.Name)
			if len(m.Trials) > 0 {
				what += fmt.Sprintf(" after %d trials", len(m.Trials))
			}
		}
		fmt.Fprintf(ios.ErrOut, "run %s: %s on %s, -j %d\n", m.RunID, what, backend.Name(), eo.jobs)
	}
	adm := eo.admitted
	if adm == nil {
		checked := m.Trials
		if eo.search != nil {
			checked = withExample(m.Trials, eo.search)
		}
		if adm, err = admit(ctx, backend, checked, eo.host); err != nil {
			return err
		}
	}
	r := &runner.Runner{
		Backend: backend, Runs: runs, Jobs: eo.jobs, FailFast: eo.failFast, Capacity: adm.capacity, Leases: adm.leases, Admitted: true,
		WorkRoot: workRoot(runs.Blob), Workdir: workdir, OnEvent: prog.event, Search: eo.search, Sequential: seq, Races: races, Keep: eo.keep,
		Log: slog.New(slog.NewTextHandler(ios.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	start := time.Now()
	sum, err := r.Execute(ctx, m, eo.force)
	prog.finish()
	if err != nil {
		if sum != nil && eo.output == "text" {
			printSummary(ios.Out, sum, time.Since(start))
		}
		return err
	}
	finished = !sum.Interrupted && sum.Status == store.Succeeded
	switch eo.output {
	case "json":
		if err := cmdutil.WriteJSON(ios.Out, runJSON(sum)); err != nil {
			return err
		}
	case "text":
		showOutputs(ctx, ios.Out, runs, m, sum)
		printSummary(ios.Out, sum, time.Since(start))
	}
	switch {
	case sum.Interrupted:
		return cmdutil.Silent(cmdutil.ExitInterrupted)
	case sum.StoppedField != "":
		// The experiment is at fault (a search objective no trial logs): an invalid input, as
		// those found before anything runs, placed at the field to fix.
		p := experiment.Locate(m.File, m.Sources[filepath.Base(m.File)], sum.StoppedField, sum.Stopped)
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: errors.New(p.String())}
	case sum.Status != store.Succeeded:
		return cmdutil.Silent(cmdutil.ExitTrialFailed)
	}
	return nil
}

// workRoot is where attempt folders live while trials run: inside a folder store (so finished
// files are renamed into place), else in the user's cache.
func workRoot(b store.Blob) string {
	if fs, ok := b.(*store.Folder); ok {
		return filepath.Join(fs.Root(), ".work")
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "jikken", "work")
}

// showOutputs prints the stdout of the trials marked show: true that ran in this runner.
func showOutputs(ctx context.Context, w io.Writer, runs store.Runs, m *store.Manifest, sum *runner.Summary) {
	for i, t := range m.Trials {
		if !t.Show || sum.Trials[i] == nil || sum.Trials[i].Status != store.Succeeded {
			continue
		}
		out, err := store.ReadAll(ctx, runs.Blob, store.TrialKey(m.RunID, t.Name, "stdout.log"))
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "== %s\n%s", t.Name, out)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			fmt.Fprintln(w)
		}
	}
}

type trialJSON struct {
	Name     string       `json:"name"`
	Status   store.Status `json:"status"`
	ExitCode *int         `json:"exit_code"`
	Attempts int          `json:"attempts"`
	Reason   string       `json:"reason,omitempty"`
}

type runResultJSON struct {
	RunID  string       `json:"run_id"`
	Status store.Status `json:"status"`
	// Tool is the jikken that ran it: version and commit, as its manifest records them.
	Tool   string      `json:"tool"`
	Trials []trialJSON `json:"trials"`
}

func runJSON(sum *runner.Summary) runResultJSON {
	out := runResultJSON{RunID: sum.RunID, Status: sum.Status, Tool: "jikken " + version.String(), Trials: []trialJSON{}}
	for _, rec := range sum.Trials {
		if rec == nil {
			continue
		}
		out.Trials = append(out.Trials, trialJSON{Name: rec.Name, Status: rec.Status, ExitCode: rec.ExitCode, Attempts: len(rec.Attempts), Reason: rec.Reason})
	}
	return out
}

func printSummary(w interface{ Write([]byte) (int, error) }, sum *runner.Summary, took time.Duration) {
	c := sum.Counts
	fmt.Fprintf(w, "run %s %s in %s: %d trials, %d succeeded", sum.RunID, sum.Status, took.Round(time.Millisecond), c.Total, c.Succeeded)
	for _, x := range []struct {
		n    int
		word string
	}{{c.Failed, "failed"}, {c.Pruned, "pruned"}, {c.Eliminated, "eliminated"}, {c.Skipped, "skipped"}, {c.Killed, "killed"}, {c.Stopped, "stopped (services no trial needed any more)"}, {c.Pending, "not run"}} {
		if x.n > 0 {
			fmt.Fprintf(w, ", %d %s", x.n, x.word)
		}
	}
	fmt.Fprintln(w)
	if sum.Stopped != "" {
		fmt.Fprintf(w, "  %s\n", sum.Stopped)
	}
	shown := 0
	for _, rec := range sum.Trials {
		if rec == nil || rec.Status == store.Succeeded || rec.Status == store.Stopped || rec.Status == store.Pruned || rec.Status == store.Eliminated {
			continue
		}
		if shown == 10 {
			fmt.Fprintf(w, "  ... see 'jikken status %s'\n", sum.RunID)
			break
		}
		fmt.Fprintf(w, "  %-8s %s: %s\n", rec.Status, rec.Name, rec.Reason)
		shown++
	}
	switch {
	case sum.Interrupted || c.Pending > 0 || c.Killed > 0:
		fmt.Fprintf(w, "resume with: jikken resume %s\n", sum.RunID)
	case c.Failed > 0:
		fmt.Fprintf(w, "logs of a trial: jikken logs %s TRIAL; results: jikken results %s\n", sum.RunID, sum.RunID)
	default:
		fmt.Fprintf(w, "results: jikken results %s\n", sum.RunID)
	}
}

// detach starts 'jikken resume RUN' in a new session, its output in the store's work folder.
// gpusBusy is passed on: the run does not record it.
func detach(f *cmdutil.Factory, runs store.Runs, m *store.Manifest, backend string, s backendSettings, gpusBusy string) error {
	logDir := filepath.Join(workRoot(runs.Blob), m.RunID)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(logDir, "runner.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := append([]string{"resume", m.RunID, "--store", f.StoreURL, "--backend", backend, "-j", strconv.Itoa(m.Options.Jobs)}, s.args(backend)...)
	if gpusBusy != "" {
		args = append(args, "--gpus-busy="+gpusBusy)
	}
	cmd := exec.Command(f.Executable, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start detached runner: %w", err)
	}
	pid := cmd.Process.Pid // Release forgets it
	_ = cmd.Process.Release()
	fmt.Fprintln(f.IO.Out, m.RunID)
	fmt.Fprintf(f.IO.ErrOut, "running in the background (pid %d, log %s); follow with: jikken status %s\n", pid, logPath, m.RunID)
	return nil
}

func newResumeCmd(f *cmdutil.Factory) *cobra.Command {
	var rf resumeFlags
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Run what did not succeed in an earlier run",
		Long: `Resume reruns every trial of RUN that has not succeeded: failed, killed, skipped and never
started ones. Succeeded trials are never run again. Trials an earlier runner left running (it was
killed) are stopped first. The run's recorded plan is used; the experiment file is not read again.

RUN is a run id, a unique prefix of one, or "latest".`,
		Example: `  jikken resume latest
  jikken resume 20261122-101500-sweep -j 4`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			runs, id, err := resolveRun(ctx, f, args[0])
			if err != nil {
				return err
			}
			m, err := runs.Manifest(ctx, id)
			if err != nil {
				return err
			}
			if err := exportedRun(m); err != nil {
				return err
			}
			return rf.resume(ctx, f, cmd, runs, m, nil)
		},
	}
	rf.add(cmd)
	return cmd
}

// resumeFlags are the flags of the commands that run a recorded run again (resume, extend).
type resumeFlags struct {
	eo          execOptions
	backendName string
	settings    backendSettings
}

func (rf *resumeFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVarP(&rf.eo.jobs, "jobs", "j", defaultJobs(), "how many trials run at once (default: as the run was started)")
	fl.StringVar(&rf.backendName, "backend", "", "where trials run (default: as the run was started)")
	fl.BoolVar(&rf.eo.failFast, "fail-fast", false, "stop the run when a trial fails for good")
	fl.BoolVar(&rf.eo.force, "force", false, "take the run's lock even if another runner seems to hold it")
	cmdutil.FormatFlag(cmd, &rf.eo.output, "text", "json")
	rf.settings.addFlags(cmd, false)
	rf.eo.host.addFlags(cmd, true)
}

// resume runs the recorded run m in this process, with the settings it was started with unless
// the flags change them.
func (rf *resumeFlags) resume(ctx context.Context, f *cmdutil.Factory, cmd *cobra.Command, runs store.Runs, m *store.Manifest, keep map[string]bool) error {
	eo, backendName := rf.eo, rf.backendName
	eo.keep = keep
	if !cmd.Flags().Changed("jobs") {
		eo.jobs = m.Options.Jobs
	}
	if !cmd.Flags().Changed("fail-fast") {
		eo.failFast = m.Options.FailFast
	}
	if backendName == "" {
		backendName = m.Backend
	}
	eo.host = eo.host.over(m.Options)
	s := rf.settings.over(m.Backend, m.Options.Backend)
	s.Jobs, s.NoEnforce = eo.jobs, eo.host.NoEnforce
	backend, err := openBackend(ctx, f, runs.Blob, backendName, s)
	if err != nil {
		return err
	}
	return execute(ctx, f, runs, m, backend, eo)
}

// resolveRun opens the store and resolves a run reference (an id, a prefix, "latest").
func resolveRun(ctx context.Context, f *cmdutil.Factory, ref string) (store.Runs, string, error) {
	runs, err := openRuns(ctx, f)
	if err != nil {
		return runs, "", err
	}
	id, err := runs.Resolve(ctx, ref)
	return runs, id, err
}

func openRuns(ctx context.Context, f *cmdutil.Factory) (store.Runs, error) {
	b, err := store.Open(ctx, f.StoreURL)
	if err != nil {
		return store.Runs{}, err
	}
	return store.Runs{Blob: b}, nil
}
