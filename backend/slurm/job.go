package slurm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/host"
	"github.com/jikken-dev/jikken/runner"
)

// script is the batch script of every job: it enters the trial's working directory, given as
// its first argument, and replaces itself with the command given as the rest. The command is
// never part of the script's text.
const script = `#!/bin/sh
# Written by jikken: one attempt of a trial. The working directory and the command are this
# script's arguments, and the environment comes from sbatch --export-file.
cd "$1" || exit 126
shift
exec "$@"
`

// uploadScript is the batch script of every job when nodes do not share the runner's folders
// (Config.Upload): it replaces itself with its arguments, jikken trial-exec and the command.
const uploadScript = `#!/bin/sh
# Written by jikken: one attempt of a trial, run by jikken trial-exec in a scratch folder of the
# node, which uploads its outputs and logs to the store. The command is this script's
# arguments, and the environment comes from sbatch --export-file.
exec "$@"
`

// jobName is the name of every job of a run: squeue --name finds them all in one call.
func jobName(run string) string { return "jikken-" + run }

// comment labels a job with its trial and attempt; the trial goes last, so parseComment reads
// it whole.
func comment(run, trial string, attempt int) string {
	return fmt.Sprintf("jikken run=%s attempt=%d trial=%s", run, attempt, trial)
}

// parseComment reads what comment wrote; ok is false for any other comment.
func parseComment(c string) (run, trial string, attempt int, ok bool) {
	rest, found := strings.CutPrefix(c, "jikken run=")
	if !found {
		return "", "", 0, false
	}
	run, rest, found = strings.Cut(rest, " attempt=")
	if !found {
		return "", "", 0, false
	}
	n, rest, found := strings.Cut(rest, " trial=")
	if !found {
		return "", "", 0, false
	}
	attempt, err := strconv.Atoi(n)
	if err != nil {
		return "", "", 0, false
	}
	return run, rest, attempt, true
}

// argv is the command a trial runs, as arguments of the batch script.
func argv(c experiment.Command) []string {
	if c.Argv != nil {
		return c.Argv
	}
	return []string{"/bin/sh", "-c", c.Shell}
}

// filePattern escapes a path for sbatch --output and --error, which read % as the start of a
// replacement symbol (%j, %A): %% stands for a literal %.
func filePattern(path string) string { return strings.ReplaceAll(path, "%", "%%") }

// resourceArgs are the sbatch options for a trial's resources and timeout. A timeout becomes a
// time limit one minute longer, rounded up to whole minutes: the runner stops the attempt at the
// timeout itself, and Slurm's limit ends the job should the runner be gone by then.
func resourceArgs(t experiment.Trial) []string {
	var args []string
	if t.Resources.CPU > 0 {
		args = append(args, "--cpus-per-task="+strconv.Itoa(int(math.Ceil(t.Resources.CPU))))
	}
	if t.Resources.Memory > 0 {
		mib := (t.Resources.Memory + (1<<20 - 1)) >> 20
		args = append(args, "--mem="+strconv.FormatInt(mib, 10)+"M")
	}
	if n := t.Resources.GPUs(); n > 0 {
		args = append(args, "--gres=gpu:"+strconv.Itoa(n))
	}
	if d := time.Duration(t.Timeout); d > 0 {
		mins := int64(math.Ceil((d + time.Minute).Minutes()))
		args = append(args, "--time="+strconv.FormatInt(mins, 10))
	}
	if t.Checkpoint != nil {
		// Slurm warns the batch script (the trial, or trial-exec, which passes it on) before
		// its own time limit or a preemption, should no runner be there to do it.
		cp := t.CheckpointSettings()
		secs := int64(math.Ceil(time.Duration(cp.Before).Seconds()))
		args = append(args, fmt.Sprintf("--signal=B:%s@%d", cp.Signal, secs))
	}
	return args
}

// unsupported says why a trial cannot run on Slurm as it is written, or "".
func unsupported(t experiment.Trial) string {
	switch {
	case t.Cmd.IsZero():
		return "it has no cmd (a Slurm job runs a command on a node, not an image's entrypoint)"
	case t.Service || t.ServiceImplied:
		return "it is a service: a batch job gets no stable address for its dependants to reach, and may wait in the queue after them; run the service outside Slurm and give its address to the trials through env, or run this experiment with --backend docker or kubernetes"
	case t.Resources.MIG != "":
		return fmt.Sprintf("it asks for a MIG instance (%s), which the backend does not map to a gres; ask for whole GPUs, or pass the cluster's own gres with --sbatch-arg=--gres=...", t.Resources.MIG)
	case t.Resources.GPU > 0 && t.Resources.GPU != math.Trunc(t.Resources.GPU):
		return fmt.Sprintf("it asks for %g GPUs: Slurm allocates whole GPUs (gres=gpu:N)", t.Resources.GPU)
	case len(t.Ports) > 0:
		return "it publishes ports, which a batch job cannot"
	}
	return ""
}

