package docker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/jikken-dev/jikken/backend/docker"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

func newBackend(t *testing.T) *docker.Backend {
	t.Helper()
	return newBackendWith(t, docker.Options{})
}

func newBackendWith(t *testing.T, o docker.Options) *docker.Backend {
	t.Helper()
	b, err := docker.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run is a finished run of an experiment through the runner and the docker backend.
type run struct {
	id   string
	sum  *runner.Summary
	runs store.Runs
}

func (r run) file(t *testing.T, trial, name string) string {
	t.Helper()
	b, err := store.ReadAll(context.Background(), r.runs.Blob, store.TrialKey(r.id, trial, name))
	if err != nil {
		t.Fatalf("%s of %s: %v", name, trial, err)
	}
	return string(b)
}

// runExperiment runs the Jsonnet experiment src (with IMAGE replaced by the test image) to the
// end, as `jikken run` does.
func runExperiment(t *testing.T, b *docker.Backend, src string, jobs int) run {
	t.Helper()
	r, err := runOn(t, api, b, busybox, src, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runOn runs src on the engine api talks to, with IMAGE replaced by image.
func runOn(t *testing.T, api *client.Client, b *docker.Backend, image, src string, jobs int) (run, error) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "exp.jsonnet")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(src, "IMAGE", image)), 0o644); err != nil {
		return run{}, err
	}
	id := runner.NewRunID("test", time.Now())
	exp, err := experiment.Load(path, experiment.Options{RunID: id})
	if err != nil {
		return run{}, err
	}
	folder, err := store.OpenFolder(filepath.Join(dir, "store"))
	if err != nil {
		return run{}, err
	}
	runs := store.Runs{Blob: folder}
	m := &store.Manifest{RunID: id, Experiment: exp.Name, File: exp.Path, Created: time.Now().UTC(), Backend: b.Name(), Trials: exp.Trials}
	if err := runs.WriteManifest(ctx, m); err != nil {
		return run{}, err
	}
	r := &runner.Runner{Backend: b, Runs: runs, Jobs: jobs, WorkRoot: filepath.Join(dir, "work"), Workdir: dir}
	sum, err := r.Execute(ctx, m, false)
	if err != nil {
		return run{}, err
	}
	t.Cleanup(func() { removeRun(t, api, id) })
	return run{id: id, sum: sum, runs: runs}, nil
}

// purge removes, quietly, every container and network labelled with the run.
func purge(id string) {
	ctx := context.Background()
	f := client.Filters{}.Add("label", docker.LabelRun+"="+id)
	cs, _ := api.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	for _, c := range cs.Items {
		_, _ = api.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	}
	ns, _ := api.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	for _, n := range ns.Items {
		_, _ = api.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
	}
}

// removeRun removes what a failed test may have left of a run.
func removeRun(t *testing.T, api *client.Client, id string) {
	ctx := context.Background()
	f := client.Filters{}.Add("label", docker.LabelRun+"="+id)
	cs, _ := api.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	for _, c := range cs.Items {
		t.Errorf("container %s of run %s left behind", c.ID[:12], id)
		_, _ = api.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	}
	ns, _ := api.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	for _, n := range ns.Items {
		t.Errorf("network %s of run %s left behind", n.Name, id)
		_, _ = api.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
	}
}

func statusOf(r run) map[string]string {
	out := map[string]string{}
	for _, rec := range r.sum.Trials {
		if rec != nil {
			out[rec.Name] = string(rec.Status) + ": " + rec.Reason
		}
	}
	return out
}

