package cli

import (
	"context"
	"errors"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/lease"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/core"
)

// admission is what a command decided, once, about running a plan here: the capacity of this
// host its trials share (nil where the backend places them elsewhere) and the book of GPU leases
// the host's runs share.
type admission struct {
	capacity *core.Capacity
	leases   *lease.Book
}

// admit finds what this host offers and asks the backend and the host whether trials can run:
// once per command, since discovery runs nvidia-smi and a cluster's check makes requests.
func admit(ctx context.Context, backend runner.Backend, trials []experiment.Trial, h hostSettings) (*admission, error) {
	capacity, leases, _, err := hostCapacity(ctx, backend, h)
	if err != nil {
		return nil, err
	}
	if err := runner.Admit(ctx, backend, trials, capacity); err != nil {
		if errors.Is(err, runner.ErrUnfit) {
			// The plan, not the host, is to change (the message says how): exit 2, as for
			// any input that cannot run, before anything has started.
			return nil, &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
		}
		return nil, err
	}
	return &admission{capacity: capacity, leases: leases}, nil
}
