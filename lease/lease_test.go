//go:build linux

package lease

import (
	"bufio"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func h(trial string, attempt int) Holder { return Holder{Run: "r", Trial: trial, Attempt: attempt} }

func TestSharesAddUpToOneDevice(t *testing.T) {
	b := Book{Dir: filepath.Join(t.TempDir(), "leases")}
	l1, busy, err := b.Take([]string{"GPU-a"}, []int{500}, h("x", 1))
	if err != nil || busy != nil {
		t.Fatal(err, busy)
	}
	if _, busy, _ := b.Take([]string{"GPU-a"}, []int{500}, h("y", 1)); busy != nil {
		t.Fatalf("a second half was refused: %v", busy)
	}
	if _, busy, _ := b.Take([]string{"GPU-b", "GPU-a"}, []int{1000, 250}, h("z", 1)); len(busy) != 1 || busy[0] != "GPU-a" {
		t.Fatalf("a full device was given out: busy %v", busy)
	}
	// All or nothing: GPU-b was not taken by the refused lease.
	if _, busy, _ := b.Take([]string{"GPU-b"}, []int{1000}, h("w", 1)); busy != nil {
		t.Fatalf("a refused lease kept GPU-b: %v", busy)
	}
	if err := l1.Release(); err != nil {
		t.Fatal(err)
	}
	if _, busy, _ := b.Take([]string{"GPU-a"}, []int{500}, h("v", 1)); busy != nil {
		t.Fatalf("a released share was not given again: %v", busy)
	}
}

// Many takers at once never hold more than the device.
func TestConcurrentTakersNeverOverbook(t *testing.T) {
	b := Book{Dir: t.TempDir()}
	var held, peak atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				l, busy, err := b.Take([]string{"GPU-0"}, []int{500}, h(string(rune('a'+i)), k+1))
				if err != nil {
					t.Error(err)
					return
				}
				if busy != nil {
					continue
				}
				n := held.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(time.Millisecond)
				held.Add(-1)
				if err := l.Release(); err != nil {
					t.Error(err)
				}
			}
		}(i)
	}
	wg.Wait()
	if peak.Load() > 2 {
		t.Fatalf("%d half shares of one device were held at once", peak.Load())
	}
}

// holder runs this test binary as a runner that takes GPU-0 for h("t", 1) in dir and, with
// trial "bind", starts a trial (sleep, a process group of its own) and binds the lease to it;
// with "inherit", starts one that inherits the lease's hold file, and binds nothing (as a
// runner killed between the two). It returns the runner and the trial's pid once the lease is
// taken.
func holder(t *testing.T, dir string, trial string) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRunner$")
	cmd.Env = append(os.Environ(), "LEASE_HOLDER_DIR="+dir, "LEASE_HOLDER_TRIAL="+trial)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kill(cmd) })
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 || f[0] != "held" {
		t.Fatalf("the holder did not take its lease: %q %v", line, err)
	}
	pid, _ := strconv.Atoi(f[1])
	return cmd, pid
}

// kill kills a runner with SIGKILL and reaps it.
func kill(runner *exec.Cmd) {
	_ = runner.Process.Kill()
	_ = runner.Wait()
}

func TestHelperRunner(t *testing.T) {
	dir := os.Getenv("LEASE_HOLDER_DIR")
	if dir == "" {
		t.Skip("run by holder")
	}
	b := Book{Dir: dir}
	l, busy, err := b.Take([]string{"GPU-0"}, []int{1000}, h("t", 1))
	if err != nil || busy != nil {
		os.Exit(1)
	}
	pid := 0
	if how := os.Getenv("LEASE_HOLDER_TRIAL"); how != "" {
		trial := exec.Command("sleep", "60")
		trial.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if how == "inherit" {
			trial.ExtraFiles = []*os.File{l.Hold()}
		}
		if err := trial.Start(); err != nil {
			os.Exit(1)
		}
		pid = trial.Process.Pid
		if how == "bind" {
			if err := l.Bind(pid); err != nil {
				os.Exit(1)
			}
		}
	}
	os.Stdout.WriteString("held " + strconv.Itoa(pid) + "\n")
	time.Sleep(time.Minute)
}

