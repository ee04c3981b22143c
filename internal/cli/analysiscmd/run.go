package analysiscmd

import (
	"context"
	"fmt"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/results"
)

// runTable reads a run's results table (one row per trial) from the store.
func runTable(ctx context.Context, f *cmdutil.Factory, runID string) (*results.Table, error) {
	_ = ctx
	return nil, fmt.Errorf("read run %q: reading runs from %s is not wired yet; export them with 'jikken results %s -o csv > results.csv' and pass results.csv", runID, f.StoreURL, runID)
}
