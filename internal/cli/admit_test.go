package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/host"
	"github.com/jikken-dev/jikken/host/hosttest"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/runner"
)

// checkCounter is the local backend, counting the checks of a plan.
type checkCounter struct {
	runner.Backend
	checks int
}

func (b *checkCounter) Check(ctx context.Context, trials []experiment.Trial) error {
	b.checks++
	return b.Backend.(runner.Checker).Check(ctx, trials)
}

// TestRunDecidesOnce: one 'jikken run' finds what the host offers once (nvidia-smi runs as
// often as for one discovery, each call up to 30 s on a wedged driver) and checks the plan
// once (on a cluster, a check is a dozen requests).
func TestRunDecidesOnce(t *testing.T) {
	ctx := context.Background()
	smiLog := filepath.Join(t.TempDir(), "nvidia-smi.log")
	fake := hosttest.GPUs(1)
	fake.Log = smiLog
	hosttest.OnPath(t, fake)
	t.Setenv("JIKKEN_GPUS", "")
	if _, err := host.Discover(ctx, host.Options{}); err != nil {
		t.Fatal(err)
	}
	// Discovery's calls only: taking a GPU lease asks nvidia-smi which processes use the GPUs
	// (--query-compute-apps), once per start, which is not a discovery.
	calls := func() int {
		b, _ := os.ReadFile(smiLog)
		n := 0
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && !strings.Contains(l, "compute-apps") {
				n++
			}
		}
		return n
	}
	perDiscovery := calls()
	if perDiscovery == 0 {
		t.Fatal("discovery did not run the fake nvidia-smi")
	}
	if err := os.Remove(smiLog); err != nil {
		t.Fatal(err)
	}

	local, _ := runner.Lookup("local")
	counter := &checkCounter{}
	d := local
	d.Name, d.Default = "counted", false
	d.Open = func(ctx context.Context, env runner.Env, s any) (runner.Backend, error) {
		b, err := local.Open(ctx, env, s)
		counter.Backend = b
		return counter, err
	}
	runner.Register(d)
	dir := t.TempDir()
	file := filepath.Join(dir, "exp.jsonnet")
	if err := os.WriteFile(file, []byte(`{ name: "once", trials: [{ name: "t", cmd: "true", resources: { gpu: 1 } }] }`), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, out, errOut := iostreams.Test()
	if code := Run(ctx, ios, []string{"run", file, "--backend", "counted", "--store", filepath.Join(dir, "store")}); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if n := calls(); n != perDiscovery {
		t.Errorf("run called nvidia-smi %d times, want %d (one discovery)", n, perDiscovery)
	}
	if counter.checks != 1 {
		t.Errorf("run checked the plan %d times, want once", counter.checks)
	}
}
