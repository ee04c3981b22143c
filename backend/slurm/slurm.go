package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store/s3"
)

// Config is how jobs are submitted.
type Config struct {
	// Partition, Account and QOS are sbatch's --partition, --account and --qos; empty leaves
	// the cluster's defaults.
	Partition, Account, QOS string
	// SbatchArgs are added to every sbatch command, before the backend's own options (which
	// win where both set one).
	SbatchArgs []string
	// Env is added to every trial's environment before the trial's own (JIKKEN_STORE, JIKKEN_BIN).
	Env []string
	// PathPrepend is put in front of the trials' PATH, so they can call the jikken that runs them.
	PathPrepend string
	// Poll is how often the backend asks Slurm about its jobs while nothing changes at first
	// (default 1s); it backs off to MaxPoll (default 10s) while nothing changes.
	Poll, MaxPoll time.Duration
	// Log receives pending reasons and watch errors; nil discards them.
	Log *slog.Logger
	// NoArrays submits every attempt as a job of its own, even those started together.
	NoArrays bool
	// Linger is how long an attempt waits for others to share its job array (default 50ms):
	// the runner starts a matrix's attempts within a few milliseconds of each other.
	Linger time.Duration
	// ArrayLimit is the run's concurrency cap (-j), given to Slurm with each job array as
	// --array=...%N so the cluster holds the cap as well as the runner; 0 sets none.
	ArrayLimit int
	// Upload, when set, runs each attempt under jikken trial-exec, which uploads its outputs
	// and logs to the store from the node: for nodes that do not share the runner's folders.
	Upload *Upload
}

// Upload is how attempts reach the store from nodes that do not share the runner's folders.
type Upload struct {
	// Store is the store's URL (s3://bucket/prefix): the node writes to it directly, with the
	// runner's store credentials, which trial-exec keeps from the trial.
	Store string
	// Jikken is the path of the jikken binary on the nodes.
	Jikken string
}

// Backend submits each attempt as a Slurm batch job.
type Backend struct {
	cfg Config

	envOnce sync.Once
	base    []string

	mu       sync.Mutex
	watched  map[string]*process // by job id
	watching bool
	kick     chan struct{}

	bmu     sync.Mutex
	batches map[string]*batch // attempts waiting to be submitted together, by request

	// amu guards planned and adoptees. planned are the trials of the plan Plan was given,
	// until the Live that adopts their jobs; adoptees are the live jobs of an earlier runner
	// that Start re-attaches to, by run and trial.
	amu      sync.Mutex
	planned  map[string]bool
	adoptees map[string]adoptee

	// commands counts the Slurm commands issued, for the benchmark.
	commands atomic.Int64
}

var (
	_ runner.Backend      = (*Backend)(nil)
	_ runner.Adopter      = (*Backend)(nil)
	_ runner.OutputStorer = (*process)(nil)
)

// adoptee is a job an earlier runner of the run submitted: still queued or running, or ended
// while no runner watched it (the controller still knows how).
type adoptee struct {
	job     string
	attempt int
	ended   bool
}

// New returns a backend that submits with cfg.
func New(cfg Config) *Backend {
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.MaxPoll < cfg.Poll {
		cfg.MaxPoll = 10 * time.Second
		if cfg.MaxPoll < cfg.Poll {
			cfg.MaxPoll = cfg.Poll
		}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Linger <= 0 {
		cfg.Linger = 50 * time.Millisecond
	}
	return &Backend{cfg: cfg, watched: map[string]*process{}, kick: make(chan struct{}, 1), batches: map[string]*batch{}, adoptees: map[string]adoptee{}}
}

// Name implements runner.Backend.
func (b *Backend) Name() string { return "slurm" }

// Settings are what a run records so that resume submits to the same place, under the keys of
// the Settings struct's record tags.
func (b *Backend) Settings() map[string]string {
	s := map[string]string{}
	for k, v := range map[string]string{"partition": b.cfg.Partition, "account": b.cfg.Account, "qos": b.cfg.QOS} {
		if v != "" {
			s[k] = v
		}
	}
	if len(b.cfg.SbatchArgs) > 0 {
		s["sbatch-arg"] = strings.Join(b.cfg.SbatchArgs, "\n")
	}
	return s
}

// Commands is how many Slurm commands the backend has issued.
func (b *Backend) Commands() int64 { return b.commands.Load() }

// ErrNoSlurm is returned when the Slurm client commands are not on PATH.
var ErrNoSlurm = errors.New("no sbatch on PATH: run jikken where Slurm's client commands are (a login node), or install them (Debian: apt-get install slurm-client)")

// slurm runs one Slurm client command and returns its stdout; its error carries stderr.
func (b *Backend) slurm(ctx context.Context, name string, args ...string) (string, error) {
	return b.slurmIn(ctx, "", name, args...)
}

// slurmIn runs a Slurm client command in dir (sbatch makes it the job's first working folder).
func (b *Backend) slurmIn(ctx context.Context, dir, name string, args ...string) (string, error) {
	b.commands.Add(1)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", ErrNoSlurm
		}
		// sbatch says "sbatch: error: ..." on lines of their own: one line, named once.
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		msg := strings.TrimPrefix(strings.Join(lines, "; "), name+": ")
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), fmt.Errorf("%s: %s", name, msg)
	}
	return stdout.String(), nil
}