func busyFor(t *testing.T, b Book, who Holder) []string {
	t.Helper()
	l, busy, err := b.Take([]string{"GPU-0"}, []int{1000}, who)
	if err != nil {
		t.Fatal(err)
	}
	if l != nil {
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	}
	return busy
}

// The lease of a runner that died before its trial started expires with it.
func TestLeaseOfADeadRunnerExpires(t *testing.T) {
	dir := t.TempDir()
	runner, _ := holder(t, dir, "")
	b := Book{Dir: dir}
	if busyFor(t, b, h("other", 1)) == nil {
		t.Fatal("a device another process holds was given out")
	}
	kill(runner)
	if busy := busyFor(t, b, h("other", 1)); busy != nil {
		t.Fatalf("the lease of a dead runner still holds the device: %v", busy)
	}
}

// A runner SIGKILLed while its trial runs: the trial's lease holds until the trial's process
// group has no process left; and so it does when the runner was killed before it could bind
// the lease, as the trial holds the lease's hold file.
func TestLeaseLivesWithTheTrialsProcesses(t *testing.T) {
	for _, how := range []string{"bind", "inherit"} {
		dir := t.TempDir()
		runner, trial := holder(t, dir, how)
		kill(runner)
		b := Book{Dir: dir}
		if busy := busyFor(t, b, h("other", 1)); busy == nil {
			t.Fatalf("%s: the device of a trial that still runs was given out once its runner was killed", how)
		}
		// The trial's process is the orphan of a killed runner: init reaps it.
		if err := syscall.Kill(-trial, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for syscall.Kill(-trial, 0) != syscall.ESRCH {
			time.Sleep(10 * time.Millisecond)
		}
		if busy := busyFor(t, b, h("other", 1)); busy != nil {
			t.Fatalf("%s: the lease of a trial whose processes all ended still holds the device: %v", how, busy)
		}
	}
}

// A runner that adopts an attempt an earlier one started takes over its lease.
func TestAnAdoptedAttemptKeepsItsLease(t *testing.T) {
	dir := t.TempDir()
	runner, _ := holder(t, dir, "bind")
	kill(runner)
	b := Book{Dir: dir}
	l, busy, err := b.Take([]string{"GPU-0"}, []int{1000}, h("t", 1))
	if err != nil || busy != nil {
		t.Fatalf("the adopting runner was refused its own attempt's lease: %v %v", busy, err)
	}
	if busy := busyFor(t, b, h("other", 1)); busy == nil {
		t.Fatal("an adopted attempt's device was given out")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// A device a process uses that no lease accounts for is not handed out; one that a lease's
// trial uses is, for the share left.
func TestDevicesOthersUseAreBusy(t *testing.T) {
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	trial := exec.Command("sh", "-c", "sleep 60 & wait")
	trial.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := trial.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-trial.Process.Pid, syscall.SIGKILL); _ = trial.Wait() })
	var child int
	for child == 0 {
		out, _ := exec.Command("pgrep", "-s", strconv.Itoa(trial.Process.Pid), "sleep").Output()
		child, _ = strconv.Atoi(strings.TrimSpace(string(out)))
	}
	apps := map[string][]int{"GPU-a": {other.Process.Pid}, "GPU-b": {child}}
	b := Book{Dir: t.TempDir(), InUse: func() (map[string][]int, error) { return apps, nil }}
	if busy := busyForDevice(t, b, "GPU-a", h("x", 1)); len(busy) != 1 {
		t.Fatalf("a device another process uses was given out: busy %v", busy)
	}
	if busy := busyForDevice(t, b, "GPU-b", h("x", 1)); len(busy) != 1 {
		t.Fatalf("a device whose process no lease accounts for was given out: busy %v", busy)
	}
	delete(apps, "GPU-b")
	l, busy, err := b.Take([]string{"GPU-b"}, []int{500}, h("y", 1))
	if err != nil || busy != nil {
		t.Fatal(err, busy)
	}
	if err := l.Bind(trial.Process.Pid); err != nil {
		t.Fatal(err)
	}
	apps["GPU-b"] = []int{child}
	if busy := busyForDevice(t, b, "GPU-b", h("z", 1)); busy != nil {
		t.Fatalf("the other half of a device whose only process is a leased trial's was refused: %v", busy)
	}
	b.InUse = nil
	if busy := busyForDevice(t, b, "GPU-a", h("w", 1)); busy != nil {
		t.Fatalf("without the check (--gpus-busy=ignore) the device was still refused: %v", busy)
	}
}