// A 20-trial sweep reaches a service by name on a network the run creates; the service is
// healthy (its container healthcheck) before they start, and stops when they are done.
func TestSweepWithService(t *testing.T) {
	needEngine(t)
	net := "jikken-test-net-" + randomHex()
	r := runExperiment(t, newBackend(t), `
local net = "`+net+`";
[{
  name: "store", image: "IMAGE", service: true, networks: [net],
  cmd: "mkdir -p /www && echo hello-from-store > /www/x && exec httpd -f -p 8080 -h /www",
  health: { cmd: "wget -q -O /dev/null http://127.0.0.1:8080/x", interval: "200ms", timeout: "60s" },
}] + [{
  name: "t-%d" % i, image: "IMAGE", networks: [net],
  depends: [{ trial: "store", condition: "healthy" }],
  params: { i: i },
  cmd: "wget -q -O - http://store:8080/x > $JIKKEN_OUTPUT_DIR/got.txt && echo line-$JIKKEN_PARAM_I && echo oops >&2 && echo '{\"i\": '$JIKKEN_PARAM_I'}' > $JIKKEN_OUTPUT_DIR/result.json",
} for i in std.range(1, 20)]
`, 4)
	if r.sum.Status != store.Succeeded || r.sum.Counts.Succeeded != 20 || r.sum.Counts.Stopped != 1 {
		t.Fatalf("run %s, %+v; trials: %v", r.sum.Status, r.sum.Counts, statusOf(r))
	}
	for i := 1; i <= 20; i++ {
		name := fmt.Sprintf("t-%d", i)
		if got := r.file(t, name, "got.txt"); got != "hello-from-store\n" {
			t.Errorf("%s fetched %q from the service", name, got)
		}
		if got := r.file(t, name, "stdout.log"); got != fmt.Sprintf("line-%d\n", i) {
			t.Errorf("%s stdout.log = %q", name, got)
		}
		if got := r.file(t, name, "stderr.log"); got != "oops\n" {
			t.Errorf("%s stderr.log = %q", name, got)
		}
		var res struct{ I int }
		if err := json.Unmarshal([]byte(r.file(t, name, "result.json")), &res); err != nil || res.I != i {
			t.Errorf("%s result.json = %s (%v)", name, r.file(t, name, "result.json"), err)
		}
	}
	rec, err := r.runs.Trial(context.Background(), r.id, "t-1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := api.ImageInspect(context.Background(), busybox)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Image != busybox || rec.ImageDigest != img.ID {
		t.Errorf("record has image %q digest %q, want %q %q", rec.Image, rec.ImageDigest, busybox, img.ID)
	}
	if _, err := api.NetworkInspect(context.Background(), net, client.NetworkInspectOptions{}); err == nil {
		t.Errorf("network %s the run created is still there", net)
	}
}

