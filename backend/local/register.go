package local

import (
	"context"
	"path/filepath"

	"github.com/jikken-dev/jikken/runner"
)

func init() {
	runner.Register(runner.Descriptor{
		Name:    "local",
		Default: true,
		Caps:    runner.Capabilities{OnThisHost: true, HealthChecks: true},
		Open:    open,
	})
}

// open gives trials the store and the jikken binary that runs them, so a final step can read
// its siblings' results with 'jikken results "$JIKKEN_RUN_ID"'.
func open(_ context.Context, env runner.Env, _ any) (runner.Backend, error) {
	b := &Backend{Env: []string{"JIKKEN_STORE=" + env.Store.Location()}, NoEnforce: env.NoEnforce}
	if env.Executable != "" {
		b.Env = append(b.Env, "JIKKEN_BIN="+env.Executable)
		b.PathPrepend = filepath.Dir(env.Executable)
	}
	return b, nil
}
