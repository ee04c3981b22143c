package host_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/host"
	"github.com/jikken-dev/jikken/host/hosttest"
)

// fakeRoot is a machine with 8 online CPUs and 24 GiB, whose process runs in a cgroup v1
// group limited to 2.5 cores and 6 GiB.
func fakeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range map[string]string{
		"proc/meminfo":                  "MemTotal:       25165824 kB\nMemFree:        1000 kB\n",
		"sys/devices/system/cpu/online": "0-7\n",
		"proc/self/mountinfo": `32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
`,
		"proc/self/cgroup":                               "4:memory:/job\n1:cpu:/job\n",
		"sys/fs/cgroup/cpu/job/cpu.cfs_quota_us":         "250000\n",
		"sys/fs/cgroup/cpu/job/cpu.cfs_period_us":        "100000\n",
		"sys/fs/cgroup/memory/job/memory.limit_in_bytes": "6442450944\n",
		"sys/fs/cgroup/memory/memory.limit_in_bytes":     "9223372036854771712\n",
		"sys/fs/cgroup/cpu/cpu.cfs_quota_us":             "-1\n",
		"sys/fs/cgroup/cpu/cpu.cfs_period_us":            "100000\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func indices(gpus []host.GPU) []string {
	var out []string
	for _, g := range gpus {
		out = append(out, g.Index+"="+g.UUID)
	}
	return out
}

