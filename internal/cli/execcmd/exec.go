package execcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/executor"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/store"
)

// Options are the flags of `jikken trial-exec`; each defaults to the trial-interface variable
// the backend already sets in the container.
type Options struct {
	f          *cmdutil.Factory
	Run        string
	Trial      string
	Attempt    int
	OutputDir  string
	LogDir     string
	Workdir    string
	Params     string // path to write JIKKEN_PARAMS_JSON to (default $JIKKEN_PARAMS)
	NoScan     bool
	Record     bool
	Scratch    bool
	FlushEvery time.Duration
	LiveEvery  time.Duration
	IndexTable string
	Argv       []string
	// CheckpointDir, CheckpointEvery and CheckpointMax keep the trial's checkpoint folder in
	// the store (executor.Checkpoint); the runner sets their variables for trials that keep one.
	CheckpointDir    string
	CheckpointEvery  string
	CheckpointBefore string
	CheckpointMax    string
}

// NewCmd returns the trial-exec command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{f: f}
	cmd := &cobra.Command{
		Use:   "trial-exec [flags] -- CMD [ARG...]",
		Short: "Run one trial inside its container and upload its outputs to the store",
		Long: `Trial-exec is the executor that container backends (docker, kubernetes) and exported Argo
workflows start in a trial's container. It runs CMD with the trial interface already in the
environment, tees its output to the container log and to stdout.log/stderr.log (uploaded every
--flush-every while it runs), then uploads $JIKKEN_OUTPUT_DIR (metrics.jsonl, result.json,
artifacts/...) and the logs to the store, so results come back from any node without a shared
volume. It exits with CMD's exit status, or 1 when CMD succeeded but its outputs did not reach
the store. Store credentials come from the environment (a Secret in Kubernetes), never flags,
and are removed from CMD's environment: the trial never sees them.

With JIKKEN_CHECKPOINT_EVERY set (a trial with checkpoint or preemptible), it first restores the
trial's newest complete checkpoint from the store into $JIKKEN_CHECKPOINT_DIR (and sets
JIKKEN_RESUMED=1), uploads that folder every --checkpoint-every while CMD runs, and once more
when CMD ends.

With JIKKEN_PARAMS_JSON set, its content is written to $JIKKEN_PARAMS first. With --record (for
workflows that run without a jikken runner) it also writes the trial's record, trial.json, whose
base fields come from JIKKEN_RECORD_JSON.

With --scratch (a batch node that does not share the runner's folders: the slurm backend with
an S3 store), CMD's output folder, params and logs are in a fresh temporary folder of this
machine, removed once they are uploaded, whatever JIKKEN_OUTPUT_DIR and JIKKEN_PARAMS said; a
--workdir this machine does not have becomes that folder.`,
		Example: `  jikken trial-exec --store s3://bucket/runs -- python train.py
  jikken trial-exec install /jikken-bin/jikken
  jikken trial-exec code /code`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() < 0 && len(args) > 0 {
				return cmdutil.UsageError("put the trial's command after --: jikken trial-exec -- %s", args[0])
			}
			o.Argv = args
			return run(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Run, "run", os.Getenv("JIKKEN_RUN_ID"), "run id (default $JIKKEN_RUN_ID)")
	fl.StringVar(&o.Trial, "trial", os.Getenv("JIKKEN_TRIAL"), "trial name (default $JIKKEN_TRIAL)")
	attempt, _ := strconv.Atoi(os.Getenv("JIKKEN_ATTEMPT"))
	fl.IntVar(&o.Attempt, "attempt", attempt, "attempt number (default $JIKKEN_ATTEMPT)")
	fl.StringVar(&o.OutputDir, "output-dir", os.Getenv("JIKKEN_OUTPUT_DIR"), "folder uploaded after CMD ends (default $JIKKEN_OUTPUT_DIR)")
	fl.StringVar(&o.LogDir, "log-dir", "", "where stdout.log and stderr.log grow (default: a temporary folder)")
	fl.StringVar(&o.Workdir, "workdir", "", "working directory of CMD (default: the current one)")
	fl.StringVar(&o.Params, "params", os.Getenv("JIKKEN_PARAMS"), "where to write $JIKKEN_PARAMS_JSON (default $JIKKEN_PARAMS)")
	fl.BoolVar(&o.NoScan, "no-stdout-metrics", false, "do not turn ::metric lines of stdout into metrics.jsonl (the runner does it)")
	fl.BoolVar(&o.Record, "record", false, "also write trial.json (for workflows without a jikken runner)")
	fl.DurationVar(&o.FlushEvery, "flush-every", 10*time.Second, "upload the growing logs this often (0: only at the end)")
	fl.DurationVar(&o.LiveEvery, "live-every", executor.DefaultLiveEvery, "append new metric points to the store's live metrics this often (0: never)")
	fl.StringVar(&o.IndexTable, "index-table", "", "folder with one trial per index; run the one of $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)")
	fl.BoolVar(&o.Scratch, "scratch", false, "put the output folder, params and logs in a temporary folder of this machine, removed at the end")
	fl.StringVar(&o.CheckpointDir, "checkpoint-dir", os.Getenv("JIKKEN_CHECKPOINT_DIR"), "the trial's checkpoint folder, restored from and uploaded to the store (default $JIKKEN_CHECKPOINT_DIR)")
	fl.StringVar(&o.CheckpointEvery, "checkpoint-every", os.Getenv("JIKKEN_CHECKPOINT_EVERY"), "upload the checkpoint folder this often while CMD runs; empty: keep no checkpoint (default $JIKKEN_CHECKPOINT_EVERY)")
	fl.StringVar(&o.CheckpointBefore, "checkpoint-before", os.Getenv("JIKKEN_CHECKPOINT_BEFORE"), "after a signal passed on to CMD (its warning), upload the checkpoint folder every quarter of this while CMD runs (default $JIKKEN_CHECKPOINT_BEFORE)")
	fl.StringVar(&o.CheckpointMax, "checkpoint-max", os.Getenv("JIKKEN_CHECKPOINT_MAX"), "largest checkpoint folder uploaded, in bytes (default $JIKKEN_CHECKPOINT_MAX)")
	cmd.AddCommand(newInstallCmd(), newCodeCmd())
	return cmd
}

