package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fwgpuclass "github.com/jikken-dev/jikken/examples/sim/framework/gpuclass"
	"github.com/jikken-dev/jikken/examples/sim/plugin/gpuclass"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

const scenario = "../../../examples/sim/plugin/scenario.yaml"

// The example scenario through `jikken sim run` with the GPUClass plugin compiled in: the
// filter keeps the a100-labelled pod off the other nodes, the score sends jobs to the newest
// GPUs first.
func TestSimRunWithCustomPlugin(t *testing.T) {
	checkGPUClassPlacements(t, scenario, WithSimPlugin(gpuclass.Name, gpuclass.New))
}

// The same placements from GPUClass written as a kube-scheduler framework plugin
// (examples/sim/framework), hosted by the kube-framework profile.
func TestSimRunWithFrameworkPlugin(t *testing.T) {
	checkGPUClassPlacements(t, "../../../examples/sim/framework/scenario.yaml", WithFrameworkPlugin(fwgpuclass.Name, fwgpuclass.New))
}

// checkGPUClassPlacements runs the scenario with the plugin and checks where GPUClass puts
// its pods.
func checkGPUClassPlacements(t *testing.T, scenario string, plugin Option) {
	t.Helper()
	ios, _, _, errOut := iostreams.Test()
	dir := t.TempDir()
	if code := run(context.Background(), ios, []string{"sim", "run", scenario, "--dir", dir, "--progress=false"}, plugin); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, ",")
		got[f[0]] = f[5] + "@" + f[7]
	}
	for pod, want := range map[string]string{"train-1": "h100-0@0.000", "train-2": "a100-0@1.000", "eval-a100": "a100-0@3601.000"} {
		if got[pod] != want {
			t.Errorf("%s ran on %s, want %s", pod, got[pod], want)
		}
	}
	if !strings.HasPrefix(got["train-3"], "v100-") {
		t.Errorf("train-3 ran on %s, want a v100 node", got["train-3"])
	}
}

func TestFrameworkPluginErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Option
		want string
	}{
		{"not compiled in", nil, `multiPoint plugin "GPUClass" is unknown; known framework plugins: DefaultBinder, NodeAffinity`},
		{"stock name", []Option{WithFrameworkPlugin("NodeAffinity", fwgpuclass.New)}, `WithFrameworkPlugin("NodeAffinity"): a stock plugin has that name`},
		{"registered twice", []Option{WithFrameworkPlugin(fwgpuclass.Name, fwgpuclass.New), WithFrameworkPlugin(fwgpuclass.Name, fwgpuclass.New)}, `WithFrameworkPlugin("GPUClass"): registered twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ios, _, _, errOut := iostreams.Test()
			code := run(context.Background(), ios, []string{"sim", "run", "../../../examples/sim/framework/scenario.yaml", "--dir", t.TempDir(), "--progress=false"}, c.opts...)
			if code == 0 || !strings.Contains(errOut.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want it to contain %q", code, errOut, c.want)
			}
		})
	}
}

func TestCustomPluginErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Option
		want string
	}{
		{"not compiled in", nil, `"GPUClass" is not a custom plugin of this program (custom plugins: none), nor NodeResourcesFit or NodeResourcesBalancedAllocation, the stock plugins with args; a plugin written in Go needs a jikken built with it`},
		{"bad args", []Option{WithSimPlugin(gpuclass.Name, func(json.RawMessage) (scheduler.Plugin, error) {
			return gpuclass.New(json.RawMessage(`{"label": ""}`))
		})}, "scheduler.pluginConfig: plugin GPUClass: args.label: empty"},
		{"stock name", []Option{WithSimPlugin("NodeAffinity", gpuclass.New)}, `WithSimPlugin("NodeAffinity"): a stock plugin has that name`},
		{"wrong name", []Option{WithSimPlugin(gpuclass.Name, func(json.RawMessage) (scheduler.Plugin, error) { return &other{}, nil })}, `the factory registered as "GPUClass" made a plugin named "Other"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ios, _, _, errOut := iostreams.Test()
			code := run(context.Background(), ios, []string{"sim", "run", scenario, "--dir", t.TempDir(), "--progress=false"}, c.opts...)
			if code == 0 || !strings.Contains(errOut.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want it to contain %q", code, errOut, c.want)
			}
		})
	}
}

type other struct{}

func (*other) Name() string { return "Other" }
