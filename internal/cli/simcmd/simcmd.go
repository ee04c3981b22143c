// Package simcmd is the `jikken sim` command group: run a simulation scenario, compare
// schedulers side by side, and generate synthetic workload traces.
package simcmd

import (
	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
)

// NewCmd returns the sim command group.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulate a Kubernetes-like cluster to compare schedulers",
		Long: `sim runs a deterministic discrete-event simulation of a cluster: pods arrive from
trace files or synthetic workloads, a scheduler (kube-scheduler's default profile, extenders,
or research policies such as FIFO, backfill, SJF, Tiresias-style LAS and DRF) places them, and
per-pod records, a time series and a summary are written. The same scenario and seed always
give byte-identical output.`,
		Example: `  jikken sim run examples/sim/small.yaml --dir out
  jikken sim compare examples/sim/small.yaml --profiles kube-default,fifo,drf
  jikken sim gen --preset philly --jobs 1000 --gpus 64 > jobs.csv`,
	}
	cmd.AddCommand(newRunCmd(f), newCompareCmd(f), newGenCmd(f), newPlotCmd(f))
	return cmd
}
