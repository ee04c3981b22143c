package cli

import (
	"context"
	"log/slog"
	"os"

	"github.com/jikken-dev/jikken/backend/docker"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// newDockerBackend sends the backend's warnings (the engine went away and jikken waits for it)
// to stderr with the run's; JIKKEN_DOCKER_FILES=copy|bind overrides how params and outputs
// travel (docs/docker.md).
func newDockerBackend(_ context.Context, f *cmdutil.Factory, _ store.Blob, _ backendSettings) (runner.Backend, error) {
	log := slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return docker.New(docker.Options{Log: log, Files: docker.Files(os.Getenv("JIKKEN_DOCKER_FILES"))})
}
