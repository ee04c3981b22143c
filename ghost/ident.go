package ghost

import (
	"context"
	"os"
	"os/user"
	"strings"
	"time"
)

// now is the clock of ghost metadata; tests replace it.
var now = time.Now

func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if s := os.Getenv("USER"); s != "" {
		return s
	}
	return "unknown"
}

func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

// identityEnv gives ghost and snapshot commits a fixed author, so writing them never fails on
// a machine without user.name/user.email; who pushed is recorded in the metadata instead.
func identityEnv() []string {
	return []string{
		"GIT_AUTHOR_NAME=jikken ghost", "GIT_AUTHOR_EMAIL=ghost@jikken.invalid",
		"GIT_COMMITTER_NAME=jikken ghost", "GIT_COMMITTER_EMAIL=ghost@jikken.invalid",
	}
}

// baseMeta fills the fields of Meta that describe where a ghost comes from.
func (w *worktree) baseMeta(ctx context.Context, kind Kind) Meta {
	m := Meta{Version: metaVersion, Kind: kind, User: userName(), Host: hostName(), Time: now().UTC().Truncate(time.Second)}
	m.Branch, _ = w.git.Line(ctx, "symbolic-ref", "--short", "-q", "HEAD")
	m.Repo = w.remoteURL(ctx)
	return m
}

// remoteURL returns the URL of the current branch's remote, else of origin, else "".
func (w *worktree) remoteURL(ctx context.Context) string {
	name, _ := w.git.Line(ctx, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
	remote := "origin"
	if r, _, ok := strings.Cut(name, "/"); ok && r != "" {
		remote = r
	}
	url, err := w.git.Line(ctx, "remote", "get-url", remote)
	if err != nil {
		return ""
	}
	return url
}
