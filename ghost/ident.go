package ghost

import (
	"context"
	"fmt"
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

// identity is the name and email a commit is made by.
type identity struct{ name, email string }

// fallbackIdentity signs ghost and snapshot commits on a machine where git knows no user, so
// writing them never fails; who pushed is in the metadata too.
var fallbackIdentity = identity{"jikken ghost", "ghost@jikken.invalid"}

// env sets both the author and the committer of a commit.
func (id identity) env() []string {
	return append(id.committerEnv(), "GIT_AUTHOR_NAME="+id.name, "GIT_AUTHOR_EMAIL="+id.email)
}

func (id identity) committerEnv() []string {
	return []string{"GIT_COMMITTER_NAME=" + id.name, "GIT_COMMITTER_EMAIL=" + id.email}
}

// ParseIdentity reads "Name <email>", the form of git's author lines.
func ParseIdentity(s string) (name, email string, err error) {
	name, rest, ok := strings.Cut(s, "<")
	email, tail, ok2 := strings.Cut(rest, ">")
	name, email = strings.TrimSpace(name), strings.TrimSpace(email)
	if !ok || !ok2 || name == "" || email == "" || strings.TrimSpace(tail) != "" || strings.ContainsAny(name+email, "<>\n") {
		return "", "", fmt.Errorf("identity %q is not of the form 'Name <email>'", s)
	}
	return name, email, nil
}

// identity returns who the commits the ghost package writes are made by: explicit ("Name
// <email>") when given, else the user's git identity in this repository (user.name and
// user.email, or the GIT_AUTHOR_* and GIT_COMMITTER_* variables), else fallbackIdentity.
func (w *worktree) identity(ctx context.Context, explicit string) (identity, error) {
	if explicit != "" {
		name, email, err := ParseIdentity(explicit)
		return identity{name, email}, err
	}
	out, err := w.git.Line(ctx, "var", "GIT_COMMITTER_IDENT")
	if err != nil {
		return fallbackIdentity, nil
	}
	// "Name <email> 1700000000 +0000"
	if end := strings.LastIndexByte(out, '>'); end > 0 {
		if name, email, err := ParseIdentity(out[:end+1]); err == nil {
			return identity{name, email}, nil
		}
	}
	return fallbackIdentity, nil
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
