//go:build unix

// Package local runs trials as processes on this machine: each attempt a session of its own in
// the trial's working directory, its output captured to files, every process it started stopped
// with it; an attempt whose trial declares cpu or memory runs in a cgroup of its own that
// enforces them.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/host/cgroup"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store/s3"
)

// Backend is the local-process backend. The zero value is ready to use.
type Backend struct {
	Log *slog.Logger
	// ProcRoot is where processes are listed (default /proc); tests may point it elsewhere.
	ProcRoot string
	// Env is added to every trial's environment before the trial's own (JIKKEN_STORE, JIKKEN_BIN).
	Env []string
	// PathPrepend is put in front of PATH, so trials can call the jikken that runs them.
	PathPrepend string
	// NoEnforce lets trials that declare resources.cpu or resources.memory run without limits
	// where no cgroup can be made (--no-enforce); otherwise Check and Start refuse them there.
	// Where cgroups can be made, each of their attempts runs in one that enforces them.
	NoEnforce bool
	// CgroupRoot is where cgroups are looked for (default /); tests may point it elsewhere.
	CgroupRoot string

	once sync.Once
	base []string // the runner's environment less store credentials, with Env appended
	// paths caches where commands were found on PATH, which does not change during a run.
	paths sync.Map

	cgOnce   sync.Once
	cg       *cgroup.Manager
	cgErr    error
	warnOnce sync.Once
}

var _ runner.Backend = (*Backend)(nil)

// Name implements runner.Backend.
func (b *Backend) Name() string { return "local" }

// Plan implements runner.Backend: nothing of an earlier runner is adopted.
func (b *Backend) Plan([]experiment.Trial) {}

// Check implements runner.Checker: cpu and memory limits cannot be enforced where no cgroup
// can be made.
func (b *Backend) Check(ctx context.Context, trials []experiment.Trial) error {
	return b.checkLimits(trials)
}

// shellMeta are characters that make a command need a shell.
const shellMeta = "|&;<>()$`\\\"'*?[]#~{}!\n\t"

// command builds the process for a trial command. A shell string with nothing a shell would
// interpret is run directly (as make does), which saves a shell per trial.
func (b *Backend) command(c experiment.Command, dir string) *exec.Cmd {
	if c.Argv != nil {
		return exec.Command(c.Argv[0], c.Argv[1:]...)
	}
	if !strings.ContainsAny(c.Shell, shellMeta) {
		f := strings.Fields(c.Shell)
		if len(f) > 0 && !strings.Contains(f[0], "=") && !shellBuiltin[f[0]] {
			name := f[0]
			if strings.Contains(name, "/") {
				if !filepath.IsAbs(name) {
					name = filepath.Join(dir, name)
				}
				if _, err := os.Stat(name); err == nil {
					return exec.Command(name, f[1:]...)
				}
			} else if p := b.lookPath(name); p != "" {
				cmd := exec.Command(p, f[1:]...)
				cmd.Args[0] = name
				return cmd
			}
		}
	}
	return exec.Command("/bin/sh", "-c", c.Shell)
}

func (b *Backend) lookPath(name string) string {
	if p, ok := b.paths.Load(name); ok {
		return p.(string)
	}
	p, err := exec.LookPath(name)
	if err != nil || !filepath.IsAbs(p) {
		return ""
	}
	b.paths.Store(name, p)
	return p
}

var shellBuiltin = map[string]bool{
	"cd": true, "exit": true, "export": true, "set": true, "unset": true, "source": true, ".": true,
	"ulimit": true, "umask": true, "exec": true, "eval": true, "alias": true, "trap": true, "wait": true,
}

