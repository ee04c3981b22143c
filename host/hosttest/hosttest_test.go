package hosttest_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/host/hosttest"
)

// The fake answers the two calls as f says, refuses others, and fails like a missing driver.
func TestNvidiaSMI(t *testing.T) {
	f := hosttest.Fake{GPUs: []hosttest.GPU{{}, {MIG: []string{"1g.10gb"}}}}
	smi := filepath.Join(hosttest.NvidiaSMI(t, f), "nvidia-smi")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--query-gpu=index,uuid,name,memory.total,mig.mode.current", "--format=csv,noheader"},
			"0, " + hosttest.UUID(0) + ", NVIDIA A100-SXM4-80GB, 81920 MiB, [N/A]\n1, " + hosttest.UUID(1) + ", NVIDIA A100-SXM4-80GB, 81920 MiB, Enabled\n"},
		{[]string{"--query-gpu=index,uuid,name,memory.total,mig.mode.current", "--format=csv,noheader,nounits"},
			"0, " + hosttest.UUID(0) + ", NVIDIA A100-SXM4-80GB, 81920, [N/A]\n1, " + hosttest.UUID(1) + ", NVIDIA A100-SXM4-80GB, 81920, Enabled\n"},
		{[]string{"-L"}, "GPU 0: NVIDIA A100-SXM4-80GB (UUID: " + hosttest.UUID(0) + ")\nGPU 1: NVIDIA A100-SXM4-80GB (UUID: " + hosttest.UUID(1) + ")\n  MIG 1g.10gb       Device  0: (UUID: " + hosttest.MIGUUID(1, 0) + ")\n"},
	} {
		out, err := exec.Command(smi, c.args...).Output()
		if err != nil || string(out) != c.want {
			t.Errorf("nvidia-smi %s = %q, %v; want %q", strings.Join(c.args, " "), out, err, c.want)
		}
	}
	if err := exec.Command(smi, "-q").Run(); err == nil {
		t.Error("nvidia-smi -q succeeded: the fake should refuse what it does not answer")
	}
	fail := filepath.Join(hosttest.NvidiaSMI(t, hosttest.Fake{Fail: hosttest.DriverNotLoaded}), "nvidia-smi")
	out, err := exec.Command(fail, "-L").Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 || string(out) != hosttest.DriverNotLoaded+"\n" {
		t.Errorf("failing nvidia-smi = %q, %v", out, err)
	}
}
