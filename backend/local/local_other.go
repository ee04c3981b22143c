//go:build !unix

package local

import (
	"context"
	"errors"
	"log/slog"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

// Backend is the local-process backend. It runs trials on Linux and macOS, whose process
// sessions, signals and cgroups it relies on; on this system it refuses them.
type Backend struct {
	Log         *slog.Logger
	ProcRoot    string
	Env         []string
	PathPrepend string
	NoEnforce   bool
	CgroupRoot  string
}

var errUnsupported = errors.New("the local backend runs trials on Linux and macOS; on Windows run jikken in WSL 2, or use --backend docker or --backend kubernetes")

// Name implements runner.Backend.
func (b *Backend) Name() string { return "local" }

// Start implements runner.Backend: it refuses.
func (b *Backend) Start(context.Context, *runner.Attempt) (runner.Process, error) {
	return nil, errUnsupported
}

// Live implements runner.Backend: nothing can have been started here.
func (b *Backend) Live(context.Context, string) ([]runner.LiveTrial, error) { return nil, nil }

// StopLive implements runner.Backend.
func (b *Backend) StopLive(context.Context, runner.LiveTrial) error { return nil }

// Plan implements runner.Backend.
func (b *Backend) Plan([]experiment.Trial) {}

// Check implements runner.Checker: the run is refused before anything starts.
func (b *Backend) Check(context.Context, []experiment.Trial) error { return errUnsupported }
