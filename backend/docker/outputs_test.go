//go:build unix

package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/jikken-dev/jikken/backend/docker"
	"github.com/jikken-dev/jikken/experiment"
)

// Copied (FilesCopy, the way for a remote engine or a runner that is not root), the attempt's
// files travel through the engine, not bind mounts:
// the container has no mount at all, yet it reads its params and what it writes under its output
// folder, sub-folders and executable bits included, is in the attempt's folder after Wait. A
// symbolic link is left out, with a note in stderr.log.
func TestOutputsCopiedNotMounted(t *testing.T) {
	needEngine(t)
	a := attempt(t, "test-copy-"+randomHex(), experiment.Trial{Name: "copy", Image: busybox,
		Cmd: experiment.Command{Shell: `cd $JIKKEN_OUTPUT_DIR && mkdir -p sub/dir && echo deep > sub/dir/file && echo '{"ok": true}' > result.json && printf '#!/bin/sh\n' > run.sh && chmod 755 run.sh && ln -s /etc/passwd link && cp $JIKKEN_PARAMS p.json`}})
	p := start(t, newBackendWith(t, docker.Options{Files: docker.FilesCopy}), a)
	c, err := api.ContainerInspect(context.Background(), strings.TrimPrefix(p.Handle(), "docker:"), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Container.Mounts {
		t.Errorf("container mounts %s at %s", m.Source, m.Destination)
	}
	if hc := c.Container.HostConfig; len(hc.Mounts) != 0 || len(hc.Binds) != 0 {
		t.Errorf("container created with mounts %+v, binds %v", hc.Mounts, hc.Binds)
	}
	if e := p.Wait(); e.Err != nil || e.Code != 0 {
		t.Fatalf("exit %+v; stderr: %s", e, readFile(t, a.StderrPath))
	}
	for name, want := range map[string]string{"sub/dir/file": "deep\n", "result.json": "{\"ok\": true}\n", "run.sh": "#!/bin/sh\n", "p.json": `{"x": 1}`} {
		if got := readFile(t, filepath.Join(a.OutputDir, filepath.FromSlash(name))); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(a.OutputDir, "run.sh")); err != nil || fi.Mode().Perm()&0o111 != 0o111 {
		t.Errorf("run.sh lost its executable bits: %v %v", fi.Mode(), err)
	}
	if _, err := os.Lstat(filepath.Join(a.OutputDir, "link")); !os.IsNotExist(err) {
		t.Errorf("the symbolic link was collected (%v)", err)
	}
	if got := readFile(t, a.StderrPath); !strings.Contains(got, "jikken: left out /jikken/out/link, a symbolic link (to /etc/passwd)") {
		t.Errorf("stderr.log = %q, want a note about the link", got)
	}
}

// A trial running as root writes in sub-folders, one it closes to others: the runner gets
// regular files of its own, which it can read and remove. Run as root, the test also runs
// itself again as an unprivileged runner (nobody, in the group of the engine's socket), where
// bind mounts used to leave root's files it could not remove.
func TestOutputsOfRootContainerBelongToRunner(t *testing.T) {
	needEngine(t)
	a := attempt(t, "test-owner-"+randomHex(), experiment.Trial{Name: "root", Image: busybox,
		Cmd: experiment.Command{Shell: "cd $JIKKEN_OUTPUT_DIR && id -u > uid && mkdir -p artifacts/deep && echo x > artifacts/deep/a && chmod 700 artifacts artifacts/deep"}})
	if e := start(t, newBackendWith(t, docker.Options{Files: docker.FilesCopy}), a).Wait(); e.Err != nil || e.Code != 0 {
		t.Fatalf("exit %+v; stderr: %s", e, readFile(t, a.StderrPath))
	}
	for name, want := range map[string]string{"uid": "0\n", "artifacts/deep/a": "x\n"} {
		p := filepath.Join(a.OutputDir, filepath.FromSlash(name))
		if got := readFile(t, p); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; !fi.Mode().IsRegular() || int(uid) != os.Getuid() {
			t.Errorf("%s: mode %v, owner %d; want a regular file of the runner (uid %d)", name, fi.Mode(), uid, os.Getuid())
		}
	}
	if err := os.RemoveAll(filepath.Join(a.OutputDir, "artifacts")); err != nil {
		t.Errorf("the runner cannot remove the outputs: %v", err)
	}
	if os.Geteuid() == 0 && os.Getenv(childRunnerEnv) == "" {
		runAsNobody(t, "^TestOutputsOfRootContainerBelongToRunner$")
	}
}

// runAsNobody runs the named test of this binary again as uid 65534, in the group of the
// engine's socket.
func runAsNobody(t *testing.T, test string) {
	t.Helper()
	sock, ok := strings.CutPrefix(api.DaemonHost(), "unix://")
	if !ok {
		t.Logf("not run as an unprivileged runner: the engine is at %s", api.DaemonHost())
		return
	}
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The build's folder is root's alone: copy the binary where nobody can run it.
	dir, err := os.MkdirTemp("", "jikken-test-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "docker.test")
	if err := copyFile(exe, bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run="+test, "-test.count=1", "-test.v")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "DOCKER_HOST=" + api.DaemonHost(),
		childRunnerEnv + "=1", childImageEnv + "=" + busybox}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534,
		Groups: []uint32{fi.Sys().(*syscall.Stat_t).Gid}}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: ") {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// The input archive gives a container params.json and an empty output folder any user can
// write, and, copied again, empties the folder: a container started again after an engine
// restart neither sees nor hands back the files of its cut-short start.
func TestInputArchiveEmptiesOutputs(t *testing.T) {
	needEngine(t)
	ctx := context.Background()
	id := createIdle(t)
	in, err := docker.InputArchive([]byte(`{"x": 1}`), true)
	if err != nil {
		t.Fatal(err)
	}
	copyTo(t, id, in)
	copyTo(t, id, tarOf(t, map[string]string{"jikken/out/stale": "old", "jikken/out/sub/f": "old"}))
	copyTo(t, id, in)

	res, err := api.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: "/jikken/out"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Content.Close()
	if perm := res.Stat.Mode.Perm(); perm != 0o777 {
		t.Errorf("/jikken/out has mode %v, want 0777", perm)
	}
	dir := t.TempDir()
	if _, err := docker.ExtractOutputs(res.Content, dir); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the output folder still holds %v", entries)
	}
	pr, err := api.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: "/jikken/params.json"})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Content.Close()
	tr := tar.NewReader(pr.Content)
	if _, err := tr.Next(); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(tr); string(b) != `{"x": 1}` {
		t.Errorf("params.json in the container = %q", b)
	}
}

