package docker

import (
	"context"
	"log/slog"
	"os"

	"github.com/jikken-dev/jikken/runner"
)

func init() {
	runner.Register(runner.Descriptor{
		Name: "docker",
		Caps: runner.Capabilities{OnThisHost: true, Images: true, HealthChecks: true, DeletesRuns: true, ImageDigests: true},
		Noun: "container",
		Open: open,
	})
}

// open sends the backend's warnings (the engine went away and jikken waits for it) to the
// command's stderr; JIKKEN_DOCKER_FILES=copy|bind overrides how params and outputs travel
// (docs/docker.md).
func open(_ context.Context, env runner.Env, _ any) (runner.Backend, error) {
	log := slog.New(slog.NewTextHandler(env.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return New(Options{Log: log, Files: Files(os.Getenv("JIKKEN_DOCKER_FILES"))})
}
