// Package local runs trials as processes on this machine: each attempt a process group in the
// trial's working directory, its output captured to files, the whole group killed on stop.
package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
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
}

var _ runner.Backend = (*Backend)(nil)

// Name implements runner.Backend.
func (b *Backend) Name() string { return "local" }

// Check implements runner.Checker: GPUs cannot be given to local trials on a machine without them.
func (b *Backend) Check(ctx context.Context, trials []experiment.Trial) error {
	for _, t := range trials {
		if t.Resources.GPU > 0 {
			if _, err := exec.LookPath("nvidia-smi"); err != nil {
				return fmt.Errorf("trial %s asks for %d GPU(s), but this machine has none (no nvidia-smi); drop resources.gpu or run with --backend docker/kubernetes on a GPU host", t.Name, t.Resources.GPU)
			}
		}
	}
	return nil
}

// shellMeta are characters that make a command need a shell.
const shellMeta = "|&;<>()$`\\\"'*?[]#~{}!\n\t"

// command builds the process for a trial command. A shell string with nothing a shell would
// interpret is run directly (as make does), which saves a shell per trial.
func command(c experiment.Command, dir string) *exec.Cmd {
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
			} else if p, err := exec.LookPath(name); err == nil {
				return exec.Command(p, f[1:]...)
			}
		}
	}
	return exec.Command("/bin/sh", "-c", c.Shell)
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
	if st, err := os.Stat(a.Workdir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("working directory %s does not exist; fix the trial's workdir", a.Workdir)
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

	cmd := command(a.Trial.Cmd, a.Workdir)
	cmd.Dir = a.Workdir
	cmd.Env = b.environ(a.Env)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", a.Trial.Cmd, err)
	}
	return &process{cmd: cmd, pgid: cmd.Process.Pid, health: a.Trial.Health, dir: a.Workdir, env: cmd.Env, done: make(chan struct{})}, nil
}

// storeSecrets are the runner's store credentials: a trial does not need them to have its
// results stored, so it gets them only when its own env sets them.
var storeSecrets = map[string]bool{
	"AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true, "JIKKEN_S3_CONFIG": true,
}

// environ is the runner's environment (less store credentials), the backend's extras, then the
// trial's variables.
func (b *Backend) environ(trial []string) []string {
	base := os.Environ()
	env := make([]string, 0, len(base)+len(b.Env)+len(trial))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); storeSecrets[k] {
			continue
		}
		if b.PathPrepend != "" && strings.HasPrefix(kv, "PATH=") {
			kv = "PATH=" + b.PathPrepend + string(os.PathListSeparator) + kv[len("PATH="):]
		}
		env = append(env, kv)
	}
	env = append(env, b.Env...)
	return append(env, trial...)
}

type process struct {
	cmd    *exec.Cmd
	pgid   int
	health *experiment.Health
	dir    string
	env    []string
	done   chan struct{}
}

func (p *process) Handle() string { return "pgid:" + strconv.Itoa(p.pgid) }

func (p *process) Wait() runner.Exit {
	err := p.cmd.Wait()
	close(p.done)
	// The trial's processes end with it: whatever it left in its group is killed.
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	return exitOf(p.cmd.ProcessState, err)
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

func (p *process) Stop(grace time.Duration) error {
	return stopGroup(p.pgid, grace, p.done)
}

// stopGroup sends SIGTERM to a process group, then SIGKILL after grace unless done closes.
func stopGroup(pgid int, grace time.Duration, done <-chan struct{}) error {
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	select {
	case <-done:
		return nil
	case <-time.After(grace):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// WaitHealthy implements runner.Healthier with the trial's tcp or cmd probe.
func (p *process) WaitHealthy(ctx context.Context) error {
	if p.health == nil {
		return nil
	}
	interval := time.Duration(p.health.Interval)
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	timeout := time.Duration(p.health.Timeout)
	if timeout <= 0 {
		timeout = time.Minute
	}
	deadline := time.Now().Add(timeout)
	for {
		if p.probe(ctx) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not healthy after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return errors.New("exited before it was healthy")
		case <-time.After(interval):
		}
	}
}

func (p *process) probe(ctx context.Context) bool {
	if p.health.TCP != "" {
		c, err := net.DialTimeout("tcp", p.health.TCP, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	cmd := command(p.health.Cmd, p.dir)
	cmd.Dir, cmd.Env = p.dir, p.env
	return cmd.Run() == nil
}

// Live implements runner.Backend: process-group leaders whose environment names the run.
func (b *Backend) Live(ctx context.Context, runID string) ([]runner.LiveTrial, error) {
	root := b.ProcRoot
	if root == "" {
		root = "/proc"
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	want := []byte("JIKKEN_RUN_ID=" + runID + "\x00")
	var out []runner.LiveTrial
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if pgrp, ok := processGroup(filepath.Join(root, e.Name(), "stat")); !ok || pgrp != pid {
			continue
		}
		env, err := os.ReadFile(filepath.Join(root, e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, want...)) {
			continue
		}
		lt := runner.LiveTrial{RunID: runID, Handle: "pgid:" + e.Name()}
		for _, kv := range bytes.Split(env, []byte{0}) {
			k, v, _ := bytes.Cut(kv, []byte("="))
			switch string(k) {
			case "JIKKEN_TRIAL":
				lt.Trial = string(v)
			case "JIKKEN_ATTEMPT":
				lt.Attempt, _ = strconv.Atoi(string(v))
			}
		}
		out = append(out, lt)
	}
	return out, nil
}

// processGroup reads the process group from /proc/PID/stat; zombies are not live.
func processGroup(statPath string) (int, bool) {
	b, err := os.ReadFile(statPath)
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || f[0] == "Z" {
		return 0, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return pgrp, err == nil
}

// StopLive implements runner.Backend.
func (b *Backend) StopLive(ctx context.Context, lt runner.LiveTrial) error {
	pgid, err := strconv.Atoi(strings.TrimPrefix(lt.Handle, "pgid:"))
	if err != nil || pgid <= 1 {
		return fmt.Errorf("bad local handle %q", lt.Handle)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && syscall.Kill(-pgid, 0) == nil; {
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return stopGroup(pgid, 5*time.Second, done)
}
