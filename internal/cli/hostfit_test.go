package cli

import (
	"testing"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner/core"
)

// The default -j follows the trials' declared resources on the host, where they all declare
// cores, GPUs or MIG instances.
func TestJobsForHost(t *testing.T) {
	host := &core.Capacity{CPU: 16, Memory: 64 << 30}
	for i := 0; i < 8; i++ {
		host.GPUs = append(host.GPUs, core.Device{ID: "GPU-" + string(rune('a'+i))})
	}
	host.GPUs = append(host.GPUs, core.Device{ID: "MIG-a", MIG: "1g.10gb"}, core.Device{ID: "MIG-b", MIG: "1g.10gb"})
	res := func(rs ...experiment.Resources) []experiment.Trial {
		var out []experiment.Trial
		for _, r := range rs {
			out = append(out, experiment.Trial{Resources: r})
		}
		return out
	}
	for _, c := range []struct {
		name   string
		trials []experiment.Trial
		c      *core.Capacity
		want   int
		ok     bool
	}{
		{"one GPU each", res(experiment.Resources{GPU: 1}, experiment.Resources{GPU: 1}), host, 8, true},
		{"half a GPU each", res(experiment.Resources{GPU: 0.5}), host, 16, true},
		{"memory bounds GPU trials", res(experiment.Resources{GPU: 1, Memory: 16 << 30}), host, 4, true},
		{"the kind that fits most", res(experiment.Resources{GPU: 2}, experiment.Resources{MIG: "1g.10gb"}, experiment.Resources{CPU: 4}), host, 4, true},
		{"a trial that declares nothing", res(experiment.Resources{GPU: 1}, experiment.Resources{}), host, 0, false},
		{"memory alone", res(experiment.Resources{Memory: 1 << 30}), host, 0, false},
		{"a cluster", res(experiment.Resources{GPU: 1}), nil, 0, false},
	} {
		n, ok := jobsForHost(c.trials, c.c)
		if n != c.want || ok != c.ok {
			t.Errorf("%s: -j %d, %v; want %d, %v", c.name, n, ok, c.want, c.ok)
		}
	}
}
