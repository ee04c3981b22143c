package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/jikken-dev/jikken/store"
)

// codeSnapshot records the git commit of the repository holding dir, and whether its working
// tree differs from it. Outside a repository there is nothing to record.
func codeSnapshot(ctx context.Context, dir, runID string) (*store.CodeSnapshot, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = gitEnv()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
		}
		return strings.TrimSpace(out.String()), nil
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, nil // not a git repository: nothing to pin
	}
	head, err := git("rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return &store.CodeSnapshot{Repo: top, Dirty: true}, nil // no commit yet
	}
	snap := &store.CodeSnapshot{Repo: top, Commit: head}
	snap.Branch, _ = git("symbolic-ref", "--short", "-q", "HEAD")
	snap.Remote, _ = git("remote", "get-url", "origin")
	status, err := git("status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return nil, fmt.Errorf("record code snapshot: %w", err)
	}
	for _, line := range strings.Split(status, "\n") {
		if len(line) > 3 {
			snap.Files = append(snap.Files, line[3:])
		}
	}
	snap.Dirty = len(snap.Files) > 0
	return snap, nil
}

// gitEnv is the environment for git without variables that would point it at another repository.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR":
			continue
		}
		env = append(env, kv)
	}
	return env
}