func run(ctx context.Context, o *Options) error {
	if o.IndexTable != "" {
		if err := useIndexed(o); err != nil {
			return err
		}
	}
	if len(o.Argv) == 0 {
		return cmdutil.UsageError("no command: jikken trial-exec [flags] -- CMD [ARG...]")
	}
	env := os.Environ()
	if o.Scratch {
		dir, err := os.MkdirTemp("", "jikken-trial-")
		if err != nil {
			return fmt.Errorf("trial-exec: make a scratch folder: %w", err)
		}
		defer os.RemoveAll(dir)
		o.OutputDir, o.Params, o.LogDir = filepath.Join(dir, "out"), filepath.Join(dir, "params.json"), filepath.Join(dir, "logs")
		// Later entries win: CMD sees the scratch paths.
		env = append(env, "JIKKEN_OUTPUT_DIR="+o.OutputDir, "JIKKEN_PARAMS="+o.Params)
		if _, err := os.Stat(o.Workdir); o.Workdir != "" && err != nil {
			fmt.Fprintf(o.f.IO.ErrOut, "jikken trial-exec: the working directory %s is not on this machine; running in %s\n", o.Workdir, dir)
			o.Workdir = dir
		}
	}
	ck, err := checkpointOptions(o)
	if err != nil {
		return err
	}
	if ck != nil && o.Scratch {
		ck.Dir = filepath.Join(filepath.Dir(o.OutputDir), "checkpoint")
	}
	if o.Run == "" || o.Trial == "" || o.OutputDir == "" {
		return cmdutil.UsageError("trial-exec needs --run, --trial and --output-dir (or JIKKEN_RUN_ID, JIKKEN_TRIAL and JIKKEN_OUTPUT_DIR)")
	}
	blob, err := store.Open(ctx, o.f.StoreURL)
	if err != nil {
		return err
	}
	eo := executor.Options{
		Argv: o.Argv, Dir: o.Workdir, Env: env,
		Store: blob, RunID: o.Run, Trial: o.Trial, Attempt: o.Attempt,
		OutputDir: o.OutputDir, LogDir: o.LogDir, ParamsPath: o.Params,
		ScanStdoutMetrics: !o.NoScan,
		Stdout:            o.f.IO.Out, Stderr: o.f.IO.ErrOut,
		FlushEvery: o.FlushEvery,
		Checkpoint: ck,
	}
	if o.FlushEvery == 0 {
		eo.FlushEvery = -1
	}
	eo.LiveEvery = o.LiveEvery
	if o.LiveEvery == 0 {
		eo.LiveEvery = -1
	}
	if p := os.Getenv("JIKKEN_PARAMS_JSON"); p != "" {
		eo.Params = []byte(p)
	}
	if o.Record {
		eo.Record = &store.TrialRecord{}
		if r := os.Getenv("JIKKEN_RECORD_JSON"); r != "" {
			if err := json.Unmarshal([]byte(r), eo.Record); err != nil {
				return fmt.Errorf("JIKKEN_RECORD_JSON: %w", err)
			}
		}
	}
	res, err := executor.Run(ctx, eo)
	if err != nil {
		return err
	}
	if res.Upload != nil {
		fmt.Fprintf(o.f.IO.ErrOut, "jikken trial-exec: outputs of %s did not all reach %s: %v\n", o.Trial, blob.Location(), res.Upload)
		if res.ExitCode == 0 {
			return cmdutil.Silent(cmdutil.ExitFailure)
		}
	}
	if res.ExitCode != 0 {
		code := res.ExitCode
		if code < 0 || code > 255 {
			code = 1
		}
		return cmdutil.Silent(code)
	}
	return nil
}

