package cli_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jikken-dev/jikken/internal/cli"
	"github.com/jikken-dev/jikken/internal/cli/ghostcmd"
)

var updateScripts = flag.Bool("update", false, "rewrite the cmp files of script tests with the actual output")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"jikken":    func() { os.Exit(cli.Main()) },
		"git-ghost": func() { os.Exit(ghostcmd.Main()) },
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
