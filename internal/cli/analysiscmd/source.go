package analysiscmd

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/results"
)

// isFile reports whether the command argument names a CSV file (or stdin as "-") rather than a
// run id: a name ending in .csv, or an existing file that is not a folder.
func isFile(arg string) bool {
	if arg == "-" || strings.HasSuffix(strings.ToLower(arg), ".csv") {
		return true
	}
	st, err := os.Stat(arg)
	return err == nil && !st.IsDir()
}

// loadTable reads the table a command compares: a CSV file with a header, stdin, or a run's
// results from the store.
func loadTable(ctx context.Context, f *cmdutil.Factory, arg string) (*results.Table, error) {
	if !isFile(arg) {
		return runTable(ctx, f, arg)
	}
	if arg == "-" {
		return results.ReadCSV(f.IO.In, "standard input")
	}
	file, err := os.Open(arg)
	if err != nil {
		return nil, fmt.Errorf("open results table: %w", err)
	}
	defer file.Close()
	return results.ReadCSV(file, arg)
}
