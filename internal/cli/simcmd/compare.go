package simcmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/sim/metrics"
	"github.com/jikken-dev/jikken/sim/scenario"
)

type compareOptions struct {
	f        *cmdutil.Factory
	files    []string
	profiles []string
	seed     uint64
	format   string
}

func newCompareCmd(f *cmdutil.Factory) *cobra.Command {
	o := &compareOptions{f: f}
	cmd := &cobra.Command{
		Use:   "compare SCENARIO.yaml... [--profiles P1,P2,...]",
		Short: "Run scenarios (or one scenario under several schedulers) and print a side-by-side table",
		Long: `compare runs each scenario and prints one column per run. With --profiles, every
scenario runs once per scheduler profile on the identical workload: submitters draw from their
own random streams, so switching the scheduler does not change the jobs.`,
		Example: `  jikken sim compare examples/sim/small.yaml --profiles kube-default,fifo,fifo-backfill,drf
  jikken sim compare a.yaml b.yaml -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return runCompare(cmd.Context(), o)
		},
	}
	cmd.Flags().StringSliceVar(&o.profiles, "profiles", nil, "scheduler profiles to run each scenario with (default: the scenario's own)")
	_ = cmd.RegisterFlagCompletionFunc("profiles", cmdutil.CompleteList(scenario.Profiles()...))
	cmd.Flags().Uint64Var(&o.seed, "seed", 0, "seed overriding the scenarios'")
	cmdutil.FormatFlag(cmd, &o.format, "text", "json")
	return cmd
}

func runCompare(ctx context.Context, o *compareOptions) error {
	var labels []string
	var sums []metrics.Summary
	profiles := o.profiles
	if len(profiles) == 0 {
		profiles = []string{""}
	}
	for _, file := range o.files {
		for _, p := range profiles {
			sc, err := scenario.Load(file)
			if err != nil {
				return err
			}
			r, err := simulate(ctx, o.f, sc, scenario.Options{Profile: p, Seed: o.seed}, true)
			if err != nil {
				return err
			}
			var label []string
			if len(o.files) > 1 {
				label = append(label, sc.Name)
			}
			if len(profiles) > 1 || len(o.files) == 1 {
				label = append(label, r.summary.Scheduler)
			}
			labels = append(labels, strings.Join(label, "/"))
			sums = append(sums, r.summary)
		}
	}
	t := metrics.Compare(labels, sums)
	if o.format == "json" {
		return cmdutil.WriteJSON(o.f.IO.Out, t)
	}
	return metrics.WriteTable(o.f.IO.Out, t)
}
