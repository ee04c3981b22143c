package gitexec

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestInheritedRepoVariablesAreIgnored(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_DIR", "/nonexistent/should-not-be-used")
	t.Setenv("GIT_INDEX_FILE", "/nonexistent/index")
	c := Client{Dir: dir}
	ctx := context.Background()
	if _, err := c.Run(ctx, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	top, err := c.Line(ctx, "rev-parse", "--git-dir")
	if err != nil {
		t.Fatal(err)
	}
	if top != ".git" {
		t.Fatalf("git-dir = %q, want .git", top)
	}
}

func TestErrorKeepsStderrAndExitCode(t *testing.T) {
	c := Client{Dir: t.TempDir()}
	_, err := c.Run(context.Background(), "rev-parse", "--verify", "HEAD")
	if err == nil {
		t.Fatal("rev-parse outside a repository succeeded")
	}
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode != 128 {
		t.Errorf("error %#v, want an *Error with exit code 128", err)
	}
	if !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("error %q does not carry git's stderr", err)
	}
}
