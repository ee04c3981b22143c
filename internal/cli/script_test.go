package cli_test

import (
	"flag"
	"os"
	"path/filepath"
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
			return nil
		},
	})
}
