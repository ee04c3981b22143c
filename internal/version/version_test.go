package version

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	rev := "3c67697abcde0123456789abcdef0123456789ab"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-11-24T10:15:00Z"}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		name      string
		bi        *debug.BuildInfo
		ok        bool
		str, tag  string
		published bool
	}{
		{"no build info", nil, false, "(devel)", "devel", false},
		{"go test", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "(devel)", "devel", false},
		{"release", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: vcs("false")}, true,
			"v1.2.0 (3c67697abcde)", "v1.2.0", true},
		{"clean checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124101500-3c67697abcde"}, Settings: vcs("false")}, true,
			"v0.0.0-20261124101500-3c67697abcde (3c67697abcde)", "v0.0.0-20261124101500-3c67697abcde", true},
		{"modified checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124101500-3c67697abcde+dirty"}, Settings: vcs("true")}, true,
			"v0.0.0-20261124101500-3c67697abcde (3c67697abcde-dirty)", "v0.0.0-20261124101500-3c67697abcde-dirty", false},
		{"modified, no version", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")}, true,
			"(devel) (3c67697abcde-dirty)", "devel-dirty", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := FromBuildInfo(c.bi, c.ok)
			if got := in.String(); got != c.str {
				t.Errorf("String() = %q, want %q", got, c.str)
			}
			if got := in.ImageTag(); got != c.tag {
				t.Errorf("ImageTag() = %q, want %q", got, c.tag)
			}
			if got := in.Published(); got != c.published {
				t.Errorf("Published() = %v, want %v", got, c.published)
			}
		})
	}
}

// TestStampedByGo builds a small program that reports Get() in a real git repository, clean and
// then modified, and checks the commit and the dirty mark come through: what the go command
// stamps is what jikken reports.
func TestStampedByGo(t *testing.T) {
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true but %s is not on PATH", tool)
			}
			t.Skipf("%s is not on PATH", tool)
		}
	}
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=true", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module github.com/jikken-dev/jikken\n\ngo 1.26\n")
	for _, f := range []string{"doc.go", "version.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join("internal", "version", f), string(b))
	}
	write("cmd/probe/main.go", `package main

import (
	"encoding/json"
	"os"

	"github.com/jikken-dev/jikken/internal/version"
)

func main() { _ = json.NewEncoder(os.Stdout).Encode(version.Get()) }
`)
	run("git", "init", "-q")
	run("git", "add", "-A")
	run("git", "commit", "-q", "-m", "probe")
	head := run("git", "rev-parse", "HEAD")
	probe := func() Info {
		t.Helper()
		exe := filepath.Join(t.TempDir(), "probe")
		run("go", "build", "-o", exe, "./cmd/probe")
		var in Info
		if err := json.Unmarshal([]byte(run(exe)), &in); err != nil {
			t.Fatal(err)
		}
		return in
	}

	clean := probe()
	t.Logf("clean: %s", clean)
	if clean.Revision != head || clean.Modified {
		t.Fatalf("clean checkout: got %+v, want revision %s, not modified", clean, head)
	}
	if want := head[:12] + ")"; !strings.HasSuffix(clean.String(), want) || strings.Contains(clean.String(), "dirty") {
		t.Errorf("clean checkout: String() = %q, want it to end in %q", clean.String(), want)
	}

	write("cmd/probe/extra.go", "package main\n")
	dirty := probe()
	t.Logf("modified: %s", dirty)
	if dirty.Revision != head || !dirty.Modified {
		t.Fatalf("modified checkout: got %+v, want revision %s, modified", dirty, head)
	}
	if want := head[:12] + "-dirty)"; !strings.HasSuffix(dirty.String(), want) {
		t.Errorf("modified checkout: String() = %q, want it to end in %q", dirty.String(), want)
	}
}
