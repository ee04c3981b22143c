package cli

import (
	"context"

	"github.com/jikken-dev/jikken/backend/docker"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
)

func init() {
	backends["docker"] = func(context.Context, *cmdutil.Factory) (runner.Backend, error) {
		return docker.New(docker.Options{})
	}
}
