package slurm_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/slurm"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/backendtest"
)

// slurmAbsent says, once per test binary, why no Slurm cluster answers ("" when one does).
// sinfo is given 10 s: with a configuration it cannot read it retries for a minute, and every
// test would wait for it.
var slurmAbsent = sync.OnceValue(func() string {
	if _, err := exec.LookPath("sbatch"); err != nil {
		return "no sbatch on PATH"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "sinfo", "-h", "-o", "%T").CombinedOutput(); err != nil {
		return fmt.Sprintf("sinfo: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return ""
})

// needSlurm skips a test where no Slurm cluster answers, with how to start one, and fails it
// under CI, which starts one (scripts/ci/slurm.sh).
func needSlurm(t testing.TB) {
	t.Helper()
	why := slurmAbsent()
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI starts a one-node Slurm cluster (scripts/ci/slurm.sh), but: %s", why)
	}
	t.Skipf("%s: start a one-node cluster as root with 'export SLURM_CONF=$(scripts/ci/slurm.sh | tail -n 1)'", why)
}

func TestConformance(t *testing.T) {
	needSlurm(t)
	backendtest.Run(t, backendtest.Harness{
		Registered: "slurm",
		New:        func(t *testing.T) runner.Backend { return slurm.New(slurm.Config{}) },
		Trial: func(name, script string) experiment.Trial {
			return experiment.Trial{Name: name, Cmd: experiment.Command{Shell: script}}
		},
		Cannot: map[backendtest.Capability]string{
			backendtest.Health: "the slurm backend refuses services (a batch job has no stable address), so nothing runs health checks",
		},
	})
}
