package slurm

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/jikken-dev/jikken/runner"
)

// Settings are the slurm backend's settings: where its jobs go, recorded with the run so that
// resume submits to the same place.
type Settings struct {
	Partition  string   `flag:"partition" record:"partition" help:"partition of the jobs (default: the cluster's)"`
	Account    string   `flag:"account" record:"account" help:"account the jobs are charged to"`
	QOS        string   `flag:"qos" record:"qos" help:"quality of service of the jobs"`
	SbatchArgs []string `flag:"sbatch-arg" record:"sbatch-arg" was:"sbatch-args" help:"an sbatch option added to every job, as one argument (repeat it: --sbatch-arg=--constraint=a100)"`
}

func init() {
	runner.Register(runner.Descriptor{
		Name:     "slurm",
		Settings: func() any { return &Settings{} },
		Caps:     runner.Capabilities{Adopts: true, StoresOutputs: true, DeletesRuns: true},
		Noun:     "job",
		Open:     open,
	})
}

// open submits to the cluster the Slurm client commands on PATH talk to (SLURM_CONF as
// usual); the trials get the store and the jikken binary as on the local backend, since a
// cluster's nodes share the login node's home. With an S3 store, trials run under jikken
// trial-exec, which uploads their outputs from the node. Pending reasons go to the command's
// stderr (docs/slurm.md).
func open(_ context.Context, env runner.Env, settings any) (runner.Backend, error) {
	s := settings.(*Settings)
	cfg := Config{
		Partition: s.Partition, Account: s.Account, QOS: s.QOS, SbatchArgs: s.SbatchArgs, ArrayLimit: env.Jobs,
		Log: slog.New(slog.NewTextHandler(env.Log, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	loc := env.Store.Location()
	cfg.Env = append(cfg.Env, "JIKKEN_STORE="+loc)
	if strings.HasPrefix(loc, "s3://") {
		// The nodes write to the store themselves, with no folder shared with this machine.
		cfg.Upload = &Upload{Store: loc, Jikken: env.Executable}
		if cfg.Upload.Jikken == "" {
			cfg.Upload.Jikken = "jikken"
		}
	}
	if env.Executable != "" {
		cfg.Env = append(cfg.Env, "JIKKEN_BIN="+env.Executable)
		cfg.PathPrepend = filepath.Dir(env.Executable)
	}
	return New(cfg), nil
}