// createIdle creates (and does not start) a container of the test image, removed at the end.
func createIdle(tb testing.TB) string {
	tb.Helper()
	ctx := context.Background()
	c, err := api.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: busybox, Cmd: []string{"true"}}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _, _ = api.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}) })
	return c.ID
}

func copyTo(tb testing.TB, id string, archive []byte) {
	tb.Helper()
	_, err := api.CopyToContainer(context.Background(), id, client.CopyToContainerOptions{DestinationPath: "/",
		Content: bytes.NewReader(archive), AllowOverwriteDirWithFile: true})
	if err != nil {
		tb.Fatal(err)
	}
}

// tarOf is an archive of files (their folders made by the engine).
func tarOf(tb testing.TB, files map[string]string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkAttemptFiles is what moving an attempt's files through the engine costs it, on a
// container that is not running (as before a start and after the end): "in" copies the input
// archive in; "out" copies an output folder of three small files (result.json, metrics.jsonl,
// a 64 KiB artifact) out and extracts it. What the trial writes is put in outside the timer.
func BenchmarkAttemptFiles(b *testing.B) {
	if engineErr != nil {
		b.Skipf("skipping: %v", engineErr)
	}
	ctx := context.Background()
	id := createIdle(b)
	in, err := docker.InputArchive([]byte(`{"lr": 0.1, "seed": 1}`), true)
	if err != nil {
		b.Fatal(err)
	}
	outputs := tarOf(b, map[string]string{"jikken/out/result.json": `{"loss": 0.1}`,
		"jikken/out/metrics.jsonl":       strings.Repeat(`{"step": 1, "loss": 0.5}`+"\n", 100),
		"jikken/out/artifacts/model.bin": strings.Repeat("x", 64<<10)})
	b.Run("in", func(b *testing.B) {
		for b.Loop() {
			copyTo(b, id, in)
		}
	})
	b.Run("out", func(b *testing.B) {
		copyTo(b, id, outputs)
		root := b.TempDir()
		for i := 0; i < b.N; i++ {
			dir, err := os.MkdirTemp(root, "out")
			if err != nil {
				b.Fatal(err)
			}
			res, err := api.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: "/jikken/out"})
			if err != nil {
				b.Fatal(err)
			}
			_, err = docker.ExtractOutputs(res.Content, dir)
			res.Content.Close()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// By default a root runner on a local engine binds the attempt's folders (the cheapest way:
// no archive request), and a remote engine cannot be asked to bind.
func TestFilesAutoBindsForRootOnALocalEngine(t *testing.T) {
	if _, err := docker.New(docker.Options{Host: "tcp://127.0.0.1:1", Files: docker.FilesBind}); err == nil || !strings.Contains(err.Error(), "not on this machine") {
		t.Errorf("bind with a remote engine: %v", err)
	}
	if _, err := docker.New(docker.Options{Files: "mount"}); err == nil || !strings.Contains(err.Error(), `use "copy" or "bind"`) {
		t.Errorf("an unknown way: %v", err)
	}
	needEngine(t)
	if os.Geteuid() != 0 || !strings.HasPrefix(api.DaemonHost(), "unix://") {
		t.Skip("the automatic choice binds only for root on a local engine")
	}
	a := attempt(t, "test-bind-"+randomHex(), experiment.Trial{Name: "bind", Image: busybox,
		Cmd: experiment.Command{Shell: `cp $JIKKEN_PARAMS $JIKKEN_OUTPUT_DIR/p.json`}})
	p := start(t, newBackend(t), a)
	c, err := api.ContainerInspect(context.Background(), strings.TrimPrefix(p.Handle(), "docker:"), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound := map[string]string{}
	for _, m := range c.Container.Mounts {
		bound[m.Destination] = m.Source
	}
	if bound["/jikken/out"] != a.OutputDir {
		t.Errorf("mounts %v, want the output folder bound", bound)
	}
	if e := p.Wait(); e.Err != nil || e.Code != 0 {
		t.Fatalf("exit %+v; stderr: %s", e, readFile(t, a.StderrPath))
	}
	if got := readFile(t, filepath.Join(a.OutputDir, "p.json")); got != `{"x": 1}` {
		t.Errorf("p.json = %q", got)
	}
}
