package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// backends maps --backend names to constructors; each backend adds itself in its own file.
var backends = map[string]func(ctx context.Context, f *cmdutil.Factory) (runner.Backend, error){
	"local": newLocalBackend,
}

// newLocalBackend gives trials the store and the jikken binary that runs them, so a final step
// can read its siblings' results with 'jikken results "$JIKKEN_RUN_ID"'.
func newLocalBackend(ctx context.Context, f *cmdutil.Factory) (runner.Backend, error) {
	b := &local.Backend{}
	if blob, err := store.Open(ctx, f.StoreURL); err == nil {
		b.Env = append(b.Env, "JIKKEN_STORE="+blob.Location())
	}
	if f.Executable != "" {
		b.Env = append(b.Env, "JIKKEN_BIN="+f.Executable)
		b.PathPrepend = filepath.Dir(f.Executable)
	}
	return b, nil
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
