package cli

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/jikken-dev/jikken/backend/slurm"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// newSlurmBackend submits to the cluster the Slurm client commands on PATH talk to (SLURM_CONF
// as usual), with --partition, --account, --qos and --sbatch-arg; the trials get the store and
// the jikken binary as on the local backend, since a cluster's nodes share the login node's
// home. With an S3 store, trials run under jikken trial-exec, which uploads their outputs from
// the node. Pending reasons go to stderr with the run's messages (docs/slurm.md).
func newSlurmBackend(_ context.Context, f *cmdutil.Factory, blob store.Blob, s backendSettings) (runner.Backend, error) {
	cfg := slurm.Config{
		Partition: s.Partition, Account: s.Account, QOS: s.QOS, SbatchArgs: s.SbatchArgs, ArrayLimit: s.Jobs,
		Log: slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	cfg.Env = append(cfg.Env, "JIKKEN_STORE="+blob.Location())
	if strings.HasPrefix(blob.Location(), "s3://") {
		// The nodes write to the store themselves, with no folder shared with this machine.
		cfg.Upload = &slurm.Upload{Store: blob.Location(), Jikken: f.Executable}
		if cfg.Upload.Jikken == "" {
			cfg.Upload.Jikken = "jikken"
		}
	}
	if f.Executable != "" {
		cfg.Env = append(cfg.Env, "JIKKEN_BIN="+f.Executable)
		cfg.PathPrepend = filepath.Dir(f.Executable)
	}
	return slurm.New(cfg), nil
}
