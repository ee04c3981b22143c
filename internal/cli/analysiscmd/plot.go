package analysiscmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/results"
)

// PlotOptions are the inputs of `jikken plot`.
type PlotOptions struct {
	Factory *cmdutil.Factory
	Source  string
	Kind    string
	report.Options
	Where []string
	// Format is png or svg: -o, else the extension of Out, the file to write.
	Format string
	Out    string
}

// NewPlotCmd builds `jikken plot`.
func NewPlotCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &PlotOptions{Factory: f}
	var out *cmdutil.PathOutput
	cmd := &cobra.Command{
		Use:   "plot RUN|FILE.csv --kind box|curve|cd --by COL --metric NAME --out FILE.png",
		Short: "Plot a metric per group: boxes, convergence curves or a critical-difference diagram",
		Long: `Plot draws one picture of a metric, grouped by a column of the results table, as PNG or
SVG (-o png or -o svg; by default the extension of --out).

  box    a box per group (median, quartiles, whiskers to 1.5 IQR) with every trial drawn as a point
  curve  the metric over steps from each trial's metrics.jsonl: per group, the median over trials
         and the inter-quartile band (needs a run, not a CSV file)
  cd     Demšar's critical-difference diagram of mean ranks (needs --pair-by and 3+ groups)

Only succeeded trials are drawn. For a run, --by defaults to the only parameter whose value
varies across trials (seed and the --pair-by columns aside); a CSV file needs --by.`,
		Example: `  jikken plot latest --kind box --by algo --metric loss --out loss.png
  jikken plot latest --kind curve --by algo --metric loss --out curves.svg
  jikken plot results.csv --kind cd --by algo --metric loss --pair-by seed --lower-is-better --out cd.png`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			if err := out.Resolve(f.IO); err != nil {
				return err
			}
			opts.Out = out.Path
			if out.FormatGiven() {
				opts.Format = out.Format
			}
			return runPlot(cmd.Context(), opts)
		},
	}
	out = cmdutil.AddPathOutput(cmd, "out", "", "file to write (required)", "png", "svg")
	fl := cmd.Flags()
	fl.StringVar(&opts.Kind, "kind", "box", "what to draw: box, curve or cd")
	fl.StringVar(&opts.By, "by", "", "column whose values are the groups (for a run, default: the only param that varies)")
	fl.StringVar(&opts.Metric, "metric", "", "metric to plot (required)")
	fl.StringVar(&opts.PairBy, "pair-by", "", "column(s) that pair rows across groups, e.g. seed or fn,seed (for cd)")
	fl.BoolVar(&opts.LowerIsBetter, "lower-is-better", false, "smaller metric values are better (ranks for cd)")
	fl.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level of the critical difference")
	fl.StringArrayVar(&opts.Where, "where", nil, "plot only rows where COLUMN=VALUE (repeatable; all must hold)")
	_ = cmd.MarkFlagRequired("metric")
	return cmd
}

func runPlot(ctx context.Context, opts *PlotOptions) error {
	if opts.Out == "" {
		return cmdutil.UsageError("missing --out FILE: the file to write the plot to")
	}
	format := opts.Format
	if format == "" {
		format = strings.TrimPrefix(strings.ToLower(filepath.Ext(opts.Out)), ".")
	}
	if format != "png" && format != "svg" {
		return cmdutil.UsageError("--out %q: name a file ending in .png or .svg, or choose the format with -o png or -o svg", opts.Out)
	}
	if opts.Alpha <= 0 || opts.Alpha >= 1 {
		return cmdutil.UsageError("--alpha %v is outside (0, 1); use e.g. 0.05", opts.Alpha)
	}
	if opts.By == "" {
		if isFile(opts.Source) {
			return cmdutil.UsageError("--by is required with a CSV file: name the column whose values are the groups")
		}
		by, err := inferBy(ctx, opts.Factory, opts.Source, opts.PairBy, opts.Where)
		if err != nil {
			return err
		}
		opts.By = by
	}
	var (
		p   *plot.Plot
		err error
	)
	switch opts.Kind {
	case "box", "cd":
		p, err = comparisonPlot(ctx, opts)
	case "curve":
		p, err = curvePlot(ctx, opts)
	default:
		return cmdutil.UsageError("unknown --kind %q; use box, curve or cd", opts.Kind)
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := chart.Write(&buf, p, format, chart.Width, chart.Height); err != nil {
		return err
	}
	if err := os.WriteFile(opts.Out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	return nil
}

// inferBy picks the grouping column of a run as report does: the only param that varies.
func inferBy(ctx context.Context, f *cmdutil.Factory, ref, pairBy string, where []string) (string, error) {
	runs, id, err := openRun(ctx, f, ref)
	if err != nil {
		return "", err
	}
	m, err := runs.Manifest(ctx, id)
	if err != nil {
		return "", err
	}
	t, err := results.LoadTable(ctx, runs, id)
	if err != nil {
		return "", err
	}
	if t, err = report.Where(t, where); err != nil {
		return "", err
	}
	by, note := chooseBy("", pairBy, t, paramNames(m))
	if by == "" {
		return "", cmdutil.UsageError("%s; see 'jikken results %s'", strings.TrimPrefix(note, "no comparison: "), id)
	}
	return by, nil
}

func comparisonPlot(ctx context.Context, opts *PlotOptions) (*plot.Plot, error) {
	t, err := loadTable(ctx, opts.Factory, opts.Source)
	if err != nil {
		return nil, err
	}
	if t, err = report.Where(t, opts.Where); err != nil {
		return nil, fmt.Errorf("plot %s: %w", opts.Source, err)
	}
	c, err := report.Compare(t, opts.Options)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", opts.Source, err)
	}
	warnDropped(opts.Factory.IO.ErrOut, c)
	if opts.Kind == "cd" {
		return c.CDPlot()
	}
	return c.BoxPlot()
}

func curvePlot(ctx context.Context, opts *PlotOptions) (*plot.Plot, error) {
	if isFile(opts.Source) {
		return nil, fmt.Errorf("plot %s: convergence curves come from a run's metrics.jsonl files; pass a run id instead of a CSV file", opts.Source)
	}
	runs, id, err := openRun(ctx, opts.Factory, opts.Source)
	if err != nil {
		return nil, err
	}
	t, err := results.LoadTable(ctx, runs, id)
	if err != nil {
		return nil, err
	}
	if t, err = report.Where(t, opts.Where); err != nil {
		return nil, fmt.Errorf("plot %s: %w", opts.Source, err)
	}
	bands, err := curveBands(ctx, runs, id, t, opts.By, opts.Metric)
	if err != nil {
		return nil, err
	}
	return report.CurvePlot(opts.Metric, opts.By, bands)
}
