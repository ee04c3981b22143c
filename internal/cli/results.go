package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/texttable"
	"github.com/jikken-dev/jikken/results"
)

func newResultsCmd(f *cmdutil.Factory) *cobra.Command {
	var (
		output  string
		curves  bool
		metrics []string
	)
	cmd := &cobra.Command{
		Use:   "results RUN",
		Short: "Print one row per trial: status, params, seed and final metrics",
		Long: `Results prints RUN as one long table, a row per trial (services left out): trial, status, each
param, seed, and each metric's final value (from result.json, else the last value the trial
logged in metrics.jsonl). This table is what 'jikken compare' and notebooks consume.

With --curves it prints every value each trial logged instead, one row per line of its
metrics.jsonl (long format, for R, pandas or a spreadsheet): trial, status, each param, seed,
metric, step, value, time. step is the logged step, or the line's index among the trial's lines
of that metric when it has none; time is the seconds since the trial's first timestamped line.
--metric keeps only the metrics named.

In -o json, numbers are JSON numbers (params keep the type the experiment gave them); NaN and
infinite values are the strings "NaN", "Infinity" and "-Infinity", as in metrics.jsonl.`,
		Example: `  jikken results latest
  jikken results latest -o csv > results.csv
  jikken results latest -o json | jq '.[0]'
  jikken results latest --curves --metric loss -o csv > curves.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(metrics) > 0 && !curves {
				return cmdutil.UsageError("--metric goes with --curves; the results table has every metric as a column")
			}
			runs, id, err := resolveRun(ctx, f, args[0])
			if err != nil {
				return err
			}
			var (
				t       *results.Table
				records []map[string]any
			)
			if curves {
				cs, err := results.LoadCurves(ctx, runs, id)
				if err != nil {
					return err
				}
				t, records = results.CurvesTable(cs, metrics), results.CurveRecords(cs, metrics)
			} else {
				rows, err := results.Load(ctx, runs, id)
				if err != nil {
					return err
				}
				t, records = results.ToTable(rows), results.Records(rows)
			}
			switch output {
			case "csv":
				return t.WriteCSV(f.IO.Out)
			case "json":
				return cmdutil.WriteJSON(f.IO.Out, records)
			}
			var tb texttable.Table
			head := make([]string, len(t.Columns))
			for i, c := range t.Columns {
				head[i] = strings.ToUpper(c)
			}
			tb.Row(head...)
			for _, r := range t.Rows {
				tb.Row(r...)
			}
			return tb.Write(f.IO.Out)
		},
	}
	cmdutil.FormatFlag(cmd, &output, "table", "csv", "json")
	cmd.Flags().BoolVar(&curves, "curves", false, "every logged value, one row per metrics.jsonl line (long format)")
	cmd.Flags().StringArrayVar(&metrics, "metric", nil, "with --curves: keep only this metric (repeatable)")
	return cmd
}