// terminal are the job states after which nothing of the job runs any more.
var terminal = map[string]bool{
	"COMPLETED": true, "FAILED": true, "CANCELLED": true, "TIMEOUT": true, "OUT_OF_MEMORY": true,
	"NODE_FAIL": true, "BOOT_FAIL": true, "DEADLINE": true, "PREEMPTED": true, "SPECIAL_EXIT": true,
	"REVOKED": true,
}

// jobState is one job as squeue or scontrol tells it.
type jobState struct {
	ID      string
	State   string
	Reason  string
	Comment string
	// Exit is scontrol's ExitCode: the exit status, and the signal that ended the job (0 if none).
	Exit, Signal int
	HasExit      bool
}

// squeueFormat is the -O format parseSqueue reads: a field with a suffix and no width is
// neither padded nor cut. exit_code is the job's wait status, so the end of a job comes with
// the poll that sees it, without a command per job. The comment goes last: it may hold "|".
// JobArrayID is a task's "123_4" in an array and the job id otherwise; squeue needs -r to list
// an array's pending tasks one by one.
const squeueFormat = "JobArrayID:|,State:|,exit_code:|,Reason:|,Comment:|"

// parseSqueue reads squeue -h -O squeueFormat output.
func parseSqueue(out string) []jobState {
	var jobs []jobState
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(strings.TrimSpace(line), "|", 5)
		if len(f) != 5 {
			continue
		}
		j := jobState{ID: f[0], State: baseState(f[1]), Reason: f[3], Comment: strings.TrimSuffix(f[4], "|")}
		if ws, err := strconv.Atoi(f[2]); err == nil {
			// A wait status: the signal in the low 7 bits, else the exit code in the next 8.
			if sig := ws & 0x7f; sig != 0 {
				j.Signal = sig
			} else {
				j.Exit = (ws >> 8) & 0xff
			}
			j.HasExit = true
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// baseState drops what follows a state's name ("CANCELLED by 0").
func baseState(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), " ")
	return s
}

// parseScontrol reads the JobState, Reason and ExitCode of scontrol -o show job output.
func parseScontrol(out string) (jobState, bool) {
	var j jobState
	found := false
	for _, f := range strings.Fields(out) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "JobId":
			j.ID, found = v, true
		case "JobState":
			j.State = baseState(v)
		case "Reason":
			j.Reason = v
		case "ExitCode":
			code, sig, ok := strings.Cut(v, ":")
			c, err1 := strconv.Atoi(code)
			s, err2 := strconv.Atoi(sig)
			if ok && err1 == nil && err2 == nil {
				j.Exit, j.Signal, j.HasExit = c, s, true
			}
		}
	}
	return j, found
}

// exitOf is how a job that reached a terminal state ended, as the other backends report it;
// memory is the job's --mem in bytes (0: none asked).
func exitOf(j jobState, memory int64) runner.Exit {
	signalled := func(why string) runner.Exit {
		return runner.Exit{Code: 128 + j.Signal, Reason: fmt.Sprintf("%s by signal %d (%s)", why, j.Signal, syscall.Signal(j.Signal))}
	}
	switch j.State {
	case "COMPLETED":
		return runner.Exit{Code: j.Exit}
	case "FAILED":
		if j.Signal > 0 {
			return signalled("killed")
		}
		if j.Exit == 0 {
			return runner.Exit{Code: -1, Reason: "slurm: job failed (" + j.Reason + ")"}
		}
		return runner.Exit{Code: j.Exit}
	case "CANCELLED":
		if j.Signal > 0 {
			return signalled("cancelled")
		}
		if j.Exit != 0 {
			return runner.Exit{Code: j.Exit, Reason: "cancelled"}
		}
		return runner.Exit{Code: 143, Reason: "cancelled (scancel) before it ended"}
	case "TIMEOUT":
		return runner.Exit{Code: -1, Reason: "timed out: Slurm's time limit (--time) was reached", Interrupted: runner.TimeLimit}
	case "OUT_OF_MEMORY":
		if memory > 0 {
			return runner.Exit{Code: 137, Reason: "out of memory (limit " + host.FormatBytes(memory) + ")"}
		}
		return runner.Exit{Code: 137, Reason: "out of memory"}
	case "DEADLINE":
		return runner.Exit{Code: -1, Reason: "slurm: the job's deadline passed", Interrupted: runner.TimeLimit}
	case "PREEMPTED":
		return runner.Exit{Code: -1, Reason: "slurm: preempted by a job of higher priority", Interrupted: runner.Preempted}
	case "NODE_FAIL", "BOOT_FAIL":
		return runner.Exit{Code: -1, Reason: "slurm: " + j.State + ": the node failed", Interrupted: runner.NodeLost}
	}
	return runner.Exit{Code: -1, Reason: "slurm: job ended in state " + j.State}
}
