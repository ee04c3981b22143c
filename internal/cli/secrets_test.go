package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// printEnv is a trial that shows its whole environment everywhere it can: stdout, stderr and
// a file of its outputs.
const printEnv = `env; env >&2; env > "$JIKKEN_OUTPUT_DIR/env.txt"`

// TestSecretsStayOutOfTrials runs, on the local and the docker backends, a trial that prints its
// environment while the runner holds the store's credentials (a MinIO store): the secret is in
// no output and in no object of the store.
func TestSecretsStayOutOfTrials(t *testing.T) {
	srv := s3test.MinIO(t)
	bucket := srv.NewBucket()
	for _, backend := range []string{"local", "docker"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			image := ""
			if backend == "docker" {
				ok, err := dockerReady()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					t.Skip("needs a docker engine, the docker CLI and busybox")
				}
				image = buildBusyboxImage(t, "jikken-secrets-test:1")
			}
			exp := `[{ name: "env", image: "` + image + `", cmd: ` + jsonString(printEnv) + ` }]`
			if image == "" {
				exp = `[{ name: "env", cmd: ` + jsonString(printEnv) + ` }]`
			}
			if err := os.WriteFile(filepath.Join(dir, "exp.jsonnet"), []byte(exp), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("jikken", "run", "exp.jsonnet", "--backend", backend, "--store", "s3://"+bucket+"/"+backend)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+dir, "JIKKEN_STORE=")
			for k, v := range srv.Env() {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("jikken run: %v\n%s", err, out)
			}
			if strings.Contains(string(out), s3test.SecretKey) {
				t.Errorf("the runner's output shows the secret:\n%s", out)
			}
			checkNoSecret(t, srv, bucket, backend+"/")
		})
	}
}

// checkNoSecret fails the test when an object under prefix holds the store's secret key, or when
// the trial's logs do not show that it ran and printed its environment.
func checkNoSecret(t *testing.T, srv *s3test.Server, bucket, prefix string) {
	t.Helper()
	printed := 0
	for _, key := range srv.Keys(bucket) {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		body := srv.Read(bucket, key)
		if strings.Contains(body, s3test.SecretKey) {
			t.Errorf("%s holds the store's secret key", key)
		}
		for _, name := range []string{"stdout.log", "stderr.log", "env.txt"} {
			if strings.HasSuffix(key, "/trials/env/"+name) && strings.Contains(body, "JIKKEN_TRIAL=env") {
				printed++
			}
		}
	}
	if printed != 3 {
		t.Errorf("%d of stdout.log, stderr.log and env.txt show the trial's environment; want all 3 (keys %v)", printed, srv.Keys(bucket))
	}
}

func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// buildBusyboxImage builds a FROM scratch image holding busybox as /bin/sh and its applets,
// removed when the test ends.
func buildBusyboxImage(t *testing.T, tag string) string {
	t.Helper()
	dir := t.TempDir()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	dockerfile := "FROM scratch\nCOPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\nENV PATH=/bin\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("docker", "build", "-q", "-t", tag, dir)
	build.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "-f", tag).Run() })
	return tag
}
