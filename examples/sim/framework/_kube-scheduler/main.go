// Command kube-scheduler is the real kube-scheduler with GPUClass registered, built from the
// same source as the simulator's plugin (examples/sim/framework/gpuclass): a team builds its
// scheduler this way and names GPUClass in a KubeSchedulerConfiguration profile. It imports
// k8s.io/kubernetes, which jikken's module does not require, so it lives in a folder the go
// command skips; scripts/ci/k8s.sh builds it as kube-scheduler-gpuclass in a module of its own,
// beside the control plane, and sim/fidelity's TestClusterFrameworkPluginPlacements compares
// its placements with the simulator's.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/jikken-dev/jikken/examples/sim/framework/gpuclass"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand(app.WithPlugin(gpuclass.Name, gpuclass.New))))
}
