package cli

import (
	"context"
	"log/slog"

	"github.com/jikken-dev/jikken/backend/docker"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
)

func init() {
	backends["docker"] = func(_ context.Context, f *cmdutil.Factory, _ backendSettings) (runner.Backend, error) {
		// Warnings (the engine went away and jikken waits for it) go to stderr with the run's.
		log := slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
		return docker.New(docker.Options{Log: log})
	}
}
