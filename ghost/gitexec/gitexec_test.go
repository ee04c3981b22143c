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

func TestErrorIsOneReadableLine(t *testing.T) {
	e := &Error{Args: []string{"-c", "x=y", "ls-remote", "/nope"}, Stderr: "fatal: '/nope' does not appear to be a git repository\n" +
		"fatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n"}
	want := "git ls-remote: fatal: '/nope' does not appear to be a git repository; fatal: Could not read from remote repository. " +
		"Please make sure you have the correct access rights and the repository exists."
	if got := e.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	long := &Error{Args: []string{"apply"}, Stderr: "error: a\nerror: b\nerror: c\nerror: d\nerror: e\nerror: f\n"}
	if got := long.Error(); got != "git apply: error: a; error: b; error: c; error: d; error: e ..." {
		t.Errorf("Error() = %q", got)
	}
}
