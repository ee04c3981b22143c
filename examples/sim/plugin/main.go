// Command plugin is jikken built with the GPUClass simulator plugin: `go run ./examples/sim/plugin
// sim run examples/sim/plugin/scenario.yaml --dir out` runs a scenario that uses it.
package main

import (
	"os"

	"github.com/jikken-dev/jikken/cmd/jikken/app"
	"github.com/jikken-dev/jikken/examples/sim/plugin/gpuclass"
)

func main() { os.Exit(app.Main(app.WithSimPlugin(gpuclass.Name, gpuclass.New))) }
