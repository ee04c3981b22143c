package simcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/metrics"
	"github.com/jikken-dev/jikken/sim/scenario"
	"github.com/jikken-dev/jikken/sim/simplot"
)

type compareOptions struct {
	f        *cmdutil.Factory
	plugins  Plugins
	files    []string
	profiles []string
	seed     uint64
	format   string
	memory   memoryFlag
	plotDir  string
}

func newCompareCmd(f *cmdutil.Factory, pl Plugins) *cobra.Command {
	o := &compareOptions{f: f, plugins: pl}
	cmd := &cobra.Command{
		Use:   "compare SCENARIO.yaml... [--profiles P1,P2,...]",
		Short: "Run scenarios (or one scenario under several schedulers) and print a side-by-side table",
		Long: `compare runs each scenario and prints one column per run. With --profiles, every
scenario runs once per scheduler profile on the identical workload: submitters draw from their
own random streams, so switching the scheduler does not change the jobs.

With --plot-dir, it also draws figures with one line per run: jct_cdf.png and wait_cdf.png
(distributions over jobs), gpu_utilisation.png and pending.png (over time).`,
		Example: `  jikken sim compare examples/sim/small.yaml --profiles kube-default,fifo,fifo-backfill,drf
  jikken sim compare examples/sim/gavel.yaml --profiles fifo,srtf,las,gittins --plot-dir figures
  jikken sim compare a.yaml b.yaml -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			if _, err := o.memory.bytes(); err != nil {
				return err
			}
			return runCompare(cmd.Context(), o)
		},
	}
	cmd.Flags().StringSliceVar(&o.profiles, "profiles", nil, "scheduler profiles to run each scenario with (default: the scenario's own)")
	_ = cmd.RegisterFlagCompletionFunc("profiles", cmdutil.CompleteList(scenario.Profiles()...))
	cmd.Flags().Uint64Var(&o.seed, "seed", 0, "seed overriding the scenarios'")
	cmdutil.FormatFlag(cmd, &o.format, "text", "json")
	cmd.Flags().StringVar(&o.plotDir, "plot-dir", "", "also draw comparison figures (one line per run) into this folder")
	_ = cmd.MarkFlagDirname("plot-dir")
	o.memory.add(cmd)
	return cmd
}

func runCompare(ctx context.Context, o *compareOptions) error {
	var labels []string
	var sums []metrics.Summary
	var runs []*result
	limit, err := o.memory.bytes()
	if err != nil {
		return err
	}
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
			r, err := simulate(ctx, o.f, sc, scenario.Options{Profile: p, Seed: o.seed, MaxMemory: limit, Plugins: o.plugins.Sim, FrameworkPlugins: o.plugins.Framework}, true)
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
			if o.plotDir != "" {
				runs = append(runs, r)
			} else {
				r.rec.Samples = nil
			}
		}
	}
	if o.plotDir != "" {
		if err := plotComparison(o, labels, runs); err != nil {
			return err
		}
	}
	t := metrics.Compare(labels, sums)
	if o.format == "json" {
		return cmdutil.WriteJSON(o.f.IO.Out, t)
	}
	return metrics.WriteTable(o.f.IO.Out, t)
}

// plotComparison draws the comparison figures, one line per run, and lists them on stderr
// (stdout carries the table).
func plotComparison(o *compareOptions, labels []string, runs []*result) error {
	if err := os.MkdirAll(o.plotDir, 0o755); err != nil {
		return fmt.Errorf("create plot folder: %w", err)
	}
	var jct, wait []simplot.Sample
	var util, pending []simplot.Series
	for i, r := range runs {
		js, ws := simplot.Sample{Name: labels[i]}, simplot.Sample{Name: labels[i]}
		for _, j := range metrics.Jobs(r.built.Engine.Cluster().Pods()) {
			if t := j.JCT(); t >= 0 {
				js.Values = append(js.Values, t.Seconds())
			}
			if w := j.Wait(); w >= 0 {
				ws.Values = append(ws.Values, w.Seconds()+1)
			}
		}
		jct, wait = append(jct, js), append(wait, ws)
		u, p := simplot.Series{Name: labels[i]}, simplot.Series{Name: labels[i]}
		for _, row := range metrics.Downsample(r.rec.Samples, 2000) {
			h := row.Time / 3600
			if c := row.Capacity[sim.GPUIndex]; c > 0 {
				u.X, u.Y = append(u.X, h), append(u.Y, row.Alloc[sim.GPUIndex]/c)
			}
			p.X, p.Y = append(p.X, h), append(p.Y, row.Pending)
		}
		util, pending = append(util, u), append(pending, p)
	}
	written, err := drawCharts(o.plotDir, []chart{
		{"jct_cdf.png", func(w io.Writer) error {
			return simplot.CDFs(w, "Job completion time", "job completion time (s, log scale)", jct)
		}},
		{"wait_cdf.png", func(w io.Writer) error { return simplot.CDFs(w, "Wait", "wait + 1 s (log scale)", wait) }},
		{"gpu_utilisation.png", func(w io.Writer) error {
			return simplot.Lines(w, "Requested share of the GPUs", "time (h)", "fraction of GPU capacity", util)
		}},
		{"pending.png", func(w io.Writer) error { return simplot.Lines(w, "Pending pods", "time (h)", "pods", pending) }},
	})
	for _, path := range written {
		fmt.Fprintln(o.f.IO.ErrOut, "wrote", path)
	}
	return err
}
