package ghostcmd

import (
	"bytes"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/ghost"
	"github.com/jikken-dev/jikken/internal/cmdutil"
)

func newShowCmd(g *globals) *cobra.Command {
	run := func(cmd *cobra.Command, so ghost.ShowOptions) error {
		f, err := g.format()
		if err != nil {
			return err
		}
		so.GhostRepo, so.Prefix, so.RemoteOptions = g.repo, g.prefix, g.remote()
		if f == "text" {
			return ghost.Show(cmd.Context(), so, g.srcDir, g.io.Out)
		}
		var buf bytes.Buffer
		if err := ghost.Show(cmd.Context(), so, g.srcDir, &buf); err != nil {
			return err
		}
		return cmdutil.WriteJSON(g.io.Out, map[string]string{"patch": buf.String()})
	}
	// As in git-ghost, `show` without a kind shows a diff ghost: both run showDiff.
	showDiff := func(cmd *cobra.Command, args []string) error {
		from, hash := split2(args)
		return run(cmd, ghost.ShowOptions{Diff: &ghost.Selector{From: from, Hash: hash}})
	}
	cmd := &cobra.Command{
		Use:   "show [diff-from] <diff-hash>",
		Short: "Print the patch of a diff ghost",
		Args:  rangeArgs(1, 2),
		RunE:  showDiff,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "diff [diff-from] <diff-hash>",
		Short: "Print the patch of a diff ghost",
		Args:  rangeArgs(1, 2),
		RunE:  showDiff,
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "commits [from] <to>",
		Short: "Print the commits of a commits ghost as a mailbox",
		Args:  rangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, to := split2(args)
			return run(cmd, ghost.ShowOptions{Commits: &ghost.Selector{From: from, To: to}})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "all [from] <to> <diff-hash>",
		Short: "Print the commits and the diff",
		Args:  rangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			so := ghost.ShowOptions{}
			if len(args) == 2 {
				so.Commits = &ghost.Selector{To: args[0]}
				so.Diff = &ghost.Selector{From: args[0], Hash: args[1]}
			} else {
				so.Commits = &ghost.Selector{From: args[0], To: args[1]}
				so.Diff = &ghost.Selector{From: args[1], Hash: args[2]}
			}
			return run(cmd, so)
		},
	})
	return cmd
}