// checkpointOptions reads the checkpoint flags: nil when the trial keeps no checkpoint.
func checkpointOptions(o *Options) (*executor.Checkpoint, error) {
	if o.CheckpointEvery == "" {
		return nil, nil
	}
	every, err := time.ParseDuration(o.CheckpointEvery)
	if err != nil || every < 0 {
		return nil, cmdutil.UsageError("--checkpoint-every %q: want a duration like 10m", o.CheckpointEvery)
	}
	ck := &executor.Checkpoint{Dir: o.CheckpointDir, Every: every}
	if o.CheckpointBefore != "" {
		if ck.Before, err = time.ParseDuration(o.CheckpointBefore); err != nil || ck.Before < 0 {
			return nil, cmdutil.UsageError("--checkpoint-before %q: want a duration like 2m", o.CheckpointBefore)
		}
	}
	if o.CheckpointMax != "" {
		if ck.Max, err = strconv.ParseInt(o.CheckpointMax, 10, 64); err != nil || ck.Max < 0 {
			return nil, cmdutil.UsageError("--checkpoint-max %q: want a number of bytes", o.CheckpointMax)
		}
	}
	if ck.Dir == "" {
		dir, err := os.MkdirTemp("", "jikken-checkpoint-")
		if err != nil {
			return nil, fmt.Errorf("trial-exec: make a checkpoint folder: %w", err)
		}
		ck.Dir = dir
	}
	return ck, nil
}

// useIndexed takes this index's trial from the index table: its environment becomes the
// executor's (the trial interface fills the flags not given, as it does for a lone trial) and
// its command is the one run.
func useIndexed(o *Options) error {
	if len(o.Argv) > 0 {
		return cmdutil.UsageError("--index-table gives the command: put nothing after --")
	}
	t, err := executor.ReadIndexed(o.IndexTable, os.Getenv(executor.IndexEnv))
	if err != nil {
		return fmt.Errorf("trial-exec: %w", err)
	}
	for _, kv := range t.Env {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("trial-exec: index table: %w", err)
		}
	}
	fill := func(dst *string, env string) {
		if *dst == "" {
			*dst = os.Getenv(env)
		}
	}
	fill(&o.Run, "JIKKEN_RUN_ID")
	fill(&o.Trial, "JIKKEN_TRIAL")
	fill(&o.OutputDir, "JIKKEN_OUTPUT_DIR")
	fill(&o.Params, "JIKKEN_PARAMS")
	fill(&o.CheckpointDir, "JIKKEN_CHECKPOINT_DIR")
	fill(&o.CheckpointEvery, "JIKKEN_CHECKPOINT_EVERY")
	fill(&o.CheckpointBefore, "JIKKEN_CHECKPOINT_BEFORE")
	fill(&o.CheckpointMax, "JIKKEN_CHECKPOINT_MAX")
	if o.Attempt == 0 {
		o.Attempt, _ = strconv.Atoi(os.Getenv("JIKKEN_ATTEMPT"))
	}
	o.Argv = t.Argv
	return nil
}

func newInstallCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "install DEST",
		Short: "Copy this jikken binary to DEST (an init container's shared volume)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return executor.Install(args[0])
		},
	}
}

func newCodeCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "code DEST",
		Short: "Check out a run's code snapshot (base commit plus ghosts) into DEST",
		Long: `Code clones the snapshot's base commit and applies its ghosts into DEST, so a trial on another
machine runs exactly the code that was launched. The snapshot (JSON, as in the run manifest)
comes from --snapshot-file or $JIKKEN_CODE_SNAPSHOT. It needs git on PATH.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			snap := []byte(os.Getenv("JIKKEN_CODE_SNAPSHOT"))
			if file != "" {
				b, err := os.ReadFile(file)
				if err != nil {
					return err
				}
				snap = b
			}
			if len(snap) == 0 {
				return cmdutil.UsageError("no snapshot: set JIKKEN_CODE_SNAPSHOT or pass --snapshot-file")
			}
			return executor.Checkout(cmd.Context(), snap, args[0])
		},
	}
	cmd.Flags().StringVar(&file, "snapshot-file", "", "file holding the snapshot JSON")
	return cmd
}
