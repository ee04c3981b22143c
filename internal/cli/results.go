package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/results"
)

func newResultsCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "results RUN",
		Short: "Print one row per trial: status, params, seed and final metrics",
		Long: `Results prints RUN as one long table, a row per trial (services left out): trial, status, each
param, seed, and each metric's final value (from result.json, else the last value the trial
logged in metrics.jsonl). This table is what 'jikken compare' and notebooks consume.`,
		Example: `  jikken results latest
  jikken results latest -o csv > results.csv
  jikken results latest -o json | jq '.[0]'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			runs, id, err := resolveRun(ctx, f, args[0])
			if err != nil {
				return err
			}
			t, err := results.LoadTable(ctx, runs, id)
			if err != nil {
				return err
			}
			switch output {
			case "csv":
				return t.WriteCSV(f.IO.Out)
			case "json":
				rows := make([]map[string]string, 0, len(t.Rows))
				for _, r := range t.Rows {
					m := make(map[string]string, len(t.Columns))
					for i, c := range t.Columns {
						if r[i] != "" {
							m[c] = r[i]
						}
					}
					rows = append(rows, m)
				}
				return cmdutil.WriteJSON(f.IO.Out, rows)
			}
			tw := tabwriter.NewWriter(f.IO.Out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, strings.ToUpper(strings.Join(t.Columns, "\t")))
			for _, r := range t.Rows {
				fmt.Fprintln(tw, strings.Join(r, "\t"))
			}
			return tw.Flush()
		},
	}
	cmdutil.FormatFlag(cmd, &output, "table", "csv", "json")
	return cmd
}
