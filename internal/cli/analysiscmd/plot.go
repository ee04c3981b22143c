package analysiscmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

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
	// Format is png, svg, pdf (or csv, json: the numbers of curves): -o, else the extension of
	// Out, the file to write.
	Format string
	Out    string
	// ForceCD draws a critical-difference diagram even when Friedman is not significant.
	ForceCD bool
	Curve   curveOptions
	Style   chart.Style
	// Order and Rename arrange the groups (report.Arrange).
	Order  []string
	Rename map[string]string
	flags  testFlags
	figure figureFlags
	looks  plotFlags
}

// NewPlotCmd builds `jikken plot`.
func NewPlotCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &PlotOptions{Factory: f}
	var out *cmdutil.PathOutput
	cmd := &cobra.Command{
		Use:   "plot RUN|FILE.csv --kind box|curve|cd --by COL --metric NAME --out FILE.png",
		Short: "Plot a metric per group: boxes, convergence curves or a critical-difference diagram",
		Long: `Plot draws one picture of a metric, grouped by a column of the results table, as PNG, SVG
or PDF (-o png|svg|pdf, by default the extension of --out). SVGs name their fonts rather than embed them, and fix
each label's width so every viewer lays it out the same; PDFs draw text as outlines. Names in
any script are drawn: characters Liberation Sans lacks (CJK) come from Noto Sans CJK or another
system font (--font FILE to choose one). Long names are wrapped, or turned upright when there
is no room. --width, --height and --font-size size the figure for a paper (a size too small
for its labels is refused); --title, --xlabel, --ylabel, --log-x, --log-y, --legend, --order and
--rename set what it says and how.

  box    a box per group (median, quartiles, whiskers to 1.5 IQR) with every trial drawn as a point
  curve  the metric over steps (--x time: seconds) from each trial's metrics.jsonl: each trial's
         last value carried forward onto a common grid (every step logged, or --grid N
         points), then per group the median and inter-quartile band over its trials (needs a
         run, not a CSV file; --out FILE.csv or FILE.json writes the numbers instead)
  cd     Demšar's critical-difference diagram of mean ranks (needs --pair-by and 3+ groups, and
         a significant Friedman test unless --force-cd)

Every kind follows the rules of 'jikken compare' (--failed, --incomplete, the direction):
curves draw the trials whose final value compare describes, so each group's last point is
compare's median; failed trials, and trials whose final value is NaN or infinite (ranked worst
by compare), are listed on stderr and in the numbers as left out, not drawn at their last
finite value. For a run, --by defaults to the only parameter whose value
varies across trials (seed and the --pair-by columns aside); a CSV file needs --by.`,
		Example: `  jikken plot latest --kind box --by algo --metric loss --out loss.png
  jikken plot latest --kind curve --by algo --metric loss --out curves.svg
  jikken plot latest --kind curve --metric best --grid 200 --out curves.csv
  jikken plot latest --kind cd --metric best --pair-by fn,seed --lower-is-better --width 8.5cm --out cd.pdf
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
			if err := opts.flags.apply(&opts.Options); err != nil {
				return err
			}
			if err := opts.figure.apply(&opts.Style); err != nil {
				return err
			}
			rename, err := opts.looks.apply(&opts.Style)
			if err != nil {
				return err
			}
			opts.Order, opts.Rename = opts.looks.order, rename
			return runPlot(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Kind, "kind", "box", "what to draw: box, curve or cd")
	fl.StringVar(&opts.By, "by", "", "column whose values are the groups (for a run, default: the only param that varies)")
	fl.StringVar(&opts.Metric, "metric", "", "metric to plot (required)")
	fl.StringVar(&opts.PairBy, "pair-by", "", "column(s) that pair rows across groups, e.g. seed or fn,seed (for cd)")
	opts.flags.register(fl)
	fl.BoolVar(&opts.ForceCD, "force-cd", false, "draw the critical-difference diagram even when Friedman is not significant")
	opts.figure.register(fl)
	opts.looks.register(fl)
	fl.StringVar(&opts.Curve.x, "x", "step", "curves: the x axis, step or time (seconds since each trial's first timestamped line)")
	fl.IntVar(&opts.Curve.grid, "grid", 0, "curves: evaluate on N evenly spaced points instead of every step logged")
	fl.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level of the critical difference")
	fl.StringArrayVar(&opts.Where, "where", nil, "plot only rows where COLUMN=VALUE (repeatable; all must hold)")
	out = cmdutil.AddPathOutput(cmd, "out", "", "file to write, ending in .png, .svg or .pdf (.csv or .json: the curves' numbers) (required)", "png", "svg", "pdf", "csv", "json")
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
	switch {
	case (format == "csv" || format == "json") && opts.Kind == "curve":
		// The curves' numbers rather than their picture.
	case format != "png" && format != "svg" && format != "pdf":
		return cmdutil.UsageError("--out %q: name a file ending in .png, .svg or .pdf (.csv or .json for the numbers of --kind curve), or choose the format with -o", opts.Out)
	}
	if opts.Alpha <= 0 || opts.Alpha >= 1 {
		return cmdutil.UsageError("--alpha %v is outside (0, 1); use e.g. 0.05", opts.Alpha)
	}
	if err := opts.Curve.check(); err != nil {
		return cmdutil.UsageError("%v", err)
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
		fig *chart.Figure
		err error
	)
	switch opts.Kind {
	case "box", "cd":
		fig, err = comparisonPlot(ctx, opts)
	case "curve":
		var c *report.Curves
		if c, err = curves(ctx, opts); err != nil {
			return err
		}
		if format == "csv" || format == "json" {
			return writeCurves(opts.Out, format, c)
		}
		fig, err = c.Plot(opts.Style)
	default:
		return cmdutil.UsageError("unknown --kind %q; use box, curve or cd", opts.Kind)
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf, format); err != nil {
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

func comparisonPlot(ctx context.Context, opts *PlotOptions) (*chart.Figure, error) {
	t, err := loadTable(ctx, opts.Factory, opts.Source)
	if err != nil {
		return nil, err
	}
	if t, err = report.Where(t, opts.Where); err != nil {
		return nil, fmt.Errorf("plot %s: %w", opts.Source, err)
	}
	if t, err = report.Arrange(t, opts.By, opts.Order, opts.Rename); err != nil {
		return nil, cmdutil.UsageError("plot %s: %v", opts.Source, err)
	}
	c, err := report.Compare(t, opts.Options)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", opts.Source, err)
	}
	warnLeftOut(opts.Factory.IO.ErrOut, c)
	if opts.Kind == "cd" {
		if why := c.NemenyiSkipped(); why != "" && !opts.ForceCD {
			return nil, fmt.Errorf("plot %s: no critical-difference diagram: %s, so Nemenyi's post-hoc test does not apply; pass --force-cd to draw it anyway", opts.Source, why)
		}
		return c.CDPlot(opts.Style)
	}
	return c.BoxPlot(opts.Style)
}

// writeCurves writes the curves' numbers to file as CSV or JSON.
func writeCurves(file, format string, c *report.Curves) error {
	var buf bytes.Buffer
	var err error
	if format == "csv" {
		err = c.WriteCSV(&buf)
	} else {
		err = cmdutil.WriteJSON(&buf, c)
	}
	if err == nil {
		err = os.WriteFile(file, buf.Bytes(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("write curves: %w", err)
	}
	return nil
}

func curves(ctx context.Context, opts *PlotOptions) (*report.Curves, error) {
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
	if t, err = report.Arrange(t, opts.By, opts.Order, opts.Rename); err != nil {
		return nil, cmdutil.UsageError("plot %s: %v", opts.Source, err)
	}
	c, err := buildCurves(ctx, runs, id, t, opts.Options, opts.Curve)
	if err != nil {
		return nil, err
	}
	for _, w := range c.Warnings() {
		fmt.Fprintf(opts.Factory.IO.ErrOut, "jikken: warning: %s\n", w)
	}
	return c, nil
}
