package local_test

import (
	"testing"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/backendtest"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		New: func(t *testing.T) runner.Backend { return &local.Backend{} },
		Trial: func(name, script string) experiment.Trial {
			return experiment.Trial{Name: name, Cmd: experiment.Command{Shell: script}}
		},
	})
}
