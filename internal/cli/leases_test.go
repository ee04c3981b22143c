//go:build linux

package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/host/hosttest"
)

// leaseUser is the user the test makes to run the second user's runs.
const leaseUser = "jikken-lease-test"

// Two users share a fake 4-GPU host through the machine's one ledger, and a runner SIGKILLed
// while its trials run does not lose their devices to the next run: over 40 trials of one GPU
// (root's run a, SIGKILLed once two of its trials run; the other user's run b alongside; root's run c
// started right after the kill), no two trials ever held one device at once. Each trial
// records its device and when it held it; the test checks that no two intervals of one device
// overlap. The runs ignore nvidia-smi's processes (--gpus-busy=ignore): the ledger alone keeps
// them apart.
func TestGPULeasesAcrossUsersAndAKilledRunner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make a second user and run jikken as it (useradd, setpriv)")
	}
	for _, tool := range []string{"useradd", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s to run jikken as a second user: %v", tool, err)
		}
	}
	u := ensureUser(t)

	base, err := os.MkdirTemp("", "jikken-leases-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir := func(name string, mode os.FileMode, owner *user.User) string {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if owner != nil {
			uid, _ := strconv.Atoi(owner.Uid)
			gid, _ := strconv.Atoi(owner.Gid)
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := dir("bin", 0o755, nil)
	log := dir("log", 0o777|os.ModeSticky, nil)
	// The test binary is jikken when called so (TestMain).
	copyFile(t, os.Args[0], filepath.Join(bin, "jikken"))
	if err := os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(hosttest.GPUs(4).Script()), 0o755); err != nil {
		t.Fatal(err)
	}
	// Each trial holds its GPU a while and records the interval.
	trial := fmt.Sprintf(`s=$(date +%%s%%N); echo "$CUDA_VISIBLE_DEVICES $s" > %[1]s/$JIKKEN_TRIAL.start; sleep 1.5; echo "$CUDA_VISIBLE_DEVICES $s $(date +%%s%%N) $(id -un)" > %[1]s/$JIKKEN_TRIAL`, log)
	spec := func(name string, n int) string {
		return fmt.Sprintf(`{ name: %q, matrix: { name: %q, params: { i: std.range(1, %d) }, resources: { gpu: 1 }, cmd: %q } }`, name, name, n, trial)
	}
	// As /run/lock: writable by all, sticky; the ledger in it is made by whichever runner comes first.
	leases := filepath.Join(dir("lock", 0o777|os.ModeSticky, nil), "jikken")
	env := func(who string) []string {
		return []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + filepath.Join(base, who),
			"JIKKEN_STORE=" + filepath.Join(base, who, "store"), "JIKKEN_LEASES=" + leases}
	}
	run := func(who, name string, n int) (*exec.Cmd, *bytes.Buffer) {
		home := dir(who, 0o755, map[string]*user.User{"root": nil, "other": u}[who])
		file := filepath.Join(home, name+".jsonnet")
		if err := os.WriteFile(file, []byte(spec(name, n)), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{filepath.Join(bin, "jikken"), "run", file, "-j", "4", "--in-place", "--gpus-busy=ignore"}
		if who == "other" {
			args = append([]string{"setpriv", "--reuid=" + u.Uid, "--regid=" + u.Gid, "--init-groups", "--"}, args...)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = home, env(who)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}

	a, aOut := run("root", "a", 12)
	b, bOut := run("other", "b", 16)
	// Kill a's runner once two of its trials run.
	for started(t, log, "a-") < 2 {
		if a.ProcessState != nil {
			t.Fatalf("run a ended before two of its trials started:\n%s", aOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	// 40 trials in all run: b's 16, those of a that had started, and c's.
	c, cOut := run("root", "c", 24-started(t, log, "a-"))
	for _, r := range []struct {
		cmd *exec.Cmd
		out *bytes.Buffer
	}{{b, bOut}, {c, cOut}} {
		if err := r.cmd.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", r.cmd.Args, err, r.out)
		}
	}
	// Run a's orphaned trials finish on their own.
	for ended(t, log) < started(t, log, "") {
		time.Sleep(50 * time.Millisecond)
	}

	held := map[string][][2]int64{}
	users := map[string]bool{}
	n := 0
	for _, f := range logs(t, log, "") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var dev, who string
		var s, e int64
		if _, err := fmt.Sscan(string(data), &dev, &s, &e, &who); err != nil {
			t.Fatalf("%s: %q: %v", f, data, err)
		}
		held[dev] = append(held[dev], [2]int64{s, e})
		users[who] = true
		n++
	}
	if n < 40 || !users["root"] || !users[leaseUser] {
		t.Fatalf("%d trials ran, by %v; want at least 40, by root and %s", n, users, leaseUser)
	}
	if len(held) != 4 {
		t.Fatalf("trials ran on %d devices, want the host's 4: %v", len(held), held)
	}
	double := 0
	for dev, iv := range held {
		sort.Slice(iv, func(i, j int) bool { return iv[i][0] < iv[j][0] })
		for i := 1; i < len(iv); i++ {
			if iv[i][0] < iv[i-1][1] {
				double++
				t.Errorf("%s was held twice at once: %v and %v", dev, iv[i-1], iv[i])
			}
		}
	}
	t.Logf("%d trials by %d users on %d devices, %d double-bookings", n, len(users), len(held), double)
	if st, err := os.Stat(leases); err != nil || st.Mode()&os.ModeSticky == 0 || st.Mode().Perm() != 0o777 {
		t.Errorf("the ledger folder: %v, want sticky and writable by all", err)
	}
}

// ensureUser makes leaseUser unless it exists, and removes it at the end when it made it.
func ensureUser(t *testing.T) *user.User {
	t.Helper()
	if u, err := user.Lookup(leaseUser); err == nil {
		return u
	}
	if out, err := exec.Command("useradd", "--no-create-home", "--shell", "/bin/sh", leaseUser).CombinedOutput(); err != nil {
		t.Skipf("cannot make a second user: useradd: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("userdel", leaseUser).Run() })
	u, err := user.Lookup(leaseUser)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// logs are the records of trials (whose names start with prefix) that have ended.
func logs(t *testing.T, dir, prefix string) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(dir, prefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range all {
		if !strings.HasSuffix(f, ".start") {
			out = append(out, f)
		}
	}
	return out
}

func started(t *testing.T, dir, prefix string) int {
	m, err := filepath.Glob(filepath.Join(dir, prefix+"*.start"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

func ended(t *testing.T, dir string) int { return len(logs(t, dir, "")) }
