package analysiscmd

import (
	"context"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

// openRun opens the store and resolves what the user typed (an id, a unique prefix, "latest")
// to a run id.
func openRun(ctx context.Context, f *cmdutil.Factory, ref string) (store.Runs, string, error) {
	b, err := store.Open(ctx, f.StoreURL)
	if err != nil {
		return store.Runs{}, "", err
	}
	runs := store.Runs{Blob: b}
	id, err := runs.Resolve(ctx, ref)
	if err != nil {
		return store.Runs{}, "", err
	}
	return runs, id, nil
}

// runTable reads a run's results table (one row per trial), as `jikken results RUN -o csv`
// prints it.
func runTable(ctx context.Context, f *cmdutil.Factory, ref string) (*results.Table, error) {
	runs, id, err := openRun(ctx, f, ref)
	if err != nil {
		return nil, err
	}
	return results.LoadTable(ctx, runs, id)
}