// Plan implements runner.Backend: afterwards Live leaves out the jobs of the plan's trials that
// an earlier runner left running, and Start re-attaches to them.
func (b *Backend) Plan(trials []experiment.Trial) {
	b.amu.Lock()
	defer b.amu.Unlock()
	b.planned = map[string]bool{}
	for _, t := range trials {
		b.planned[t.Name] = true
	}
}

// Check implements runner.Checker: the client commands are there, the controller answers, and
// each distinct request of the plan could be scheduled (sbatch --test-only: an unknown
// partition, account or QOS, or resources no node has, are refused before anything starts).
func (b *Backend) Check(ctx context.Context, trials []experiment.Trial) error {
	if _, err := exec.LookPath("sbatch"); err != nil {
		return ErrNoSlurm
	}
	var bad []string
	for _, t := range trials {
		if why := unsupported(t); why != "" {
			bad = append(bad, fmt.Sprintf("trial %s: %s", t.Name, why))
		}
	}
	if len(bad) > 0 {
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("... and %d more", len(bad)-5))
		}
		return fmt.Errorf("slurm: nothing was submitted:\n  %s", strings.Join(bad, "\n  "))
	}
	seen := map[string]bool{}
	for _, t := range trials {
		args := append(b.submitArgs(t), "--test-only", "--wrap=true")
		key := strings.Join(args, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		if _, err := b.slurm(ctx, "sbatch", args...); err != nil {
			return fmt.Errorf("slurm: the cluster refuses trial %s (sbatch %s): %w; nothing was submitted", t.Name, strings.Join(b.submitArgs(t), " "), err)
		}
	}
	return nil
}

// submitArgs are the sbatch options every job of trial t gets, but its files and labels.
func (b *Backend) submitArgs(t experiment.Trial) []string {
	args := append([]string{}, b.cfg.SbatchArgs...)
	for opt, v := range map[string]string{"--partition=": b.cfg.Partition, "--account=": b.cfg.Account, "--qos=": b.cfg.QOS} {
		if v != "" {
			args = append(args, opt+v)
		}
	}
	sort.Strings(args[len(b.cfg.SbatchArgs):])
	return append(args, resourceArgs(t)...)
}

// environ is the runner's environment less store credentials, the backend's extras, then the
// attempt's variables. Uploading jobs keep the credentials: trial-exec needs them, and keeps
// them from the trial.
func (b *Backend) environ(attempt []string) []string {
	b.envOnce.Do(func() {
		own := os.Environ()
		if b.cfg.Upload == nil {
			own = s3.WithoutCredentials(own)
		}
		for _, kv := range own {
			if (strings.HasPrefix(kv, "SLURM_") || strings.HasPrefix(kv, "SBATCH_")) && !strings.HasPrefix(kv, "SLURM_CONF=") {
				// The runner's own job, when it runs inside one, is not the trial's; the
				// cluster's configuration is.
				continue
			}
			if b.cfg.PathPrepend != "" && strings.HasPrefix(kv, "PATH=") {
				kv = "PATH=" + b.cfg.PathPrepend + string(os.PathListSeparator) + kv[len("PATH="):]
			}
			b.base = append(b.base, kv)
		}
		b.base = append(b.base, b.cfg.Env...)
	})
	env := make([]string, 0, len(b.base)+len(attempt))
	env = append(env, b.base...)
	return append(env, attempt...)
}