func busyForDevice(t *testing.T, b Book, d string, who Holder) []string {
	t.Helper()
	l, busy, err := b.Take([]string{d}, []int{500}, who)
	if err != nil {
		t.Fatal(err)
	}
	if l != nil {
		_ = l.Release()
	}
	return busy
}

// The ledger's folder is made for every user, sticky; a folder where others could remove
// leases is refused.
func TestTheLedgerFolderIsSharedAndSticky(t *testing.T) {
	root := t.TempDir()
	b := Book{Dir: filepath.Join(root, "run", "jikken")}
	if _, _, err := b.Take([]string{"GPU-0"}, []int{1000}, h("x", 1)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSticky == 0 || st.Mode().Perm() != 0o777 {
		t.Fatalf("the ledger folder's mode is %v, want sticky and writable by all", st.Mode())
	}
	open := Book{Dir: filepath.Join(root, "open")}
	if err := os.Mkdir(open.Dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open.Dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, _, err := open.Take([]string{"GPU-0"}, []int{1000}, h("x", 1)); err == nil || !strings.Contains(err.Error(), "chmod +t") {
		t.Fatalf("a world-writable folder without the sticky bit was used: %v", err)
	}
}

func TestDefaultFolder(t *testing.T) {
	t.Setenv(EnvDir, "")
	if d := Default().Dir; d != DefaultDir && !strings.HasPrefix(d, os.TempDir()) {
		t.Fatalf("default ledger %s", d)
	}
	t.Setenv(EnvDir, "/x/y")
	if d := Default().Dir; d != "/x/y" {
		t.Fatalf("$%s did not name the ledger: %s", EnvDir, d)
	}
}

// Another user shares the ledger: root's lease holds the device for them too, and they can
// neither remove nor rewrite it, but can take a device of their own. Needs root and a second
// user: nobody, or $LEASE_OTHER_USER.
func TestAnotherUserCannotRemoveALease(t *testing.T) {
	if dir := os.Getenv("LEASE_OTHER_DIR"); dir != "" {
		b := Book{Dir: dir}
		files, _ := filepath.Glob(filepath.Join(dir, "0-*.lease"))
		switch {
		case len(files) != 1:
			t.Fatalf("root's lease files: %v", files)
		case os.Remove(files[0]) == nil:
			t.Fatal("removed root's lease")
		case os.WriteFile(files[0], []byte("[]"), 0o644) == nil:
			t.Fatal("rewrote root's lease")
		}
		if busy := busyFor(t, b, h("theirs", 1)); len(busy) != 1 {
			t.Fatalf("root's device was given to another user: %v", busy)
		}
		if _, busy, err := b.Take([]string{"GPU-1"}, []int{1000}, h("theirs", 1)); err != nil || busy != nil {
			t.Fatalf("another user could not take a free device: %v %v", busy, err)
		}
		return
	}
	name := os.Getenv("LEASE_OTHER_USER")
	if name == "" {
		name = "nobody"
	}
	other, err := user.Lookup(name)
	if os.Geteuid() != 0 || err != nil {
		t.Skipf("needs root and a second user (%s): %v", name, err)
	}
	base, err := os.MkdirTemp("", "lease-users-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "lease.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	b := Book{Dir: filepath.Join(base, "leases")}
	if _, busy, err := b.Take([]string{"GPU-0"}, []int{1000}, h("root's", 1)); err != nil || busy != nil {
		t.Fatal(err, busy)
	}
	cmd := exec.Command("setpriv", "--reuid="+other.Uid, "--regid="+other.Gid, "--clear-groups", "--",
		bin, "-test.run=^TestAnotherUserCannotRemoveALease$", "-test.v")
	cmd.Env = append(os.Environ(), "LEASE_OTHER_DIR="+b.Dir)
	cmd.Dir = base
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as %s: %v\n%s", name, err, out)
	}
}
