package results

import (
	"context"

	"github.com/jikken-dev/jikken/store"
)

// FinalMetrics reads one trial's final metrics as Load does: result.json's numbers over the last
// value of each metric in metrics.jsonl. A trial that stored neither has none.
func FinalMetrics(ctx context.Context, b store.Blob, run, trial string) (map[string]float64, error) {
	return finalMetrics(ctx, b, run, trial)
}
