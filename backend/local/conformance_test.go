//go:build unix

package local_test

import (
	"os"
	"testing"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/host/cgroup"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/backendtest"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Registered: "local",
		New:        func(t *testing.T) runner.Backend { return &local.Backend{} },
		Trial: func(name, script string) experiment.Trial {
			return experiment.Trial{Name: name, Cmd: experiment.Command{Shell: script}}
		},
	})
}

// TestConformanceWithLimits runs the same contract with every trial limited, so every attempt
// runs in a cgroup of its own.
func TestConformanceWithLimits(t *testing.T) {
	needCgroups(t)
	backendtest.Run(t, backendtest.Harness{
		Registered: "local",
		New:        func(t *testing.T) runner.Backend { return &local.Backend{} },
		Trial: func(name, script string) experiment.Trial {
			return experiment.Trial{Name: name, Cmd: experiment.Command{Shell: script},
				Resources: experiment.Resources{CPU: 0.5, Memory: 128 << 20}}
		},
	})
}

// needCgroups skips a test where no cgroup can be made, with how to run it, and fails it under
// CI, which runs as root on a machine with cgroups.
func needCgroups(t testing.TB) {
	t.Helper()
	if _, err := cgroup.Detect(cgroup.Options{}); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs as root on a machine with cgroups, but: %v", err)
		}
		t.Skipf("%v: run as root (cgroup v1) or in a delegated cgroup v2 group (systemd-run --user --scope -p Delegate=yes go test ...)", err)
	}
}