// Start implements runner.Backend: it submits the attempt and returns once Slurm has the job
// (it may wait in the queue). Attempts started together with the same request (a matrix's
// trials as the runner starts them) go in one job array, unless Config.NoArrays.
func (b *Backend) Start(ctx context.Context, a *runner.Attempt) (runner.Process, error) {
	if why := unsupported(a.Trial); why != "" {
		return nil, fmt.Errorf("slurm: trial %s cannot run: %s", a.Trial.Name, why)
	}
	if p, ok, err := b.adopt(ctx, a); err != nil {
		return nil, err
	} else if ok {
		return p, nil
	}
	for _, p := range []string{a.StdoutPath, a.StderrPath} {
		if strings.ContainsAny(p, "\\\n") {
			// sbatch drops backslashes from file names; a newline would break an array's list.
			return nil, fmt.Errorf("slurm: the attempt folder %s has a backslash or a newline in its path, which sbatch cannot write to; use a work folder without one", a.Dir)
		}
	}
	text := script
	if b.cfg.Upload != nil {
		text = uploadScript
	}
	scriptPath := filepath.Join(a.Dir, "slurm-job.sh")
	if err := os.WriteFile(scriptPath, []byte(text), 0o755); err != nil {
		return nil, fmt.Errorf("slurm: write the batch script: %w", err)
	}
	if b.cfg.NoArrays || b.cfg.Upload != nil {
		// An array's tasks read their attempts from its folder, which a node may not have.
		return b.submitOne(ctx, a)
	}
	return b.enqueue(a)
}

// adopt re-attaches attempt a to the job an earlier runner of the run submitted for it, which
// Live found queued, running or ended; ok is false when there is none. A job of another attempt
// than the one the runner starts now is cancelled: its record says it is over.
func (b *Backend) adopt(ctx context.Context, a *runner.Attempt) (*process, bool, error) {
	key := a.RunID + "/" + a.Trial.Name
	b.amu.Lock()
	ad, ok := b.adoptees[key]
	delete(b.adoptees, key)
	b.amu.Unlock()
	if !ok {
		return nil, false, nil
	}
	if ad.attempt != a.N {
		if ad.ended {
			return nil, false, nil
		}
		if _, err := b.slurm(ctx, "scancel", ad.job); err != nil && !gone(err) {
			return nil, false, fmt.Errorf("slurm: cancel job %s, attempt %d of %s left by an earlier runner: %w", ad.job, ad.attempt, a.Trial.Name, err)
		}
		return nil, false, nil
	}
	b.cfg.Log.Info("re-attaching to a job left by an earlier runner", "trial", a.Trial.Name, "job", ad.job, "attempt", ad.attempt)
	p := &process{b: b, id: ad.job, run: a.RunID, trial: a.Trial.Name, queued: a.Queued, memory: a.Trial.Resources.Memory,
		stored: b.cfg.Upload != nil, done: make(chan struct{})}
	b.watch(p)
	return p, true, nil
}

// workdir is where attempt a's command runs.
func workdir(a *runner.Attempt) string {
	if a.Workdir == "" {
		return a.Dir
	}
	return a.Workdir
}

