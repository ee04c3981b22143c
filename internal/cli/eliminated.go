package cli

import (
	"fmt"
	"io"
	"slices"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

// eliminations are the reasons of the eliminated rows, once each, in plan order: a race's
// eliminations name the configuration and the test, and every trial of one shares its reason.
func eliminations(rows []results.Row) []string {
	var out []string
	for _, r := range rows {
		if r.Status == store.Eliminated && !slices.Contains(out, r.Reason) {
			out = append(out, r.Reason)
		}
	}
	return out
}

// writeEliminations lists, under the results table, the configurations a race eliminated and
// the test that put each out: its eliminated trials are the plan working, not failures.
func writeEliminations(w io.Writer, reasons []string) {
	if len(reasons) == 0 {
		return
	}
	fmt.Fprintf(w, "eliminated (%d configurations):\n", len(reasons))
	for _, why := range reasons {
		fmt.Fprintf(w, "  %s\n", why)
	}
}
