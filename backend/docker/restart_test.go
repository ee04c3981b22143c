package docker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/jikken-dev/jikken/backend/docker"
	"github.com/jikken-dev/jikken/store"
)

// privateEngine is a dockerd this test starts (and restarts) itself, with its own data, socket
// and network namespace, so restarting it disturbs nothing else on the machine.
type privateEngine struct {
	dir  string
	sock string
	cmd  *exec.Cmd
	api  *client.Client
}

func newPrivateEngine(t *testing.T) *privateEngine {
	t.Helper()
	needEngine(t)
	why := ""
	if _, err := exec.LookPath("dockerd"); err != nil {
		why = "no dockerd binary"
	} else if _, err := exec.LookPath("unshare"); err != nil {
		why = "no unshare binary (util-linux)"
	} else if os.Geteuid() != 0 {
		why = "dockerd needs root"
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("engine-restart test: %s (CI=true)", why)
		}
		t.Skipf("skipping: %s to start a private engine", why)
	}
	// Short paths: containerd's sockets live under the exec root and unix paths are short.
	dir, err := os.MkdirTemp("", "jkd")
	if err != nil {
		t.Fatal(err)
	}
	e := &privateEngine{dir: dir, sock: filepath.Join(dir, "sock")}
	t.Cleanup(func() {
		e.stop(t)
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("remove %s: %v", dir, err)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "daemon.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	e.api, err = client.New(client.WithHost("unix://" + e.sock))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *privateEngine) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(e.dir, "dockerd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	// In a network namespace of its own: a second dockerd on the host's would take over (and
	// on its way delete) the host engine's docker0 bridge.
	e.cmd = exec.Command("unshare", "--net", "dockerd", "--config-file", filepath.Join(e.dir, "daemon.json"),
		"--data-root", filepath.Join(e.dir, "data"), "--exec-root", filepath.Join(e.dir, "x"),
		"--pidfile", filepath.Join(e.dir, "pid"), "-H", "unix://"+e.sock,
		"--iptables=false", "--ip-masq=false", "--storage-driver=vfs")
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	api, err := client.New(client.WithHost("unix://" + e.sock))
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := api.Ping(ctx, client.PingOptions{})
		cancel()
		if err == nil {
			return
		}
		if i == 600 {
			log, _ := os.ReadFile(filepath.Join(e.dir, "dockerd.log"))
			t.Fatalf("private dockerd did not answer: %v\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the private dockerd as an init system would (SIGTERM: it stops its containers).
func (e *privateEngine) stop(t *testing.T) {
	if e.cmd == nil || e.cmd.Process == nil || e.cmd.ProcessState != nil {
		return
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	if err := e.cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Logf("private dockerd: %v", err)
		}
	}
}

func (e *privateEngine) restart(t *testing.T) {
	t.Helper()
	e.stop(t)
	e.start(t)
}

// The engine is restarted while trials run: the containers it stopped are started again once
// it is back, the trials waiting for a slot start on the new engine, and the run ends with every
// trial succeeded and its outputs collected. The trials have retries because dockerd 20.10 in a
// fresh network namespace sometimes refuses a container's network endpoint just after its
// restart ("failed to update store for object type *libnetwork.endpoint"), also with the code
// before the copies of the attempt's files; a user's sweep would retry such a trial too. The
// test still fails if a trial is lost or a restarted container's outputs are not collected.
func TestEngineRestart(t *testing.T) {
	e := newPrivateEngine(t)
	bin, _ := exec.LookPath("busybox")
	if err := buildBusybox(context.Background(), e.api, bin, "jikken-test-busybox:restart"); err != nil {
		t.Fatal(err)
	}
	b, err := docker.New(docker.Options{Host: "unix://" + e.sock})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   run
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := runOn(t, e.api, b, "jikken-test-busybox:restart", `{
  name: "restart",
  matrix: {
    name: "t", params: { i: std.range(1, 4) }, image: "IMAGE", retries: 2, backoff: "1s",
    cmd: "sleep 3; echo '{\"i\": {{i}}}' > $JIKKEN_OUTPUT_DIR/result.json",
  },
}`, 2)
		done <- result{r, err}
	}()

	// Restart the engine once the first trials run.
	for {
		cs, err := e.api.ContainerList(context.Background(), client.ContainerListOptions{
			Filters: client.Filters{}.Add("label", docker.LabelTrial).Add("status", "running")})
		if err == nil && len(cs.Items) > 0 {
			break
		}
		select {
		case res := <-done:
			t.Fatalf("the run ended before the engine restarted: %v %v", res.err, statusOf(res.r))
		case <-time.After(100 * time.Millisecond):
		}
	}
	e.restart(t)

	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	r := res.r
	if r.sum.Status != store.Succeeded || r.sum.Counts.Succeeded != 4 {
		t.Fatalf("run %s, %+v; trials: %v", r.sum.Status, r.sum.Counts, statusOf(r))
	}
	for i := 1; i <= 4; i++ {
		if got, want := r.file(t, fmt.Sprintf("t-%d", i), "result.json"), fmt.Sprintf("{\"i\": %d}\n", i); got != want {
			t.Errorf("t-%d result.json = %q, want %q", i, got, want)
		}
	}
}
