package cli_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jikken-dev/jikken/internal/cli"
)

var updateScripts = flag.Bool("update", false, "rewrite the cmp files of script tests with the actual output")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"jikken": func() { os.Exit(cli.Main()) },
	})
}

// TestScripts runs every testdata/script/*.txtar as an end-to-end test of the jikken binary.
// Each script runs in a fresh temp dir with its own store, HOME and git identity.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       *updateScripts,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("JIKKEN_STORE", filepath.Join(env.WorkDir, ".jikken"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, ".home"))
			env.Setenv("GIT_AUTHOR_NAME", "Test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			if h, ok := os.LookupEnv("DOCKER_HOST"); ok {
				env.Setenv("DOCKER_HOST", h)
			}
			// Scripts that build Go programs share the user's caches instead of a cold one.
			for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
				if out, err := exec.Command("go", "env", v).Output(); err == nil {
					env.Setenv(v, strings.TrimSpace(string(out)))
				}
			}
			repo, err := filepath.Abs(filepath.Join("..", ".."))
			if err != nil {
				return err
			}
			env.Setenv("REPO", repo)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exitcode N CMD [ARG...]: run CMD as exec does and check it exits with status N.
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: exitcode N CMD [ARG...]")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				got := 0
				var ee *exec.ExitError
				if err := ts.Exec(args[1], args[2:]...); errors.As(err, &ee) {
					got = ee.ExitCode()
				} else {
					ts.Check(err)
				}
				if (got == want) == neg {
					ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
				}
			},
			// version-matches: the manifest and trial records of every run in the store name the
			// jikken that the last command's stdout ('jikken --version') names.
			"version-matches": func(ts *testscript.TestScript, neg bool, args []string) {
				want := strings.TrimSpace(ts.ReadFile("stdout"))
				manifests, _ := filepath.Glob(ts.MkAbs(".jikken/runs/*/manifest.json"))
				records, _ := filepath.Glob(ts.MkAbs(".jikken/runs/*/trials/*/trial.json"))
				if len(manifests) == 0 || len(records) == 0 {
					ts.Fatalf("no runs in the store")
				}
				for _, p := range append(manifests, records...) {
					var doc struct{ Tool string }
					ts.Check(json.Unmarshal([]byte(ts.ReadFile(p)), &doc))
					if doc.Tool != want {
						ts.Fatalf("%s: tool %q, want %q", p, doc.Tool, want)
					}
				}
			},
		},
		Condition: func(cond string) (bool, error) {
			if cond == "docker" {
				return dockerReady()
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// dockerReady is the [docker] condition of the docker_* scripts: a reachable engine, the docker
// CLI and busybox to build test images with. Without them the scripts skip, unless CI=true.
func dockerReady() (bool, error) {
	err := exec.Command("docker", "version").Run()
	if err == nil {
		_, err = exec.LookPath("busybox")
	}
	if err != nil && os.Getenv("CI") == "true" {
		return false, fmt.Errorf("CI=true but no docker engine, docker CLI or busybox (%v); run scripts/ci/docker.sh", err)
	}
	return err == nil, nil
}
