package ghostcmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/ghost"
	"github.com/jikken-dev/jikken/internal/cmdutil"
)

type pushOptions struct {
	g              *globals
	include        []string
	followSymlinks bool
	noUntracked    bool
	maxSize        string
	base           string
	identity       string
}

func newPushCmd(g *globals) *cobra.Command {
	o := &pushOptions{g: g}
	cmd := &cobra.Command{
		Use:   "push [diff-from (default HEAD)]",
		Short: "Push the working state (alias of 'push diff'); 'push all' also sends local commits",
		Long: `Push stores the working state as a diff ghost and prints "<base> <hash>"; with nothing
to push it stores git-ghost's empty ghost, "<base> da39a3ee5e6b4b0d3255bfef95601890afd80709".

Untracked files that are not ignored are included (--no-untracked leaves them out); a file
larger than --max-untracked-size stops the push, and untracked files that look like secrets
(named .env, *.pem, id_rsa, ..., or holding a private key or a cloud access key) are reported
on stderr. Staging is kept: a receiver gets the same index. Ghost commits are made by your git
identity (user.name, user.email), or by --identity.

'push all' also sends the local commits the remotes do not have, as commit objects, so a
receiver cloned from the origin gets the very same commit hashes. Revisions (diff-from, from,
to) may be hashes, HEAD, branches or tags.`,
		Example: `  git ghost push                              # <base> <hash>
  hash=$(git ghost push | cut -d' ' -f2)
  git ghost push all                          # <from> <to>, then <to> <hash>
  git ghost push all origin/main              # commits since origin/main
  git ghost push diff Feature-X -I .env.test  # diff against a branch, with an ignored file`,
		Args: rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, ghost.PushOptions{Diff: true, DiffFrom: arg(args, 0)})
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "diff [diff-from (default HEAD)]",
		Short: "Push the working state relative to a commit",
		Args:  rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, ghost.PushOptions{Diff: true, DiffFrom: arg(args, 0)})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "commits [from (default: the remote base)] [to (default HEAD)]",
		Short: "Push the commits from..to",
		Args:  rangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, ghost.PushOptions{Commits: true, From: orBase(arg(args, 0), o.base), To: arg(args, 1)})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "all [commits-from (default: the remote base)] [diff-from (default HEAD)]",
		Short: "Push the local commits and the working state",
		Args:  rangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			// As in git-ghost, the second argument is where the diff starts; the commits
			// always end at HEAD.
			return o.run(cmd, ghost.PushOptions{Commits: true, Diff: true, From: orBase(arg(args, 0), o.base), DiffFrom: arg(args, 1)})
		},
	})
	pf := cmd.PersistentFlags()
	pf.StringSliceVarP(&o.include, "include", "I", nil, "also include this file even if ignored (repeatable)")
	pf.BoolVar(&o.followSymlinks, "follow-symlinks", false, "with --include: also include the target of an included symlink")
	pf.BoolVar(&o.noUntracked, "no-untracked", false, "leave untracked files out")
	pf.StringVar(&o.maxSize, "max-untracked-size", "10M", "refuse untracked files larger than this (0 for no limit)")
	pf.StringVar(&o.base, "base", "", "commit the receiver has, where the local commits start (default: newest commit on a remote)")
	pf.StringVar(&o.identity, "identity", "", "'Name <email>' that makes the ghost commits (default: your git identity)")
	return cmd
}

func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

func orBase(a, base string) string {
	if a != "" {
		return a
	}
	return base
}

func (o *pushOptions) run(cmd *cobra.Command, po ghost.PushOptions) error {
	f, err := o.g.format()
	if err != nil {
		return err
	}
	size, err := parseSize(o.maxSize)
	if err != nil {
		return err
	}
	if size == 0 {
		size = -1
	}
	po.Dir, po.GhostRepo, po.Prefix, po.RemoteOptions, po.Identity = o.g.srcDir, o.g.repo, o.g.prefix, o.g.remote(), o.identity
	po.Include, po.FollowSymlinks, po.NoUntracked, po.MaxUntrackedSize = o.include, o.followSymlinks, o.noUntracked, size
	res, err := ghost.Push(cmd.Context(), po)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		o.g.warn("%s", w)
	}
	if f == "json" {
		return cmdutil.WriteJSON(o.g.io.Out, res)
	}
	if res.Commits != nil {
		fmt.Fprintln(o.g.io.Out, res.Commits.ID())
	}
	if res.Diff != nil {
		fmt.Fprintln(o.g.io.Out, res.Diff.ID())
		o.g.info("%d files changed", len(res.Files))
	}
	return nil
}

// parseSize reads sizes such as 10M, 512K, 1G or a number of bytes.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(s, "B"), "i")))
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, cmdutil.UsageError("size %q is not a size; write e.g. 10M, 512K or 0 for no limit", s)
	}
	return n * mult, nil
}