// submitOne submits attempt a as a job of its own.
func (b *Backend) submitOne(ctx context.Context, a *runner.Attempt) (*process, error) {
	// NUL-separated, so values may hold newlines; sbatch hands them to the job as they are.
	var env bytes.Buffer
	vars := b.environ(a.Env)
	if b.cfg.Upload != nil {
		// The node cannot read the attempt's params.json: trial-exec writes it there.
		params, err := os.ReadFile(filepath.Join(a.Dir, "params.json"))
		if err != nil {
			return nil, fmt.Errorf("slurm: read the attempt's params: %w", err)
		}
		vars = append(vars, "JIKKEN_PARAMS_JSON="+string(params))
	}
	for _, kv := range vars {
		env.WriteString(kv)
		env.WriteByte(0)
	}
	envPath := filepath.Join(a.Dir, "slurm-job.env")
	if err := os.WriteFile(envPath, env.Bytes(), 0o600); err != nil {
		return nil, fmt.Errorf("slurm: write the job's environment: %w", err)
	}
	// The job starts in the attempt folder, which the node shares, whatever the runner's own.
	dir, stdout, stderr := a.Dir, a.StdoutPath, a.StderrPath
	cmd := append([]string{workdir(a)}, argv(a.Trial.Cmd)...)
	if u := b.cfg.Upload; u != nil {
		// trial-exec stores the logs; a node without the attempt folder starts at the root.
		dir, stdout, stderr = "/", os.DevNull, os.DevNull
		cmd = append([]string{u.Jikken, "trial-exec", "--store", u.Store, "--scratch", "--workdir", workdir(a), "--"}, argv(a.Trial.Cmd)...)
	}
	args := append(b.submitArgs(a.Trial),
		"--parsable",
		"--job-name="+jobName(a.RunID),
		"--comment="+comment(a.RunID, a.Trial.Name, a.N),
		"--output="+filePattern(stdout),
		"--error="+filePattern(stderr),
		"--export=ALL",
		"--export-file="+envPath,
		filepath.Join(a.Dir, "slurm-job.sh"))
	args = append(args, cmd...)
	out, err := b.slurmIn(ctx, dir, "sbatch", args...)
	// sbatch has read the environment (it sends it with the job): the file, which may hold
	// the store's credentials, is not left on disk.
	_ = os.Remove(envPath)
	if err != nil {
		return nil, fmt.Errorf("slurm submit %s: %w", a.Trial.Name, err)
	}
	id, err := jobID(out)
	if err != nil {
		return nil, fmt.Errorf("slurm submit %s: %w", a.Trial.Name, err)
	}
	p := &process{b: b, id: id, run: a.RunID, trial: a.Trial.Name, queued: a.Queued, memory: a.Trial.Resources.Memory,
		stored: b.cfg.Upload != nil, done: make(chan struct{})}
	b.watch(p)
	return p, nil
}

// jobID reads sbatch --parsable's output: "id" or "id;cluster".
func jobID(out string) (string, error) {
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if id == "" {
		return "", errors.New("sbatch printed no job id")
	}
	return id, nil
}

// Live implements runner.Backend: the run's jobs that are pending or running, found by their
// name and comment. After Check of a plan, the first Live keeps back, for Start to re-attach
// to, the newest job of each trial of the plan (runner.Adopter), even one that ended while no
// runner watched it: its end and outputs are then collected, not run again. It lists the
// others that have not ended.
func (b *Backend) Live(ctx context.Context, runID string) ([]runner.LiveTrial, error) {
	jobs, err := b.jobs(ctx, runID)
	if err != nil {
		return nil, err
	}
	b.amu.Lock()
	defer b.amu.Unlock()
	newest := map[string]int{}
	if b.planned != nil {
		for i, j := range jobs {
			if k, seen := newest[j.Trial]; b.planned[j.Trial] && (!seen || j.Attempt > jobs[k].Attempt) {
				newest[j.Trial] = i
			}
		}
		b.planned = nil
	}
	var live []runner.LiveTrial
	for i, j := range jobs {
		if k, ok := newest[j.Trial]; ok && k == i {
			b.adoptees[runID+"/"+j.Trial] = adoptee{job: j.Handle, attempt: j.Attempt, ended: j.ended}
			continue
		}
		if !j.ended {
			live = append(live, j.LiveTrial)
		}
	}
	return live, nil
}

// Adopted implements runner.Adopter: the attempts whose jobs Live kept back, by trial.
func (b *Backend) Adopted(runID string) map[string]int {
	b.amu.Lock()
	defer b.amu.Unlock()
	out := map[string]int{}
	for key, a := range b.adoptees {
		if trial, ok := strings.CutPrefix(key, runID+"/"); ok {
			out[trial] = a.attempt
		}
	}
	return out
}

// runJob is a job of a run as the controller lists it, ended or not.
type runJob struct {
	runner.LiveTrial
	ended bool
}

// jobs lists the run's jobs the controller knows, those that ended included (for MinJobAge).
func (b *Backend) jobs(ctx context.Context, runID string) ([]runJob, error) {
	out, err := b.slurm(ctx, "squeue", "-h", "-r", "-t", "all", "--name="+jobName(runID), "-O", squeueFormat)
	if err != nil {
		return nil, fmt.Errorf("slurm: list the run's jobs: %w", err)
	}
	var jobs []runJob
	for _, j := range parseSqueue(out) {
		run, trial, attempt, ok := parseComment(j.Comment)
		if !ok {
			// A task of an array: its list says which attempt it runs. A list that is gone
			// (the runner's work folder removed) still lets the task be stopped.
			var list string
			if run, list, ok = parseArrayComment(j.Comment); !ok {
				continue
			}
			if trial, attempt, ok = taskOf(list, j.ID); !ok {
				trial = "(array task " + j.ID + ")"
			}
		}
		if run != runID {
			continue
		}
		jobs = append(jobs, runJob{runner.LiveTrial{RunID: run, Trial: trial, Attempt: attempt, Handle: j.ID}, terminal[j.State]})
	}
	return jobs, nil
}

