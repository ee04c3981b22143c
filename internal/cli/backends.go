package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
)

// backends maps --backend names to constructors; each backend adds itself in its own file.
var backends = map[string]func(ctx context.Context, f *cmdutil.Factory) (runner.Backend, error){
	"local": func(context.Context, *cmdutil.Factory) (runner.Backend, error) { return &local.Backend{}, nil },
}

func openBackend(ctx context.Context, f *cmdutil.Factory, name string) (runner.Backend, error) {
	mk, ok := backends[name]
	if !ok {
		names := make([]string, 0, len(backends))
		for n := range backends {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, cmdutil.UsageError("unknown backend %q; use one of %s", name, strings.Join(names, ", "))
	}
	b, err := mk(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", name, err)
	}
	return b, nil
}
