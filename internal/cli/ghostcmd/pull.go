package ghostcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/ghost"
	"github.com/jikken-dev/jikken/internal/cmdutil"
)

func newPullCmd(g *globals) *cobra.Command {
	var force bool
	run := func(cmd *cobra.Command, po ghost.PullOptions) error {
		f, err := g.format()
		if err != nil {
			return err
		}
		po.Dir, po.GhostRepo, po.Prefix, po.RemoteOptions, po.Force = g.srcDir, g.repo, g.prefix, g.remote(), force
		res, err := ghost.Pull(cmd.Context(), po)
		if err != nil {
			return err
		}
		if f == "json" {
			return cmdutil.WriteJSON(g.io.Out, res)
		}
		switch {
		case res.Unchanged:
			fmt.Fprintln(g.io.ErrOut, "already in the ghost's state; nothing to do")
		case res.Rewritten:
			g.warn("the commits came from a git-ghost patch and got new hashes; HEAD is now %s", res.Head)
		default:
			g.info("HEAD is %s", res.Head)
		}
		return nil
	}
	cmd := &cobra.Command{
		Use:   "pull [diff-from] <diff-hash>",
		Short: "Apply a diff ghost at the repository root (with the commits it needs, if pushed)",
		Long: `Pull applies ghosts to the repository at its top level, from any subdirectory.

It refuses a working tree with changes (pass --force to apply anyway; paths the ghost touches
must still be clean), and a HEAD that is not the ghost's base, naming the commit to check out.
When HEAD is not the base and the sender used 'push all', the local commits are pulled first.
Hashes may be abbreviated to 7 or more characters; the base may be HEAD, a branch or a tag.

A failed pull changes nothing; pulling the same ghost twice does nothing the second time. The
working tree switches only once everything is ready: a pull killed at any moment leaves it as
it was, or (killed within the switch itself) is finished by the next git ghost command here.`,
		Example: `  git ghost pull 8f6ece3                   # the diff ghost, on HEAD
  git ghost pull HEAD 8f6ece3b6c1a65179880e97a43193d613c1f10e5
  git ghost pull all 89be8f8 e888551       # git-ghost's README: commits, then the diff
  git ghost pull all e888551               # the commits are found
  git ghost pull --force 8f6ece3           # keep unrelated local changes`,
		Args: rangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, hash := split2(args)
			return run(cmd, ghost.PullOptions{Diff: &ghost.Selector{From: from, Hash: hash}, FindCommits: true})
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "diff [diff-from] <diff-hash>",
		Short: "Apply a diff ghost",
		Args:  rangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, hash := split2(args)
			return run(cmd, ghost.PullOptions{Diff: &ghost.Selector{From: from, Hash: hash}})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "commits [from] <to>",
		Short: "Apply a commits ghost: HEAD moves to <to>, with the sender's commit hashes",
		Args:  rangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, to := split2(args)
			return run(cmd, ghost.PullOptions{Commits: &ghost.Selector{From: from, To: to}})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "all [[from] to] <diff-hash>",
		Short: "Apply the local commits and the working state a 'push all' sent",
		Args:  rangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			po := ghost.PullOptions{FindCommits: true}
			switch len(args) {
			case 1:
				po.Diff = &ghost.Selector{Hash: args[0]}
			case 2:
				po.Commits = &ghost.Selector{To: args[0]}
				po.Diff = &ghost.Selector{From: args[0], Hash: args[1]}
			case 3:
				po.Commits = &ghost.Selector{From: args[0], To: args[1]}
				po.Diff = &ghost.Selector{From: args[1], Hash: args[2]}
			}
			return run(cmd, po)
		},
	})
	cmd.PersistentFlags().BoolVarP(&force, "force", "f", false, "apply even if the working tree has changes")
	return cmd
}

// split2 reads git-ghost's "[first] <second>" arguments.
func split2(args []string) (first, second string) {
	if len(args) == 2 {
		return args[0], args[1]
	}
	return "", args[0]
}
