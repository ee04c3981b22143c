//go:build linux

package docker_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

// A container on this host names its init, which leads a process group of its own, so the
// GPU leases of the attempt hold while the container runs, even after its runner is killed.
func TestGroupLeaderIsTheContainersInit(t *testing.T) {
	needEngine(t)
	b := newBackend(t)
	if !b.OnThisHost() {
		t.Skip("the engine is not on this host")
	}
	a := attempt(t, "test-leader-"+randomHex(), experiment.Trial{Name: "leader", Image: busybox, Cmd: experiment.Command{Shell: "sleep 60"}})
	p := start(t, b, a)
	g, ok := p.(runner.GroupLeader)
	if !ok || g.GroupLeader() <= 1 {
		t.Fatalf("the container names no leader on this host: %v", ok)
	}
	pid := g.GroupLeader()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if f[2] != fmt.Sprint(pid) {
		t.Fatalf("the container's init %d is in process group %s, not its own", pid, f[2])
	}
	// The init may be between the shell and its exec of sleep: while the kernel swaps its
	// memory, /proc/PID/environ reads empty. Read again until the environment shows.
	var env []byte
	for range 100 {
		if env, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err != nil || len(env) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || !strings.Contains(string(env), "JIKKEN_TRIAL=leader") {
		t.Fatalf("pid %d is not the trial's process: %v (environment %q)", pid, err, env)
	}
}
