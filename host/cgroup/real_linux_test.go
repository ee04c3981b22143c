package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// realManager is the manager of this machine's cgroups: tests that need one are skipped where
// none can be made, and fail under CI, which runs as root on a machine that has them.
func realManager(t *testing.T) *Manager {
	t.Helper()
	m, err := Detect(Options{})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs as root on a machine with cgroups, but: %v", err)
		}
		t.Skipf("%v: run the tests as root (cgroup v1), or in a delegated cgroup v2 group (systemd-run --user --scope -p Delegate=yes go test ...)", err)
	}
	return m
}

var runSeq int

// testRun is a run id of its own, so tests running at once do not meet.
func testRun(t *testing.T) string {
	runSeq++
	return fmt.Sprintf("cgtest-%d-%d-%d", os.Getpid(), time.Now().UnixNano()%1e9, runSeq)
}

func create(t *testing.T, m *Manager, run, trial string, l Limits) *Group {
	t.Helper()
	g, err := m.Create(run, trial, 1, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = g.Remove()
		_ = m.Prune(run)
	})
	return g
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestRealLimits(t *testing.T) {
	m := realManager(t)
	run := testRun(t)
	for _, c := range []struct {
		l           Limits
		quota, mem  string
		v2cpu, v2mm string
	}{
		{Limits{CPU: 2, Memory: 64 << 20}, "200000", "67108864", "200000 100000", "67108864"},
		{Limits{CPU: 0.5}, "50000", "", "50000 100000", "max"},
	} {
		g := create(t, m, run, fmt.Sprintf("cpu%v", c.l.CPU), c.l)
		if m.v2 {
			if got := readFile(t, filepath.Join(g.dir("v2"), "cpu.max")); got != c.v2cpu {
				t.Errorf("%+v: cpu.max = %q, want %q", c.l, got, c.v2cpu)
			}
			if got := readFile(t, filepath.Join(g.dir("v2"), "memory.max")); got != c.v2mm {
				t.Errorf("%+v: memory.max = %q, want %q", c.l, got, c.v2mm)
			}
			continue
		}
		if got := readFile(t, filepath.Join(g.dir("cpu"), "cpu.cfs_quota_us")) + "/" + readFile(t, filepath.Join(g.dir("cpu"), "cpu.cfs_period_us")); got != c.quota+"/100000" {
			t.Errorf("%+v: quota/period = %s, want %s/100000", c.l, got, c.quota)
		}
		if c.mem != "" {
			if got := readFile(t, filepath.Join(g.dir("memory"), "memory.limit_in_bytes")); got != c.mem {
				t.Errorf("%+v: memory.limit_in_bytes = %s, want %s", c.l, got, c.mem)
			}
			if p := filepath.Join(g.dir("memory"), "memory.memsw.limit_in_bytes"); exists(p) && readFile(t, p) != c.mem {
				t.Errorf("%+v: memory.memsw.limit_in_bytes = %s, want %s (no swap beyond the limit)", c.l, readFile(t, p), c.mem)
			}
		}
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// The attempt's first process is in the group before it runs anything: what it reads of its
// own cgroups first thing names the group, and the runner's threads are not in it.
func TestRealStartInside(t *testing.T) {
	m := realManager(t)
	g := create(t, m, testRun(t), "inside", Limits{CPU: 1, Memory: 256 << 20})
	var out bytes.Buffer
	cmd := exec.Command("/bin/cat", "/proc/self/cgroup")
	cmd.Stdout = &out
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, d := range g.Dirs() {
		rel := strings.TrimPrefix(d, filepath.Dir(filepath.Dir(filepath.Dir(d))))
		if !strings.Contains(out.String(), rel+"\n") {
			t.Errorf("the process's cgroups do not include %s:\n%s", rel, out.String())
		}
	}
	// The thread that entered the group is ending: Start returns once the child is started,
	// and the thread may exist a moment longer. Wait for the runner's threads to be out (a
	// thread left in the group for good fails after 5 s).
	var stray []string
	for range 100 {
		if stray = runnerThreadsIn(t, g.Dirs()); len(stray) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, s := range stray {
		t.Error(s)
	}
}

// runnerThreadsIn says which threads of this process are in one of dirs.
func runnerThreadsIn(t *testing.T, dirs []string) []string {
	self, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		tasks := readFile(t, filepath.Join(d, "cgroup.procs"))
		if f := filepath.Join(d, "tasks"); exists(f) {
			// cgroup v1: tasks lists threads, and cgroup.procs the process of any thread
			// in the group, which names the main thread while another one is in it.
			tasks = readFile(t, f)
		}
		for _, th := range self {
			if slices.Contains(strings.Fields(tasks), th.Name()) {
				out = append(out, fmt.Sprintf("thread %s of the runner is still in %s", th.Name(), d))
			}
		}
	}
	return out
}

// A trial allocating 300 MiB under a 64 MiB limit is killed by the OOM killer, and the group
// says so; one that stays within it is not.
func TestRealOOM(t *testing.T) {
	m := realManager(t)
	run := testRun(t)
	g := create(t, m, run, "hog", Limits{Memory: 64 << 20})
	cmd := exec.Command("/bin/sh", "-c", "head -c 300M /dev/zero | tail > /dev/null")
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 137 {
		t.Fatalf("300 MiB under 64 MiB: %v, want exit status 137", err)
	}
	if !g.OOMKilled(true) {
		t.Error("OOMKilled = false after the OOM killer killed tail")
	}

	g2 := create(t, m, run, "small", Limits{Memory: 64 << 20})
	cmd = exec.Command("/bin/sh", "-c", "head -c 8M /dev/zero | tail > /dev/null")
	if err := g2.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("8 MiB under 64 MiB: %v", err)
	}
	if g2.OOMKilled(false) {
		t.Error("OOMKilled = true for a trial within its limit")
	}
}

// Processes that left the attempt's session (setsid) are still in its group: Procs lists them,
// Kill ends them and Remove leaves nothing behind.
func TestRealKillEscaped(t *testing.T) {
	m := realManager(t)
	run := testRun(t)
	g := create(t, m, run, "escape", Limits{CPU: 1})
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("/bin/sh", "-c", `setsid sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 300' "$0" & wait`, pidFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	var escaped int
	for end := time.Now().Add(time.Minute); escaped == 0 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		escaped, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if escaped == 0 {
		t.Fatal("the escaping child did not start")
	}
	pids, err := g.Procs()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids, escaped) || !slices.Contains(pids, cmd.Process.Pid) {
		_ = syscall.Kill(escaped, syscall.SIGKILL)
		t.Fatalf("Procs = %v, want the leader %d and the escaped child %d", pids, cmd.Process.Pid, escaped)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := syscall.Kill(escaped, 0); !errors.Is(err, syscall.ESRCH) {
		if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", escaped)); !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("the escaped child %d lives on after Kill: %s", escaped, st)
		}
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range g.Dirs() {
		if exists(d) {
			t.Errorf("%s is left after Remove", d)
		}
	}
	if err := m.Prune(run); err != nil {
		t.Fatal(err)
	}
	for _, d := range g.Dirs() {
		if exists(filepath.Dir(d)) {
			t.Errorf("the run's folder %s is left after Prune", filepath.Dir(d))
		}
	}
}

// Find lists the groups of one run, wherever a runner made them, and nothing of other runs.
func TestRealFind(t *testing.T) {
	m := realManager(t)
	run, other := testRun(t), testRun(t)
	create(t, m, run, "a", Limits{CPU: 1})
	g2, err := m.Create(run, "b/odd name", 2, Limits{Memory: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g2.Remove(); _ = m.Prune(run) })
	create(t, m, other, "a", Limits{CPU: 1})
	found, err := m.Find(run)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range found {
		var kinds []string
		for _, p := range g.parts {
			kinds = append(kinds, p.kind)
		}
		got = append(got, fmt.Sprintf("%s %s@%d %v", g.Run, g.Trial, g.Attempt, kinds))
	}
	want := []string{run + " a@1 [cpu]", run + " b/odd name@2 [memory]"}
	if m.v2 {
		want = []string{run + " a@1 [v2]", run + " b/odd name@2 [v2]"}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Find = %q, want %q", got, want)
	}
	// A group made again for the same attempt starts empty (a dead runner's attempt is reused).
	again, err := m.Create(run, "a", 1, Limits{CPU: 1})
	if err != nil {
		t.Fatalf("create a group that exists: %v", err)
	}
	_ = again.Remove()
	_ = m.Prune(other)
}

// placementManager uses the v2 hierarchy without controllers (the hybrid layout of this
// project's machines): groups hold and kill processes but limit nothing, which is enough to
// check that clone3 places the child and cgroup.kill ends it.
func placementManager(t *testing.T) *Manager {
	t.Helper()
	s, err := ReadSelf("/")
	if err != nil || s.V2 == "" {
		t.Skip("no cgroup v2 hierarchy is mounted here")
	}
	if os.Getuid() != 0 {
		t.Skip("placing processes in the v2 hierarchy's root needs root")
	}
	return &Manager{v2: true, placeOnly: true, name: "jikken-test", hiers: []hier{{"v2", s.V2, s.V2Mount}}}
}

func TestV2Placement(t *testing.T) {
	m := placementManager(t)
	run := testRun(t)
	g := create(t, m, run, "placed", Limits{})
	var out bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", "cat /proc/self/cgroup; setsid sleep 300 & wait")
	cmd.Stdout = &out
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for end := time.Now().Add(time.Minute); len(pids) < 2 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		pids, _ = g.Procs()
	}
	if len(pids) < 2 {
		t.Fatalf("Procs = %v, want the shell and its escaped sleep", pids)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	rel := strings.TrimPrefix(g.dir("v2"), m.hiers[0].mount)
	if !strings.Contains(out.String(), "0::"+rel+"\n") {
		t.Errorf("the process started outside %s:\n%s", rel, out.String())
	}
	found, err := m.Find(run)
	if err != nil || len(found) != 1 || found[0].Trial != "placed" {
		t.Errorf("Find = %v, %v", found, err)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := m.Prune(run); err != nil {
		t.Fatal(err)
	}
	if exists(g.dir("v2")) || exists(filepath.Dir(g.dir("v2"))) {
		t.Errorf("%s is left after Remove", g.dir("v2"))
	}
	_ = os.Remove(filepath.Join(m.hiers[0].base, m.name))
}

// A limit too small to start anything says so, rather than failing on an odd error.
func TestRealTooSmall(t *testing.T) {
	m := realManager(t)
	g := create(t, m, testRun(t), "tiny", Limits{CPU: 0.001, Memory: 1})
	cmd := exec.Command("/bin/true")
	err := g.Start(cmd)
	if err == nil {
		err = cmd.Wait()
		if !g.OOMKilled(true) {
			t.Fatalf("true under a 1-byte limit ran: %v", err)
		}
		return
	}
	if !strings.Contains(err.Error(), "its memory limit (1 bytes) is too small to start it") {
		t.Errorf("Start under a 1-byte limit: %v", err)
	}
}

// Prune removes the folder of a run that no group is left in (a runner died between making it
// and the first group), and keeps one that holds a group.
func TestRealPrune(t *testing.T) {
	m := realManager(t)
	run, busy := testRun(t), testRun(t)
	dir := filepath.Join(m.hiers[0].base, m.name, escape(run))
	if err := m.makeRunDir(dir); err != nil {
		t.Fatal(err)
	}
	g := create(t, m, busy, "a", Limits{Memory: 64 << 20})
	if err := m.Prune(run); err != nil {
		t.Fatal(err)
	}
	if err := m.Prune(busy); err != nil {
		t.Fatal(err)
	}
	if exists(dir) {
		t.Errorf("Prune left the empty folder %s", dir)
	}
	if !exists(g.dir("memory")) && !exists(g.dir("v2")) {
		t.Errorf("Prune removed a group in use")
	}
}

// Attempts of one run made and removed at once all get their groups: removing the last group
// of a run removes the run's folder, and an attempt being made in it at that moment makes the
// folder again rather than failing (it failed with "no such file or directory", one attempt in
// a few hundred, under a runner starting and ending attempts of a run at once).
func TestRealCreateWhileOthersRemove(t *testing.T) {
	m := realManager(t)
	run := testRun(t)
	t.Cleanup(func() { _ = m.Prune(run) })
	const workers, rounds = 4, 150
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			var err error
			for i := range rounds {
				var g *Group
				g, err = m.Create(run, fmt.Sprintf("t%d", w), i, Limits{Memory: 64 << 20})
				if err != nil {
					break
				}
				if err = g.Remove(); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