func TestDiscoverCgroupLimits(t *testing.T) {
	inv, err := host.Discover(context.Background(), host.Options{Root: fakeRoot(t), GPUs: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if inv.CPUs != 2.5 || inv.Memory != 6<<30 || len(inv.GPUs) != 0 {
		t.Errorf("Discover = %+v, want 2.5 CPUs, 6 GiB, no GPU", inv)
	}
	want := []string{"CPUs: 2.5, cgroup v1 quota 250000/100000 µs", "Memory: 6GiB, cgroup v1 memory.limit_in_bytes 6442450944", "GPUs: none, as set"}
	for i, w := range want {
		if i >= len(inv.Notes) || !strings.HasPrefix(inv.Notes[i], w) {
			t.Errorf("notes = %q, want %q first", inv.Notes, want)
			break
		}
	}

	inv, err = host.Discover(context.Background(), host.Options{Root: fakeRoot(t), GPUs: "none", CPUs: 64, Memory: 24 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if inv.CPUs != 64 || inv.Memory != 24<<30 || !strings.Contains(inv.Notes[0], "as set") || !strings.Contains(inv.Notes[1], "as set") {
		t.Errorf("Discover with overrides = %+v", inv)
	}
}

func TestDiscoverGPUs(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	f := hosttest.GPUs(4)
	f.Log = log
	hosttest.OnPath(t, f)
	ctx := context.Background()
	inv, err := host.Discover(ctx, host.Options{Root: fakeRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0=" + hosttest.UUID(0), "1=" + hosttest.UUID(1), "2=" + hosttest.UUID(2), "3=" + hosttest.UUID(3)}
	if got := indices(inv.GPUs); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("GPUs = %v, want %v", got, want)
	}
	if g := inv.GPUs[0]; g.Name != "NVIDIA A100-SXM4-80GB" || g.MemoryMiB != 81920 || g.MIG != "" || g.ID() != hosttest.UUID(0) {
		t.Errorf("GPU 0 = %+v", g)
	}
	if n := inv.Notes[len(inv.Notes)-1]; n != "GPUs: 4 from nvidia-smi" {
		t.Errorf("note %q", n)
	}
	// Without MIG, one call is enough.
	if b, _ := os.ReadFile(log); string(b) != "--query-gpu=index,uuid,name,memory.total,mig.mode.current --format=csv,noheader\n" {
		t.Errorf("nvidia-smi was called with:\n%s", b)
	}

	inv, err = host.Discover(ctx, host.Options{Root: fakeRoot(t), GPUs: "2," + hosttest.UUID(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got := indices(inv.GPUs); strings.Join(got, " ") != "2="+hosttest.UUID(2)+" 0="+hosttest.UUID(0) {
		t.Errorf("GPUs restricted to 2 and GPU 0's UUID = %v", got)
	}
	if n := inv.Notes[len(inv.Notes)-1]; !strings.HasPrefix(n, "GPUs: 2 from nvidia-smi, restricted to 2,GPU-") {
		t.Errorf("note %q", n)
	}

	_, err = host.Discover(ctx, host.Options{Root: fakeRoot(t), GPUs: "0,5"})
	if err == nil || !strings.HasPrefix(err.Error(), "the GPU list names 5, which nvidia-smi does not show; it shows 0 (GPU-") {
		t.Errorf("a GPU that does not exist: %v", err)
	}
	_, err = host.Discover(ctx, host.Options{Root: fakeRoot(t), GPUs: "0,gpu1"})
	if err == nil || !strings.Contains(err.Error(), `"gpu1" is not a GPU index`) {
		t.Errorf("a malformed GPU list: %v", err)
	}
}

func TestDiscoverMIG(t *testing.T) {
	hosttest.OnPath(t, hosttest.Fake{GPUs: []hosttest.GPU{
		{MIG: []string{"3g.40gb", "2g.20gb", "1g.10gb"}},
		{MIGMode: "Disabled"},
		{MIGMode: "Enabled"},
		{Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, MIG: []string{"1g.10gb"}},
	}})
	inv, err := host.Discover(context.Background(), host.Options{Root: fakeRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := []host.GPU{
		{Index: "0:0", UUID: hosttest.MIGUUID(0, 0), Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 40960, MIG: "3g.40gb"},
		{Index: "0:1", UUID: hosttest.MIGUUID(0, 1), Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 20480, MIG: "2g.20gb"},
		{Index: "0:2", UUID: hosttest.MIGUUID(0, 2), Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 10240, MIG: "1g.10gb"},
		{Index: "1", UUID: hosttest.UUID(1), Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920},
		{Index: "3:0", UUID: hosttest.MIGUUID(3, 0), Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 10240, MIG: "1g.10gb"},
	}
	if fmt.Sprint(inv.GPUs) != fmt.Sprint(want) {
		t.Errorf("GPUs =\n%v\nwant\n%v", inv.GPUs, want)
	}
	if !strings.Contains(strings.Join(inv.Notes, "\n"), "GPU 2 ("+hosttest.UUID(2)+") is in MIG mode without MIG instances") {
		t.Errorf("notes %q do not name the MIG GPU without instances", inv.Notes)
	}
	inv, err = host.Discover(context.Background(), host.Options{Root: fakeRoot(t), GPUs: "1,0:2"})
	if err != nil || fmt.Sprint(indices(inv.GPUs)) != fmt.Sprint([]string{"1=" + hosttest.UUID(1), "0:2=" + hosttest.MIGUUID(0, 2)}) {
		t.Errorf("GPUs 1 and 0:2 = %v, %v", inv, err)
	}
}

func TestDiscoverNvidiaSMIFails(t *testing.T) {
	hosttest.OnPath(t, hosttest.Fake{Fail: hosttest.DriverNotLoaded})
	_, err := host.Discover(context.Background(), host.Options{Root: fakeRoot(t)})
	if err == nil || !strings.Contains(err.Error(), "nvidia-smi --query-gpu=index,uuid,name,memory.total,mig.mode.current --format=csv,noheader failed (exit status 9): NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.") ||
		!strings.HasSuffix(err.Error(), "; fix the NVIDIA driver, or set JIKKEN_GPUS=none (--gpus none) to run without GPUs") {
		t.Errorf("Discover with a failing nvidia-smi: %v", err)
	}
	// none does not ask nvidia-smi.
	if _, err := host.Discover(context.Background(), host.Options{Root: fakeRoot(t), GPUs: "none"}); err != nil {
		t.Errorf("Discover with GPUs none: %v", err)
	}
}

func TestDiscoverWithoutNvidiaSMI(t *testing.T) {
	o := host.Options{Root: fakeRoot(t), NvidiaSMI: "jikken-no-such-nvidia-smi"}
	inv, err := host.Discover(context.Background(), o)
	if err != nil || len(inv.GPUs) != 0 || inv.Notes[len(inv.Notes)-1] != "GPUs: none (no jikken-no-such-nvidia-smi on PATH)" {
		t.Errorf("Discover without nvidia-smi = %+v, %v", inv, err)
	}
	o.GPUs = "0,1,2,3"
	inv, err = host.Discover(context.Background(), o)
	if err != nil || fmt.Sprint(indices(inv.GPUs)) != "[0= 1= 2= 3=]" || !strings.HasPrefix(inv.Notes[len(inv.Notes)-1], "GPUs: 0,1,2,3, as listed") {
		t.Errorf("Discover without nvidia-smi, GPUs 0,1,2,3 = %+v, %v", inv, err)
	}
	if inv.GPUs[2].ID() != "2" {
		t.Errorf("a GPU without UUID is named by its index: %q", inv.GPUs[2].ID())
	}
	o.GPUs = "0," + hosttest.UUID(1)
	if _, err := host.Discover(context.Background(), o); err == nil || !strings.Contains(err.Error(), "but there is no jikken-no-such-nvidia-smi on PATH to find it; name whole GPUs by index") {
		t.Errorf("a UUID without nvidia-smi: %v", err)
	}
}

func TestDiscoverMissingMeminfo(t *testing.T) {
	root := fakeRoot(t)
	if err := os.WriteFile(filepath.Join(root, "proc/meminfo"), []byte("MemFree: 1 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := host.Discover(context.Background(), host.Options{Root: root, GPUs: "none"}); err == nil || !strings.Contains(err.Error(), "has no MemTotal; set the memory with --memory or JIKKEN_MEMORY") {
		t.Errorf("Discover without MemTotal: %v", err)
	}
	if _, err := host.Discover(context.Background(), host.Options{Root: root, GPUs: "none", Memory: 1 << 30}); err != nil {
		t.Errorf("Discover without MemTotal but with --memory: %v", err)
	}
}

// TestDiscoverThisMachine reads this machine's real cgroup: the figures are those of the
// cgroup files and /proc, read here independently.
func TestDiscoverThisMachine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	inv, err := host.Discover(context.Background(), host.Options{GPUs: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if inv.CPUs <= 0 || inv.CPUs > float64(runtime.NumCPU()) {
		t.Errorf("CPUs = %v on a machine with %d", inv.CPUs, runtime.NumCPU())
	}
	mi, _ := os.ReadFile("/proc/meminfo")
	var total int64
	fmt.Sscanf(strings.SplitN(string(mi), "\n", 2)[0], "MemTotal: %d kB", &total)
	want := total << 10
	if lim, ok := memoryLimitFromShell(t); ok && lim < want {
		want = lim
	}
	if inv.Memory != want {
		t.Errorf("Memory = %d, want %d (MemTotal %d kB, or the cgroup's limit if lower); notes %q", inv.Memory, want, total, inv.Notes)
	}
}

// memoryLimitFromShell reads the memory limit of this process's own v1 memory cgroup (not its
// parents'), as a shell would, to check Discover against on machines of this project's kind.
func memoryLimitFromShell(t *testing.T) (int64, bool) {
	out, err := exec.Command("/bin/sh", "-c", `p=$(grep -E '^[0-9]+:memory:' /proc/self/cgroup | cut -d: -f3); cat "/sys/fs/cgroup/memory$p/memory.limit_in_bytes"`).Output()
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	return n, err == nil
}

// TestDiscoverInDocker runs this test binary in a container limited to 1.5 CPUs and 256 MiB:
// Discover there reads the container's own cgroup, mounted from its subtree.
func TestDiscoverInDocker(t *testing.T) {
	if os.Getenv("JIKKEN_HOST_IN_CONTAINER") == "1" {
		inv, err := host.Discover(context.Background(), host.Options{GPUs: "none"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(inv)
		fmt.Printf("inventory: %s\n", b)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("containers run Linux")
	}
	if err := exec.Command("docker", "version").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Docker engine: %v (scripts/ci/docker.sh starts one)", err)
		}
		t.Skip("no Docker engine")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if f, err := elf.Open(self); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				f.Close()
				t.Skip("this test binary is dynamically linked (cgo); run with CGO_ENABLED=0")
			}
		}
		f.Close()
	}
	dir := t.TempDir()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "host.test"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY host.test /host.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := fmt.Sprintf("jikken-host-test:%d", os.Getpid())
	build := exec.Command("docker", "build", "-q", "-t", image, dir)
	build.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
	out, err := exec.Command("docker", "run", "--rm", "--cpus", "1.5", "--memory", "256m", "-e", "JIKKEN_HOST_IN_CONTAINER=1",
		image, "/host.test", "-test.run", "^TestDiscoverInDocker$", "-test.v").CombinedOutput()
	if err != nil {
		t.Fatalf("docker run: %v\n%s", err, out)
	}
	var inv host.Inventory
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if j, ok := strings.CutPrefix(sc.Text(), "inventory: "); ok {
			if err := json.Unmarshal([]byte(j), &inv); err != nil {
				t.Fatal(err)
			}
		}
	}
	if inv.CPUs != 1.5 || inv.Memory != 256<<20 {
		t.Errorf("in a container with --cpus 1.5 --memory 256m: %+v\n%s", inv, out)
	}
}