// Start implements runner.Backend.
func (b *Backend) Start(ctx context.Context, a *runner.Attempt) (runner.Process, error) {
	if a.Trial.Cmd.IsZero() {
		return nil, fmt.Errorf("trial %s has no cmd to run on the local backend", a.Trial.Name)
	}
	stdout, err := os.Create(a.StdoutPath)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := os.Create(a.StderrPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()

	group, err := b.group(a)
	if err != nil {
		return nil, err
	}
	cmd := b.command(a.Trial.Cmd, a.Workdir)
	cmd.Dir = a.Workdir
	cmd.Env = b.environ(a.Env)
	if len(a.Devices) > 0 {
		// The devices the runner gave this attempt, and no other: CUDA numbers what it sees
		// from 0, so each trial's first GPU is its own.
		ids := strings.Join(a.Devices, ",")
		cmd.Env = append(cmd.Env, "CUDA_VISIBLE_DEVICES="+ids, "NVIDIA_VISIBLE_DEVICES="+ids)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if a.Hold != nil {
		cmd.ExtraFiles = []*os.File{a.Hold}
	}
	// A session of its own: the attempt's processes share it (and its process group) unless
	// they leave on purpose, and the runner's terminal signals do not reach them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if group != nil {
		err = group.Start(cmd)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		if group != nil {
			_ = group.Remove()
		}
		if st, serr := os.Stat(a.Workdir); serr != nil || !st.IsDir() {
			return nil, fmt.Errorf("working directory %s does not exist; fix the trial's workdir", a.Workdir)
		}
		return nil, fmt.Errorf("start %s: %w", a.Trial.Cmd.Short(), err)
	}
	return &process{b: b, cmd: cmd, pid: cmd.Process.Pid, run: a.RunID, trial: a.Trial.Name, attempt: a.N,
		health: a.Trial.Health, dir: a.Workdir, env: cmd.Env, group: group, done: make(chan struct{})}, nil
}

// environ is the runner's environment (less store credentials), the backend's extras, then the
// trial's variables.
func (b *Backend) environ(trial []string) []string {
	b.once.Do(func() {
		// The runner's store credentials: a trial does not need them to have its results
		// stored, so it gets them only when its own env sets them.
		for _, kv := range s3.WithoutCredentials(os.Environ()) {
			if b.PathPrepend != "" && strings.HasPrefix(kv, "PATH=") {
				kv = "PATH=" + b.PathPrepend + string(os.PathListSeparator) + kv[len("PATH="):]
			}
			b.base = append(b.base, kv)
		}
		b.base = append(b.base, b.Env...)
	})
	env := make([]string, 0, len(b.base)+len(trial))
	env = append(env, b.base...)
	return append(env, trial...)
}

type process struct {
	b       *Backend
	cmd     *exec.Cmd
	pid     int
	run     string
	trial   string
	attempt int
	health  *experiment.Health
	dir     string
	env     []string
	// group is the attempt's cgroup when its trial declares limits.
	group   *cgroup.Group
	done    chan struct{}
	stopped sync.Once
	// stopping is set once the runner asked the attempt to stop: a SIGKILL after that is its
	// own, not a preemption.
	stopping atomic.Bool
}

// Handle is the attempt's process group (and session) id.
func (p *process) Handle() string { return "pgid:" + strconv.Itoa(p.pid) }

// GroupLeader implements runner.GroupLeader: the attempt's process group is its own.
func (p *process) GroupLeader() int { return p.pid }

func (p *process) Wait() runner.Exit {
	awaitExit(p.pid)
	err := p.cmd.Wait()
	close(p.done)
	// The trial's processes end with it: whatever it left in its group is killed.
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	exit := exitOf(p.cmd.ProcessState, err)
	if exit.Code == 128+int(syscall.SIGKILL) && !p.stopping.Load() {
		// Killed by someone other than the runner (an operator, a host's reclaim, a spot
		// host's shutdown): the trial did nothing wrong.
		exit.Interrupted = runner.Preempted
	}
	if g := p.group; g != nil {
		if g.Limits.Memory > 0 && g.OOMKilled(exit.Code == 128+int(syscall.SIGKILL)) {
			exit.Reason = oomReason(g.Limits)
			exit.Interrupted = runner.NotInterrupted
		}
		// Whatever it left in its cgroup, in another session or not, is killed too.
		if err := g.Remove(); err != nil {
			p.b.logger().Warn("remove the cgroup of an attempt", "trial", p.trial, "err", err)
		}
	}
	return exit
}

func exitOf(ps *os.ProcessState, err error) runner.Exit {
	if ps == nil {
		return runner.Exit{Code: -1, Err: err}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return runner.Exit{Code: 128 + int(ws.Signal()), Reason: "killed by signal " + ws.Signal().String()}
	}
	return runner.Exit{Code: ps.ExitCode()}
}

// Stop implements runner.Process: SIGTERM to every process of the attempt (its group, and
// those that left the group but carry the attempt's environment or stay in its session), then
// SIGKILL to what is left after grace.
func (p *process) Stop(grace time.Duration) error { return p.StopWith("TERM", grace) }

// StopWith implements runner.Warner: Stop with another signal than SIGTERM first ("USR1").
func (p *process) StopWith(signal string, grace time.Duration) error {
	sig, ok := warnSignals[signal]
	if !ok {
		return fmt.Errorf("stop %s with SIG%s: not a signal jikken sends; use TERM, USR1, USR2, INT or HUP", p.trial, signal)
	}
	var err error
	p.stopping.Store(true)
	p.stopped.Do(func() {
		err = p.b.stopTree(p.run, p.trial, p.attempt, p.pid, p.group, sig, grace, p.done)
	})
	return err
}

// warnSignals are the signals a trial may ask to be stopped with (experiment.CheckpointSignals).
var warnSignals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP,
}

