// Package simcmd is the `jikken sim` command group: run a simulation scenario, compare
// schedulers side by side, and generate synthetic workload traces.
package simcmd

import (
	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/sim/kubehost"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

// Plugins are the simulator plugins compiled into a jikken binary (cmd/jikken/app), by name.
// Only the sim commands carry them: a binary without these commands (git-ghost) links none of
// the simulator.
type Plugins struct {
	// Sim are plugins over jikken's own interfaces (sim/scheduler).
	Sim map[string]scheduler.PluginFactory
	// Framework are kube-scheduler framework plugins (sim/kubehost).
	Framework map[string]kubehost.PluginFactory
}

// NewCmd returns the sim command group.
func NewCmd(f *cmdutil.Factory, pl Plugins) *cobra.Command {
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
	cmd.AddCommand(newRunCmd(f, pl), newCompareCmd(f, pl), newGenCmd(f), newPlotCmd(f))
	return cmd
}
