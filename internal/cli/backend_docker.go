package cli

import (
	"context"
	"log/slog"
	"os"

	"github.com/jikken-dev/jikken/backend/docker"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
)

func init() {
	backends["docker"] = func(_ context.Context, f *cmdutil.Factory, _ backendSettings) (runner.Backend, error) {
		// Warnings (the engine went away and jikken waits for it) go to stderr with the run's.
		log := slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
		// JIKKEN_DOCKER_FILES=copy|bind overrides how params and outputs travel (docs/docker.md).
		return docker.New(docker.Options{Log: log, Files: docker.Files(os.Getenv("JIKKEN_DOCKER_FILES"))})
	}
}
