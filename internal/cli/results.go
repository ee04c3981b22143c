package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/texttable"
	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/results/parquetout"
)

func newResultsCmd(f *cmdutil.Factory) *cobra.Command {
	var (
		output  string
		curves  bool
		metrics []string
		where   []string
		out     string
	)
	cmd := &cobra.Command{
		Use:   "results RUN",
		Short: "Print one row per trial: status, params, seed and final metrics",
		Long: `Results prints RUN as one long table, a row per trial (services left out): trial, status, each
param, seed, and each metric's final value (from result.json, else the last value the trial
logged in metrics.jsonl). This table is what 'jikken compare' and notebooks consume. A race's
eliminated configurations are listed under the table, each with the test that eliminated it.

With --curves it prints every value each trial logged instead, one row per line of its
metrics.jsonl (long format, for R, pandas or a spreadsheet): trial, status, each param, seed,
metric, step, value, time. step is the logged step, or the line's index among the trial's lines
of that metric when it has none; time is the seconds since the trial's first timestamped line.
--metric keeps only the metrics named.

--where keeps the trials whose columns meet every condition: COLUMN=VALUE, COLUMN!=VALUE, or a
numeric comparison COLUMN<VALUE (also <=, >, >=) on params, seed and final metrics, e.g.
--where fn=sphere --where 'lr<0.01' --where 'best>=1e-3'. A NaN or empty cell meets no
comparison. compare, plot, report and the browser read the same conditions.

In -o json, numbers are JSON numbers (params keep the type the experiment gave them); NaN and
infinite values are the strings "NaN", "Infinity" and "-Infinity", as in metrics.jsonl.

-o parquet writes the results table as a Parquet file (--out FILE, required): columns run,
trial, group, status, each param, seed and each final metric, typed (a param keeps the type its
values share: int64, double, bool or string; metrics are doubles), null where a trial has no
value. pandas.read_parquet, polars, DuckDB and Arrow read it without parsing text. --out also
takes the other formats, written to FILE instead of standard output.`,
		Example: `  jikken results latest
  jikken results latest -o csv > results.csv
  jikken results latest -o json | jq '.[0]'
  jikken results latest --curves --metric loss -o csv > curves.csv
  jikken results latest --where 'lr<0.01' --where status=succeeded
  jikken results latest -o parquet --out results.parquet`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(metrics) > 0 && !curves {
				return cmdutil.UsageError("--metric goes with --curves; the results table has every metric as a column")
			}
			if output == "parquet" && out == "" {
				return cmdutil.UsageError("-o parquet writes a file: name it with --out FILE")
			}
			if out != "" && output == "table" {
				return cmdutil.UsageError("--out writes -o csv, json or parquet; the table is for the terminal")
			}
			if output == "parquet" && curves {
				return cmdutil.UsageError("-o parquet writes the results table, one row per trial; for --curves use -o csv or -o json")
			}
			runs, id, err := resolveRun(ctx, f, args[0])
			if err != nil {
				return err
			}
			var (
				t          *results.Table
				records    []map[string]any
				eliminated []string
			)
			if curves {
				cs, err := results.LoadCurves(ctx, runs, id)
				if err != nil {
					return err
				}
				if cs, err = whereCurves(cs, where); err != nil {
					return err
				}
				t, records = results.CurvesTable(cs, metrics), results.CurveRecords(cs, metrics)
			} else {
				rows, err := results.Load(ctx, runs, id)
				if err != nil {
					return err
				}
				if rows, err = whereRows(rows, where); err != nil {
					return err
				}
				if output == "parquet" {
					return writeFileAtomic(out, func(w io.Writer) error { return parquetout.Write(w, id, rows) })
				}
				t, records = results.ToTable(rows), results.Records(rows)
				eliminated = eliminations(rows)
			}
			switch output {
			case "csv", "json":
				write := func(w io.Writer) error { return t.WriteCSV(w) }
				if output == "json" {
					write = func(w io.Writer) error { return cmdutil.WriteJSON(w, records) }
				}
				if out != "" {
					return writeFileAtomic(out, write)
				}
				return write(f.IO.Out)
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
			if err := tb.Write(f.IO.Out); err != nil || curves {
				return err
			}
			writeEliminations(f.IO.Out, eliminated)
			// A search's best trial (or Pareto front) is what its results are read for.
			if v, err := loadSearch(ctx, f, id); err == nil {
				writeBest(f.IO.Out, v)
			}
			return nil
		},
	}
	cmdutil.FormatFlag(cmd, &output, "table", "csv", "json", "parquet")
	cmd.Flags().StringVar(&out, "out", "", "write to this file instead of standard output (required for -o parquet)")
	_ = cmd.MarkFlagFilename("out")
	cmd.Flags().BoolVar(&curves, "curves", false, "every logged value, one row per metrics.jsonl line (long format)")
	cmd.Flags().StringArrayVar(&metrics, "metric", nil, "with --curves: keep only this metric (repeatable)")
	cmd.Flags().StringArrayVar(&where, "where", nil, "keep trials where COLUMN=VALUE, COLUMN!=VALUE or COLUMN<VALUE (<=, >, >=) (repeatable; all must hold)")
	return cmd
}

// whereRows keeps the rows whose line of the results table meets every condition.
func whereRows(rows []results.Row, where []string) ([]results.Row, error) {
	if len(where) == 0 {
		return rows, nil
	}
	for _, w := range where {
		if _, err := report.ParseCond(w); err != nil {
			return nil, cmdutil.UsageError("%v", err)
		}
	}
	t := results.ToTable(rows)
	kept, err := report.Where(t, where)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, r := range kept.Rows {
		keep[r[t.Col("trial")]] = true
	}
	var out []results.Row
	for _, r := range rows {
		if keep[r.Trial] {
			out = append(out, r)
		}
	}
	return out, nil
}

// whereCurves keeps the curves of the trials whose results meet every condition.
func whereCurves(cs []results.Curve, where []string) ([]results.Curve, error) {
	rows := make([]results.Row, len(cs))
	for i, c := range cs {
		rows[i] = c.Row
	}
	kept, err := whereRows(rows, where)
	if err != nil || len(kept) == len(cs) {
		return cs, err
	}
	keep := map[string]bool{}
	for _, r := range kept {
		keep[r.Trial] = true
	}
	var out []results.Curve
	for _, c := range cs {
		if keep[c.Row.Trial] {
			out = append(out, c)
		}
	}
	return out, nil
}

// writeFileAtomic writes path through write, into a temporary file beside it renamed into place
// once complete, so a failed write leaves no half file (and an older file stays as it was).
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing left to remove
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it private; a result is not
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
