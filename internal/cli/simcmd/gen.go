package simcmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scenario"
	"github.com/jikken-dev/jikken/sim/submitter"
)

type genOptions struct {
	f       *cmdutil.Factory
	preset  string
	jobs    int
	gpus    int
	load    float64
	rate    float64
	perNode int
	seed    uint64
	seedSet bool
	format  string
	out     string
	// scenario, when set, lists that scenario's jobs instead of a preset's.
	scenario string
}

func newGenCmd(f *cmdutil.Factory) *cobra.Command {
	o := &genOptions{f: f}
	cmd := &cobra.Command{
		Use:   "gen --preset philly|gavel --jobs N | gen --scenario SCENARIO.yaml",
		Short: "Generate a workload trace (CSV or JSONL) from a preset or a scenario's workload",
		Long: `gen writes a trace in the format the trace submitter replays
(name,user,submit_s,duration_s,cpu,memory,gpu,priority,gang). The arrival rate is set so the
offered GPU load on a cluster of --gpus GPUs is --load, unless --rate gives jobs per second.
Jobs larger than --gpus-per-node become gangs of pods. Presets and their sources are described
in docs/sim.md.

With --scenario, gen writes every job that scenario's workload would submit (presets,
generators, user profiles, traces), drawn exactly as 'jikken sim run' draws them: replaying the
file as a trace reproduces the run. Feedback and remote submitters cannot be listed up front.`,
		Example: `  jikken sim gen --preset philly --jobs 1000 --gpus 64 --load 0.9 > philly.csv
  jikken sim gen --preset gavel --jobs 200 --rate 0.01 -o jsonl --out gavel.jsonl
  jikken sim gen --scenario examples/sim/users.yaml --out users.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.seedSet = cmd.Flags().Changed("seed")
			if o.jobs <= 0 {
				return cmdutil.UsageError("--jobs must be positive")
			}
			return runGen(o)
		},
	}
	cmd.Flags().StringVar(&o.preset, "preset", "philly", "workload preset: philly or gavel")
	cmd.Flags().IntVar(&o.jobs, "jobs", 1000, "number of jobs")
	cmd.Flags().IntVar(&o.gpus, "gpus", 64, "GPUs of the target cluster, for the load calibration")
	cmd.Flags().Float64Var(&o.load, "load", 0.8, "offered GPU load relative to --gpus")
	cmd.Flags().Float64Var(&o.rate, "rate", 0, "arrival rate in jobs per second (overrides --load)")
	cmd.Flags().IntVar(&o.perNode, "gpus-per-node", 8, "largest pod in GPUs; bigger jobs become gangs")
	cmd.Flags().Uint64Var(&o.seed, "seed", 1, "random seed")
	cmdutil.FormatFlag(cmd, &o.format, "csv", "jsonl")
	cmd.Flags().StringVar(&o.out, "out", "", "file to write (default stdout)")
	cmd.Flags().StringVar(&o.scenario, "scenario", "", "list the jobs of this scenario's workload instead of a preset")
	return cmd
}

func runGen(o *genOptions) error {
	var jobs []submitter.Job
	if o.scenario != "" {
		sc, err := scenario.Load(o.scenario)
		if err != nil {
			return err
		}
		seed := uint64(0)
		if o.seedSet {
			seed = o.seed
		}
		if jobs, err = scenario.Jobs(sc, seed); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
	} else {
		p, err := submitter.Preset(o.preset, submitter.PresetConfig{Jobs: o.jobs, ClusterGPUs: o.gpus, Load: o.load,
			Rate: o.rate, GPUsPerNode: o.perNode}, sim.NewRand(o.seed, 100))
		if err != nil {
			return cmdutil.UsageError("%v", err)
		}
		jobs = p.Jobs()
	}
	write := submitter.WriteCSV
	if o.format == "jsonl" {
		write = submitter.WriteJSONL
	}
	if o.out == "" {
		return write(o.f.IO.Out, jobs)
	}
	return writeFile(o.out, func(w io.Writer) error { return write(w, jobs) })
}
