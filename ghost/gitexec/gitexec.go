package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// repoEnv lists the variables that point git at a particular repository or index. git exports
// some of them to aliases and hooks (git-ghost runs as `git ghost`), and an inherited GIT_DIR or
// GIT_INDEX_FILE would silently redirect every command, so the client removes them all and sets
// only what a call asks for.
var repoEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_QUARANTINE_PATH",
}

// Error is a git command that could not start or exited non-zero.
type Error struct {
	Args     []string // arguments after "git"
	Dir      string
	ExitCode int // -1 when git did not start
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", subcommand(e.Args), oneLine(msg, 5))
}

func (e *Error) Unwrap() error { return e.Err }

// subcommand returns the git command args run, after options such as -c name=value.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case !strings.HasPrefix(a, "-"):
			return a
		}
	}
	return ""
}

// oneLine folds at most n non-blank lines of git's stderr into one line: a line that starts a
// new message ("fatal: ...", "error: ...") follows a "; ", a line that continues a wrapped
// sentence follows a space.
func oneLine(s string, n int) string {
	var b strings.Builder
	kept := 0
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if kept == n {
			b.WriteString(" ...")
			break
		}
		if kept > 0 {
			if startsMessage(line) {
				b.WriteString("; ")
			} else {
				b.WriteString(" ")
			}
		}
		b.WriteString(line)
		kept++
	}
	return b.String()
}

// startsMessage reports whether a line of git's stderr begins with a label such as "fatal:".
func startsMessage(line string) bool {
	label, _, ok := strings.Cut(line, ": ")
	return ok && label != "" && !strings.ContainsAny(label, " '\"")
}

// Client runs git in one repository. The zero value runs in the current directory.
type Client struct {
	// Dir is the working directory of every command (passed as -C is not used, so relative paths
	// in arguments resolve against it).
	Dir string
	// Env holds extra KEY=VALUE entries, appended after the cleaned process environment.
	Env []string
}

// With returns a copy of c with extra environment entries.
func (c Client) With(env ...string) Client {
	c.Env = append(append([]string(nil), c.Env...), env...)
	return c
}

// Run runs git with args and returns its standard output.
func (c Client) Run(ctx context.Context, args ...string) ([]byte, error) {
	var out bytes.Buffer
	err := c.Stream(ctx, nil, &out, args...)
	return out.Bytes(), err
}

// Line runs git and returns its output with surrounding white space removed.
func (c Client) Line(ctx context.Context, args ...string) (string, error) {
	out, err := c.Run(ctx, args...)
	return strings.TrimSpace(string(out)), err
}

// Input runs git with stdin and returns its standard output.
func (c Client) Input(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	var out bytes.Buffer
	err := c.Stream(ctx, stdin, &out, args...)
	return out.Bytes(), err
}

// Stream runs git with stdin and stdout connected to the given reader and writer (either may be
// nil).
func (c Client) Stream(ctx context.Context, stdin io.Reader, stdout io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = c.Dir
	cmd.Env = c.environ()
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return &Error{Args: args, Dir: c.Dir, ExitCode: code, Stderr: stderr.String(), Err: err}
	}
	return nil
}

func (c Client) environ() []string {
	env := make([]string, 0, len(os.Environ())+len(c.Env)+2)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if isRepoVar(name) {
			continue
		}
		env = append(env, kv)
	}
	// Output is parsed, so it must not depend on the user's language or a pager.
	env = append(env, "LC_ALL=C", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	return append(env, c.Env...)
}

func isRepoVar(name string) bool {
	for _, v := range repoEnv {
		if name == v {
			return true
		}
	}
	return false
}