// StopLive implements runner.Backend: scancel sends the job SIGTERM, then SIGKILL after the
// cluster's KillWait. scancel of a job already gone succeeds.
func (b *Backend) StopLive(ctx context.Context, lt runner.LiveTrial) error {
	if _, err := b.slurm(ctx, "scancel", lt.Handle); err != nil {
		return fmt.Errorf("slurm: cancel job %s (trial %s): %w", lt.Handle, lt.Trial, err)
	}
	return nil
}

// DeleteRun cancels what the run still has in the queue or running ('jikken rm
// --backend-objects'): the controller forgets ended jobs by itself. It returns how many jobs or
// array tasks it cancelled.
func (b *Backend) DeleteRun(ctx context.Context, runID string) (int, error) {
	jobs, err := b.jobs(ctx, runID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range jobs {
		if !j.ended {
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	if _, err := b.slurm(ctx, "scancel", "--name="+jobName(runID)); err != nil {
		return 0, fmt.Errorf("slurm: cancel the jobs of run %s: %w", runID, err)
	}
	return n, nil
}

// process is one submitted job.
type process struct {
	b          *Backend
	id         string
	run, trial string

	// queued is told the job's pending reason when it changes (runner.Attempt.Queued), or nil.
	queued func(reason string)
	// memory is the job's --mem in bytes (0: none), for an out-of-memory end's reason.
	memory int64
	// stored is set when the job runs under trial-exec, which stores its outputs (Upload).
	stored bool
	// Set by the watcher: the last pending reason seen, and the end.
	reason string
	exit   runner.Exit
	done   chan struct{}
	ended  sync.Once
	// onEnd runs once the job has ended (an array's last task removes the array's folder).
	onEnd func()
}

// Handle is the job id.
func (p *process) Handle() string { return p.id }

// OutputsStored implements runner.OutputStorer: an uploading job's trial-exec has put its
// outputs and logs in the store.
func (p *process) OutputsStored() bool { return p.stored }

// Wait blocks until the job has ended.
func (p *process) Wait() runner.Exit {
	<-p.done
	return p.exit
}

func (p *process) end(e runner.Exit) {
	p.ended.Do(func() {
		p.exit = e
		if p.onEnd != nil {
			p.onEnd()
		}
		close(p.done)
	})
}

// Stop sends SIGTERM to every process of the job (the batch script included, which scancel
// spares by default) and, if the job has not ended after grace, SIGKILL; a pending job is
// simply cancelled.
func (p *process) Stop(grace time.Duration) error { return p.StopWith("TERM", grace) }

// StopWith implements runner.Warner: Stop with another signal than SIGTERM first ("USR1").
func (p *process) StopWith(signal string, grace time.Duration) error {
	ctx := context.Background()
	select {
	case <-p.done:
		return nil
	default:
	}
	if _, err := p.b.slurm(ctx, "scancel", "--state=PENDING", p.id); err != nil {
		return fmt.Errorf("slurm: cancel job %s: %w", p.id, err)
	}
	if _, err := p.b.slurm(ctx, "scancel", "--full", "--signal="+signal, p.id); err != nil && !gone(err) {
		return fmt.Errorf("slurm: signal job %s: %w", p.id, err)
	}
	p.b.poke()
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if _, err := p.b.slurm(ctx, "scancel", "--full", "--signal=KILL", p.id); err != nil && !gone(err) {
		return fmt.Errorf("slurm: kill job %s: %w", p.id, err)
	}
	p.b.poke()
	return nil
}

// gone reports whether scancel failed because the job had already ended.
func gone(err error) bool {
	s := err.Error()
	return strings.Contains(s, "already completing or completed") || strings.Contains(s, "Invalid job id") ||
		strings.Contains(s, "Job/step already")
}