// attempt prepares what the runner hands a backend for one attempt.
func attempt(t *testing.T, run string, tr experiment.Trial) *runner.Attempt {
	t.Helper()
	dir := t.TempDir()
	a := &runner.Attempt{RunID: run, Trial: tr, N: 1, Dir: dir, OutputDir: filepath.Join(dir, "out"),
		StdoutPath: filepath.Join(dir, "stdout.log"), StderrPath: filepath.Join(dir, "stderr.log"), Workdir: dir}
	if err := os.MkdirAll(a.OutputDir, 0o755); err != nil {
		t.Fatal(err)
	}
	params := filepath.Join(dir, "params.json")
	if err := os.WriteFile(params, []byte(`{"x": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Env = []string{"JIKKEN_RUN_ID=" + run, "JIKKEN_TRIAL=" + tr.Name, "JIKKEN_PARAMS=" + params, "JIKKEN_OUTPUT_DIR=" + a.OutputDir}
	return a
}

func start(t *testing.T, b *docker.Backend, a *runner.Attempt) runner.Process {
	t.Helper()
	p, err := b.Start(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(0)
	})
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// A published port is bound to 127.0.0.1 unless the trial names another address, and the
// service answers there; a TCP health probe waits for it.
func TestPortsOnLoopback(t *testing.T) {
	needEngine(t)
	b := newBackend(t)
	port := freePort(t)
	a := attempt(t, "test-ports-"+randomHex(), experiment.Trial{Name: "web", Image: busybox,
		Cmd:    experiment.Command{Shell: "mkdir -p /www && echo pong > /www/ping && exec httpd -f -p 8080 -h /www"},
		Ports:  []string{strconv.Itoa(port) + ":8080"},
		Health: &experiment.Health{TCP: "localhost:8080"}})
	p := start(t, b, a)
	if err := p.(runner.Healthier).WaitHealthy(context.Background()); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimPrefix(p.Handle(), "docker:")
	c, err := api.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for port, binds := range c.Container.HostConfig.PortBindings {
		for _, bd := range binds {
			if bd.HostIP.String() != "127.0.0.1" {
				t.Errorf("port %s bound to %s, want 127.0.0.1", port, bd.HostIP)
			}
		}
	}
	resp, err := httpGet(fmt.Sprintf("127.0.0.1:%d", port), "/ping")
	if err != nil || !strings.HasSuffix(resp, "pong\n") {
		t.Errorf("GET /ping on 127.0.0.1:%d = %q, %v", port, resp, err)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if e := p.Wait(); e.Err != nil {
		t.Errorf("wait after stop: %v", e.Err)
	}
}

func httpGet(addr, path string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path)
	b, err := io.ReadAll(c)
	return string(b), err
}

// A host folder is bind-mounted where the trial says, a named volume keeps data between
// containers, and the trial's params and output folder are at their container paths.
func TestVolumes(t *testing.T) {
	needEngine(t)
	b := newBackend(t)
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "in.txt"), []byte("from-host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vol := "jikken-test-vol-" + randomHex()
	t.Cleanup(func() { _, _ = api.VolumeRemove(context.Background(), vol, client.VolumeRemoveOptions{Force: true}) })
	run := "test-volumes-" + randomHex()

	a := attempt(t, run, experiment.Trial{Name: "write", Image: busybox, Volumes: []string{host + ":/data", vol + ":/v"},
		Cmd: experiment.Command{Shell: "cat /data/in.txt > /data/out.txt && echo kept > /v/k && cp $JIKKEN_PARAMS $JIKKEN_OUTPUT_DIR/p.json && echo $JIKKEN_OUTPUT_DIR"}})
	if e := start(t, b, a).Wait(); e.Err != nil || e.Code != 0 {
		t.Fatalf("write: %+v; stderr: %s", e, readFile(t, a.StderrPath))
	}
	if got := readFile(t, filepath.Join(host, "out.txt")); got != "from-host\n" {
		t.Errorf("out.txt on the host = %q", got)
	}
	if got := readFile(t, filepath.Join(a.OutputDir, "p.json")); got != `{"x": 1}` {
		t.Errorf("params seen in the container = %q", got)
	}
	if got := readFile(t, a.StdoutPath); got != "/jikken/out\n" {
		t.Errorf("JIKKEN_OUTPUT_DIR in the container = %q", got)
	}

	a2 := attempt(t, run, experiment.Trial{Name: "read", Image: busybox, Volumes: []string{vol + ":/v:ro"},
		Cmd: experiment.Command{Argv: []string{"cat", "/v/k"}}})
	if e := start(t, b, a2).Wait(); e.Err != nil || e.Code != 0 {
		t.Fatalf("read: %+v; stderr: %s", e, readFile(t, a2.StderrPath))
	}
	if got := readFile(t, a2.StdoutPath); got != "kept\n" {
		t.Errorf("named volume read back %q", got)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Error(err)
	}
	return string(b)
}

// A trial that allocates more than its memory limit is killed and reported as out of memory;
// CPU limits reach the container.
func TestMemoryLimit(t *testing.T) {
	needEngine(t)
	b := newBackend(t)
	a := attempt(t, "test-oom-"+randomHex(), experiment.Trial{Name: "hog", Image: busybox,
		Resources: experiment.Resources{Memory: 64 << 20, CPU: 0.5},
		Cmd:       experiment.Command{Shell: "x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo ${#x}"}})
	p := start(t, b, a)
	id := strings.TrimPrefix(p.Handle(), "docker:")
	c, err := api.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Container.HostConfig.Resources; r.Memory != 64<<20 || r.NanoCPUs != 5e8 {
		t.Errorf("container limits: memory %d, nano cpus %d", r.Memory, r.NanoCPUs)
	}
	e := p.Wait()
	if e.Err != nil || e.Code != 137 || e.Reason != "out of memory (limit 64MiB)" {
		t.Errorf("exit = %+v, want code 137, reason \"out of memory (limit 64MiB)\"", e)
	}
}

// Live and StopLive find and remove a run's containers by label, and leave every other
// container alone: another run's, and one jikken never made.
func TestKillByLabel(t *testing.T) {
	needEngine(t)
	ctx := context.Background()
	b := newBackend(t)
	mine, other := "test-kill-"+randomHex(), "test-kill-other-"+randomHex()
	net := "jikken-test-kill-" + randomHex()
	t.Cleanup(func() { purge(mine) })
	for i := range 2 {
		_, err := b.Start(ctx, attempt(t, mine, experiment.Trial{Name: fmt.Sprintf("t-%d", i), Image: busybox, Networks: []string{net}, Cmd: experiment.Command{Argv: []string{"sleep", "600"}}}))
		if err != nil {
			t.Fatal(err)
		}
	}
	p := start(t, b, attempt(t, other, experiment.Trial{Name: "t-0", Image: busybox, Cmd: experiment.Command{Argv: []string{"sleep", "600"}}}))
	foreign, err := api.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: busybox, Cmd: []string{"sleep", "600"}, Labels: map[string]string{"owner": "someone-else"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = api.ContainerRemove(ctx, foreign.ID, client.ContainerRemoveOptions{Force: true}) })
	if _, err := api.ContainerStart(ctx, foreign.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}

	// A fresh backend, as `jikken kill` has after the runner died: it knows only the run id.
	k := newBackend(t)
	live, err := k.Live(ctx, mine)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 2 {
		t.Fatalf("Live(%s) = %+v, want its 2 containers", mine, live)
	}
	for _, lt := range live {
		if lt.RunID != mine || lt.Attempt != 1 || !strings.HasPrefix(lt.Trial, "t-") {
			t.Errorf("live trial %+v", lt)
		}
		if err := k.StopLive(ctx, lt); err != nil {
			t.Fatal(err)
		}
	}
	if live, _ := k.Live(ctx, mine); len(live) != 0 {
		t.Errorf("after StopLive, Live = %+v", live)
	}
	if _, err := api.NetworkInspect(ctx, net, client.NetworkInspectOptions{}); err == nil {
		t.Errorf("network %s of the killed run is still there", net)
	}
	for _, id := range []string{strings.TrimPrefix(p.Handle(), "docker:"), foreign.ID} {
		c, err := api.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err != nil || !c.Container.State.Running {
			t.Errorf("container %s not of the killed run: %v, running %v", id[:12], err, err == nil && c.Container.State.Running)
		}
	}
	_ = p.Stop(0)
	p.Wait()
}

// A trial whose image is missing fails with a clear error; the others of the run go on.
func TestMissingImage(t *testing.T) {
	needEngine(t)
	r := runExperiment(t, newBackend(t), `[
  { name: "ok", image: "IMAGE", cmd: ["true"] },
  { name: "ghost", image: "jikken-test/no-such-image:1", cmd: ["true"] },
]`, 2)
	st := statusOf(r)
	if st["ok"] != "succeeded: " {
		t.Errorf("ok: %s", st["ok"])
	}
	if !strings.HasPrefix(st["ghost"], "failed: image jikken-test/no-such-image:1 is not on the docker engine") || !strings.Contains(st["ghost"], "docker pull") {
		t.Errorf("ghost: %s", st["ghost"])
	}
}

// An engine that does not answer is reported before anything starts, with what to do.
func TestUnreachableEngine(t *testing.T) {
	b, err := docker.New(docker.Options{Host: "unix://" + filepath.Join(t.TempDir(), "none.sock")})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Check(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "is unreachable") || !strings.Contains(err.Error(), "DOCKER_HOST") {
		t.Errorf("Check = %v, want an unreachable-engine error naming DOCKER_HOST", err)
	}
}

// A GPU request on an engine without GPU support fails the check.
func TestGPUWithoutGPUs(t *testing.T) {
	needEngine(t)
	if _, err := os.Stat("/dev/nvidia0"); err == nil {
		t.Skip("this host has a GPU")
	}
	err := newBackend(t).Check(context.Background(), []experiment.Trial{{Name: "train", Resources: experiment.Resources{GPU: 1}}})
	if err == nil || !strings.Contains(err.Error(), "trial train asks for 1 GPU") {
		t.Errorf("Check = %v, want a GPU error", err)
	}
}

// A container that runs as an unprivileged user can write its outputs: the output folder is
// open to it.
func TestOutputsOfUnprivilegedUser(t *testing.T) {
	needEngine(t)
	ctx := context.Background()
	tag := "jikken-test-busybox-user:" + randomHex()
	if err := buildFrom(ctx, busybox, "USER 1000:1000", tag); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = api.ImageRemove(ctx, tag, client.ImageRemoveOptions{Force: true, PruneChildren: true}) })
	a := attempt(t, "test-user-"+randomHex(), experiment.Trial{Name: "user", Image: tag,
		Cmd: experiment.Command{Shell: "id -u > $JIKKEN_OUTPUT_DIR/uid && mkdir $JIKKEN_OUTPUT_DIR/artifacts && echo x > $JIKKEN_OUTPUT_DIR/artifacts/a"}})
	if e := start(t, newBackend(t), a).Wait(); e.Err != nil || e.Code != 0 {
		t.Fatalf("exit %+v; stderr: %s", e, readFile(t, a.StderrPath))
	}
	if got := readFile(t, filepath.Join(a.OutputDir, "uid")); got != "1000\n" {
		t.Errorf("uid = %q, want 1000", got)
	}
	if got := readFile(t, filepath.Join(a.OutputDir, "artifacts", "a")); got != "x\n" {
		t.Errorf("artifacts/a = %q", got)
	}
}