// stopTree stops the processes of one attempt of a trial: the process group pgid and every
// process found with the attempt's environment, in its session or in its cgroup g (may be nil):
// first sig, then SIGKILL after grace.
func (b *Backend) stopTree(run, trial string, attempt, pgid int, g *cgroup.Group, sig syscall.Signal, grace time.Duration, done <-chan struct{}) error {
	members := func() []int {
		var out []int
		if g != nil {
			out, _ = g.Procs()
		}
		procs, err := b.processes()
		if err != nil {
			return out
		}
		for _, pr := range procs {
			if pr.sid == pgid || pr.pgrp == pgid || (pr.run == run && pr.trial == trial && (attempt == 0 || pr.attempt == attempt)) {
				out = append(out, pr.pid)
			}
		}
		return out
	}
	signal := func(sig syscall.Signal) error {
		var errs []error
		if pgid > 1 {
			if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, err)
			}
		}
		for _, pid := range members() {
			if pid > 1 && pid != os.Getpid() {
				if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
					errs = append(errs, err)
				}
			}
		}
		return errors.Join(errs...)
	}
	if err := signal(sig); err != nil {
		return err
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			return signal(syscall.SIGKILL)
		case <-tick.C:
			// Zombies are not members: an attempt whose processes all exited is stopped, even
			// before its leader is reaped.
			if len(members()) == 0 {
				return nil
			}
		case <-done:
			done = nil
			if len(members()) == 0 {
				return nil
			}
		}
	}
}

// Live implements runner.Backend: the attempts of the run that still have processes, found by
// the JIKKEN_RUN_ID, JIKKEN_TRIAL and JIKKEN_ATTEMPT every process of an attempt inherits (a
// background child whose parent exited included) and by the attempts' cgroups. Cgroups that an
// earlier runner left empty are removed.
func (b *Backend) Live(ctx context.Context, runID string) ([]runner.LiveTrial, error) {
	procs, err := b.processes()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	seen := map[[2]string]bool{}
	var out []runner.LiveTrial
	for _, pr := range procs {
		if pr.run != runID || pr.pid == os.Getpid() {
			continue
		}
		key := [2]string{pr.trial, strconv.Itoa(pr.attempt)}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, runner.LiveTrial{RunID: runID, Trial: pr.trial, Attempt: pr.attempt, Handle: "pgid:" + strconv.Itoa(pr.sid)})
	}
	return b.liveGroups(runID, out), nil
}

// StopLive implements runner.Backend: every process of the attempt, wherever it went, and its
// cgroup.
func (b *Backend) StopLive(ctx context.Context, lt runner.LiveTrial) error {
	pgid, err := strconv.Atoi(strings.TrimPrefix(lt.Handle, "pgid:"))
	if err != nil || pgid <= 1 {
		return fmt.Errorf("bad local handle %q", lt.Handle)
	}
	g := b.attemptGroup(lt.RunID, lt.Trial, lt.Attempt)
	err = b.stopTree(lt.RunID, lt.Trial, lt.Attempt, pgid, g, syscall.SIGTERM, 5*time.Second, nil)
	if g != nil {
		err = errors.Join(err, g.Remove())
	}
	return err
}

// proc is a process as the backend sees it.
type proc struct {
	pid, pgrp, sid int
	// run, trial and attempt come from the process's environment.
	run, trial string
	attempt    int
}
