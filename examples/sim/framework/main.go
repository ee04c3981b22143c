// Command framework is jikken built with GPUClass, a kube-scheduler framework plugin written
// only against k8s.io/kube-scheduler/framework: `go run ./examples/sim/framework sim run
// examples/sim/framework/scenario.yaml --dir out` runs a scenario that uses it. The same
// gpuclass.New registers in a real kube-scheduler with
// k8s.io/kubernetes/cmd/kube-scheduler/app.WithPlugin (docs/sim.md, "Framework plugins").
package main

import (
	"os"

	"github.com/jikken-dev/jikken/cmd/jikken/app"
	"github.com/jikken-dev/jikken/examples/sim/framework/gpuclass"
)

func main() { os.Exit(app.Main(app.WithFrameworkPlugin(gpuclass.Name, gpuclass.New))) }
