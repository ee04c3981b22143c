package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jikken-dev/jikken/host/hosttest"
	"github.com/jikken-dev/jikken/internal/cli"
	"github.com/jikken-dev/jikken/internal/cli/ghostcmd"
	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/report/chart/charttest"
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
			// The host's GPU ledger is shared by every user and test: each script has its own.
			env.Setenv("JIKKEN_LEASES", filepath.Join(env.WorkDir, ".leases"))
			env.Setenv("GIT_AUTHOR_NAME", "Test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			for _, v := range []string{"DOCKER_HOST", "SLURM_CONF"} {
				if h, ok := os.LookupEnv(v); ok {
					env.Setenv(v, h)
				}
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
			"svgtext":         svgText,
			"fake-nvidia-smi": fakeNvidiaSMI,
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
			switch cond {
			case "docker":
				return dockerReady()
			case "cjkfont":
				return cjkFontReady()
			case "slurm":
				return slurmReady()
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

// slurmReady is the [slurm] condition of the slurm_* scripts: Slurm's client commands and a
// controller that answers. Without them the scripts skip, unless CI=true.
func slurmReady() (bool, error) {
	err := slurmAnswers()
	if err != nil && os.Getenv("CI") == "true" {
		return false, fmt.Errorf("CI=true but no Slurm cluster answers (%v); run scripts/ci/slurm.sh", err)
	}
	return err == nil, nil
}

// slurmAnswers asks sinfo once per test binary, for at most 10 s: with a configuration it
// cannot read, sinfo retries for a minute.
var slurmAnswers = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "sinfo", "-h", "-o", "%T").CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
})

// cjkFontReady is the [cjkfont] condition of the scripts that draw Japanese names: a font that
// draws them where the chart package looks. Without one they skip, unless CI=true.
func cjkFontReady() (bool, error) {
	if os.Getenv("JIKKEN_FONT") != "" {
		return true, nil
	}
	for _, f := range chart.FallbackFontFiles {
		if _, err := os.Stat(f); err == nil {
			return true, nil
		}
	}
	if os.Getenv("CI") == "true" {
		return false, fmt.Errorf("CI=true but no CJK font; apt-get install fonts-noto-cjk")
	}
	return false, nil
}

// svgText checks an SVG figure from outside: "svgtext FILE TEXT..." fails unless every label's
// bounding box (charttest.TextBoxes) lies inside the canvas, no two labels overlap, and each TEXT
// is drawn (the labels' text joined, line breaks and spaces aside, contains it).
func svgText(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: svgtext FILE [TEXT...]")
	}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	w, h, texts, err := charttest.TextBoxes(f)
	ts.Check(err)
	if len(texts) == 0 {
		ts.Fatalf("%s has no text", args[0])
	}
	for _, p := range append(charttest.Outside(w, h, texts), charttest.Overlapping(texts)...) {
		ts.Logf("%s", p)
		ts.Fatalf("%s: a label leaves the canvas or covers another", args[0])
	}
	all := ""
	for _, t := range texts {
		all += strings.ReplaceAll(t.Content, " ", "")
	}
	for _, want := range args[1:] {
		if !strings.Contains(all, strings.ReplaceAll(want, " ", "")) {
			ts.Fatalf("%s does not draw %q (its text: %q)", args[0], want, all)
		}
	}
}

// fakeNvidiaSMI writes into $WORK/bin an nvidia-smi that shows N whole GPUs (the host has no
// GPU): fake-nvidia-smi N [APPS [LOG]]. Put $WORK/bin first on PATH to use it. With APPS, the
// processes that use the GPUs are those the files in that folder name ("GPU-…, pid" lines),
// while they live; with LOG, every call appends its arguments to that file.
func fakeNvidiaSMI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 3 {
		ts.Fatalf("usage: fake-nvidia-smi N [APPS [LOG]]")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("fake-nvidia-smi: %v", err)
	}
	f := hosttest.GPUs(n)
	if len(args) > 1 {
		f.AppsDir = ts.MkAbs(args[1])
	}
	if len(args) > 2 {
		f.Log = ts.MkAbs(args[2])
	}
	dir := ts.MkAbs("bin")
	ts.Check(os.MkdirAll(dir, 0o755))
	ts.Check(os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(f.Script()), 0o755))
}
