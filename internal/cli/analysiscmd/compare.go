package analysiscmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/report"
)

// CompareOptions are the inputs of `jikken compare`.
type CompareOptions struct {
	Factory *cmdutil.Factory
	// Source is a run id, a CSV file, or "-" for a CSV on stdin.
	Source string
	report.Options
	// Where are COLUMN=VALUE conditions a row must meet to be compared.
	Where  []string
	Format string
	flags  testFlags
}

// NewCompareCmd builds `jikken compare`.
func NewCompareCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &CompareOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "compare RUN|FILE.csv --by COL --metric COL",
		Short: "Compare groups of trials with rank tests and effect sizes",
		Long: `Compare groups of trials on a metric with rank-based tests, which assume nothing about
the shape of the distributions, following R's conventions (docs/analysis.md says how to
recompute every number in R).

The input is a run id (its results table) or a CSV file with a header and one row per trial
("-" reads the CSV from standard input). --by names the column whose values are the groups,
--metric the numeric column compared.

Two groups are compared with the Mann-Whitney U test, or the Wilcoxon signed-rank test when
--pair-by names the column that pairs rows across groups (a seed, a dataset; several columns
separated by commas, as fn,seed, make one block per combination). Three or more groups
get the Kruskal-Wallis test (Friedman with --pair-by, plus Nemenyi's critical difference when
Friedman rejects), then every pair is tested and the p-values adjusted with Holm's method.
Effect sizes are Vargha-Delaney A12 (unpaired; the probability that a value of the first group
is larger) and the matched-pairs rank-biserial correlation (paired). Pairwise tests are
two-sided unless --alternative says less or greater (about the first group of each pair).

Say the metric's direction with --lower-is-better or --higher-is-better. Then failed trials and
NaN or infinite values rank worst (--failed worst, the default), tied with each other, and keep
their block in a paired design; without a direction, or with --failed drop, they are left out.
Trials that did not finish (pending, running, skipped, killed), empty values and rows without a
group are always left out. In a paired design a block lacking a usable row for some group is
left out, as R's friedman.test does (--incomplete error refuses instead). Everything left out
or ranked worst is listed. Groups keep the order of their first appearance; in a pair (a, b),
a comes first and is the first sample of the test.`,
		Example: `  # Is adam better than sgd on final loss, pairing trials by seed?
  jikken compare results.csv --by algo --metric loss --pair-by seed --lower-is-better

  # Is the new method's accuracy higher than the baseline's (one-sided), failures left out?
  jikken compare latest --by method --metric acc --higher-is-better --alternative greater --failed drop

  # Only the trials on one benchmark function, from the latest run in the store
  jikken compare latest --by algo --metric best --pair-by seed --where fn=sphere --lower-is-better

  # Machine-readable, from a run given by its id
  jikken compare 20260101-120000-abcd --by algo --metric accuracy -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			if err := opts.flags.apply(&opts.Options); err != nil {
				return err
			}
			return runCompare(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.By, "by", "", "column whose values are the groups (required)")
	fl.StringVar(&opts.Metric, "metric", "", "numeric column to compare (required)")
	fl.StringVar(&opts.PairBy, "pair-by", "", "column(s) that pair rows across groups, e.g. seed or fn,seed (paired tests)")
	opts.flags.register(fl)
	fl.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level")
	fl.StringArrayVar(&opts.Where, "where", nil, "compare only rows where COLUMN=VALUE (repeatable; all must hold)")
	cmdutil.FormatFlag(cmd, &opts.Format, "text", "json", "markdown", "csv")
	_ = cmd.MarkFlagRequired("by")
	_ = cmd.MarkFlagRequired("metric")
	return cmd
}

func runCompare(ctx context.Context, opts *CompareOptions) error {
	format, err := cmdutil.CheckFormat(opts.Format, "text", "json", "markdown", "csv")
	if err != nil {
		return err
	}
	if opts.Alpha <= 0 || opts.Alpha >= 1 {
		return cmdutil.UsageError("--alpha %v is outside (0, 1); use e.g. 0.05", opts.Alpha)
	}
	t, err := loadTable(ctx, opts.Factory, opts.Source)
	if err != nil {
		return err
	}
	if t, err = report.Where(t, opts.Where); err != nil {
		return fmt.Errorf("compare %s: %w", opts.Source, err)
	}
	c, err := report.Compare(t, opts.Options)
	if err != nil {
		return fmt.Errorf("compare %s: %w", opts.Source, err)
	}
	ios := opts.Factory.IO
	switch format {
	case "json":
		warnLeftOut(ios.ErrOut, c)
		return cmdutil.WriteJSON(ios.Out, c)
	case "csv":
		warnLeftOut(ios.ErrOut, c)
		return c.WriteCSV(ios.Out)
	case "markdown":
		return c.WriteMarkdown(ios.Out)
	}
	return c.WriteText(ios.Out)
}
