package ghost

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// commitMailbox creates the commits of a git-ghost mailbox (commits.patch) on top of start, as
// git am would (each message's author, date and message; [PATCH] stripped from the subject;
// committed by the user, dated as the author), but in a scratch index: the working tree, the
// index and HEAD are left alone, and the switch moves them afterwards. It returns the last
// commit.
func (w *worktree) commitMailbox(ctx context.Context, s *scratch, start string, mailbox []byte) (string, error) {
	dir := s.path("mail")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out, err := w.git.Input(ctx, bytes.NewReader(mailbox), "mailsplit", "--keep-cr", "-o"+dir)
	if err != nil {
		return "", fmt.Errorf("split the commits ghost into messages: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || n == 0 {
		return "", fmt.Errorf("the commits ghost holds no message (git mailsplit said %q)", strings.TrimSpace(string(out)))
	}
	index := s.path("mail.index")
	g := w.git.With("GIT_INDEX_FILE=" + index)
	if _, err := g.Run(ctx, "read-tree", start); err != nil {
		return "", fmt.Errorf("read commit %s: %w", short(start), err)
	}
	committer, err := w.identity(ctx, "")
	if err != nil {
		return "", err
	}
	parent := start
	for i := 1; i <= n; i++ {
		mail := filepath.Join(dir, fmt.Sprintf("%04d", i))
		msgFile, patchFile := mail+".msg", mail+".patch"
		in, err := os.ReadFile(mail)
		if err != nil {
			return "", err
		}
		info, err := w.git.Input(ctx, bytes.NewReader(in), "mailinfo", msgFile, patchFile)
		if err != nil {
			return "", fmt.Errorf("read message %d of the commits ghost: %w", i, err)
		}
		h := parseMailinfo(string(info))
		patch, err := os.ReadFile(patchFile)
		if err != nil {
			return "", err
		}
		if _, err := g.Input(ctx, bytes.NewReader(patch), "apply", "--cached", "--binary", "-"); err != nil {
			return "", fmt.Errorf("commit %d of the commits ghost (%s) does not apply (nothing was changed): %w", i, h["Subject"], err)
		}
		tree, err := g.Line(ctx, "write-tree")
		if err != nil {
			return "", err
		}
		body, err := os.ReadFile(msgFile)
		if err != nil {
			return "", err
		}
		msg := h["Subject"] + "\n"
		if b := strings.TrimSpace(string(body)); b != "" {
			msg += "\n" + b + "\n"
		}
		env := append(committer.committerEnv(),
			"GIT_AUTHOR_NAME="+h["Author"], "GIT_AUTHOR_EMAIL="+h["Email"], "GIT_AUTHOR_DATE="+h["Date"], "GIT_COMMITTER_DATE="+h["Date"])
		c, err := w.git.With(env...).Input(ctx, strings.NewReader(msg), "commit-tree", tree, "-p", parent)
		if err != nil {
			return "", fmt.Errorf("create commit %d of the commits ghost: %w", i, err)
		}
		parent = strings.TrimSpace(string(c))
	}
	return parent, nil
}

// parseMailinfo reads the "Key: value" lines git mailinfo prints.
func parseMailinfo(s string) map[string]string {
	h := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			h[k] = v
		}
	}
	return h
}
