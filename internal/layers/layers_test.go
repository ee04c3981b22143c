package layers

import (
	"errors"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/jikken-dev/jikken/"

// coreOwn are the only packages of this module the runner core may depend on: the trial spec
// and the journal record, leaves that do no I/O.
var coreOwn = []string{"runner/core", "trial", "record"}

// ioPackages are standard packages (with those below them) that reach outside the process beyond
// what fmt already links (os and syscall come with fmt and cannot be refused): processes,
// signals, users, networks (net/url too: a core has no addresses to parse), plugins, databases.
var ioPackages = []string{"os/exec", "os/signal", "os/user", "net", "plugin", "database/sql", "crypto/tls"}

// ioModules are modules that parse experiments, talk to clusters, engines or object stores, or
// drive a terminal: none belongs below the runner.
var ioModules = []string{
	"github.com/google/go-jsonnet",
	"k8s.io/client-go",
	"k8s.io/api",
	"github.com/minio/minio-go",
	"github.com/moby/moby",
	"github.com/chromedp",
	"github.com/spf13/cobra",
}

// storeRefuses are the packages the store must not reach: it keeps and reads runs without
// knowing how experiments are parsed or how code is snapshotted (git).
var storeRefuses = []string{module + "experiment", module + "ghost", "github.com/google/go-jsonnet"}

// under reports whether pkg is path or a package below it.
func under(pkg, path string) bool {
	return pkg == path || strings.HasPrefix(pkg, path+"/")
}

// deps lists the packages pkg depends on, itself included, as the go command sees them (test
// files left out: a test may use anything).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	// go test puts its GOROOT/bin first in PATH, so this is the go command running the test.
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list dependencies with: %v", err)
	}
	out, err := exec.Command(gocmd, "list", "-deps", module+pkg).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestCoreDoesNoIO: the runner core is a pure state machine (events in, actions out), so it
// links nothing that starts processes, opens connections or parses experiments, and of this
// module only the leaf packages it is allowed.
func TestCoreDoesNoIO(t *testing.T) {
	for _, p := range deps(t, "runner/core") {
		switch {
		case strings.HasPrefix(p, module):
			if !slices.Contains(coreOwn, strings.TrimPrefix(p, module)) {
				t.Errorf("runner/core depends on %s; it may depend only on %s of this module", p, strings.Join(coreOwn, ", "))
			}
		case slices.ContainsFunc(ioPackages, func(f string) bool { return under(p, f) }),
			slices.ContainsFunc(ioModules, func(f string) bool { return under(p, f) }):
			t.Errorf("runner/core depends on %s, which reaches outside the process", p)
		}
	}
}

// TestStoreKnowsNoExperimentOrGit: the store reads and writes runs; parsing experiments and
// taking code snapshots belong above it.
func TestStoreKnowsNoExperimentOrGit(t *testing.T) {
	for _, p := range deps(t, "store") {
		for _, f := range storeRefuses {
			if under(p, f) {
				t.Errorf("store depends on %s", p)
			}
		}
	}
}

// TestCommandsNameNoBackend: the commands (package cli) know the backends through their
// registered descriptors (runner.Register), so one import list, in backends.go, is the only
// place that names them; what one backend alone can do is a hook of its descriptor.
func TestCommandsNameNoBackend(t *testing.T) {
	files, err := filepath.Glob("../cli/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files of package cli: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "backends.go" {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); under(p, module+"backend") {
				t.Errorf("%s imports %s; reach a backend through its runner.Descriptor", filepath.Base(f), p)
			}
		}
	}
}
