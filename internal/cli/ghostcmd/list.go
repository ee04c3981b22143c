package ghostcmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/ghost"
	"github.com/jikken-dev/jikken/internal/cmdutil"
)

type listOptions struct {
	g         *globals
	from, to  string
	noHeaders bool
	long      bool
	user      string
	host      string
	branch    string
	since     string
	sort      string
}

func newListCmd(g *globals) *cobra.Command {
	o := &listOptions{g: g}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List diff ghosts ('list commits', 'list all' for the others)",
		Long: `List prints git-ghost's tables: "<base> <diff-hash>" per diff ghost under "Local Mod
Branches:", "<from> <to>" per commits ghost under "Local Base Branches:" (--no-headers: the
lines only; -o only-from or only-to: one column). --from and --to take hash prefixes or
revisions (HEAD, a branch). It reads only the ghost repository's refs, unless --long, a filter
on metadata (--user, --host, --branch, --since) or --sort time needs the ghost commits; those
are fetched once into the local cache.`,
		Example: `  git ghost list                       # diff ghosts
  git ghost list all --from HEAD       # every ghost based on the commit checked out
  git ghost list -l --user alice       # with time, user@host and branch
  git ghost list --no-headers -o only-to | head -1`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ghost.KindDiff) },
	}
	for _, k := range []struct {
		use  string
		kind ghost.Kind
	}{{"diff", ghost.KindDiff}, {"commits", ghost.KindCommits}, {"all", ""}} {
		cmd.AddCommand(&cobra.Command{
			Use:   k.use,
			Short: "List " + k.use + " ghosts",
			Args:  rangeArgs(0, 0),
			RunE:  func(cmd *cobra.Command, args []string) error { return o.run(cmd, k.kind) },
		})
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.from, "from", "", "only ghosts whose base starts with this hash")
	pf.StringVar(&o.to, "to", "", "only ghosts whose diff hash or last commit starts with this hash")
	pf.BoolVar(&o.noHeaders, "no-headers", false, "do not print column headers")
	pf.BoolVarP(&o.long, "long", "l", false, "also print time, user@host and branch of each ghost")
	pf.StringVar(&o.user, "user", "", "only ghosts pushed by this user")
	pf.StringVar(&o.host, "host", "", "only ghosts pushed from this host")
	pf.StringVar(&o.branch, "branch", "", "only ghosts pushed from this branch")
	pf.StringVar(&o.since, "since", "", "only ghosts younger than this age (e.g. 7d, 12h)")
	pf.StringVar(&o.sort, "sort", "name", "order: name or time (newest first)")
	return cmd
}

func (o *listOptions) options(kind ghost.Kind) (ghost.ListOptions, error) {
	lo := ghost.ListOptions{GhostRepo: o.g.repo, Prefix: o.g.prefix, RemoteOptions: o.g.remote(), Kind: kind,
		From: o.from, To: o.to, Dir: o.g.srcDir, Meta: o.long || o.g.output == "json", User: o.user, Host: o.host, Branch: o.branch}
	switch o.sort {
	case "name":
	case "time":
		lo.SortByTime = true
	default:
		return lo, cmdutil.UsageError("unknown --sort %q; use name or time", o.sort)
	}
	if o.since != "" {
		age, err := cmdutil.ParseAge(o.since)
		if err != nil {
			return lo, cmdutil.UsageError("--since: %v", err)
		}
		lo.Since = time.Now().Add(-age)
	}
	return lo, nil
}

func (o *listOptions) run(cmd *cobra.Command, kind ghost.Kind) error {
	if _, err := cmdutil.CheckFormat(o.g.output, "text", "json", "only-from", "only-to"); err != nil {
		return err
	}
	lo, err := o.options(kind)
	if err != nil {
		return err
	}
	gs, err := ghost.List(cmd.Context(), lo)
	if err != nil {
		return err
	}
	if o.g.output == "json" {
		if gs == nil {
			gs = []ghost.Ghost{}
		}
		return cmdutil.WriteJSON(o.g.io.Out, gs)
	}
	t := table{headers: !o.noHeaders, output: o.g.output, long: o.long}
	t.print(o.g.io.Out, "", kind, gs)
	return nil
}

// table prints ghosts in git-ghost's layout: per kind, commits first, a title ("Local Base
// Branches:" or "Local Mod Branches:"), a blank line, the column names, one line per ghost and
// a blank line; without headers only the ghost lines. long adds jikken's columns.
type table struct {
	headers bool
	output  string // text, only-from or only-to
	long    bool
}

func (t table) print(w io.Writer, titlePrefix string, kind ghost.Kind, gs []ghost.Ghost) {
	for _, k := range []ghost.Kind{ghost.KindCommits, ghost.KindDiff} {
		if kind != "" && kind != k {
			continue
		}
		title, left, right := "Local Base Branches:", "Remote Base", "Local Base"
		if k == ghost.KindDiff {
			title, left, right = "Local Mod Branches:", "Local Base", "Local Mod"
		}
		if t.headers {
			fmt.Fprintf(w, "%s%s\n\n", titlePrefix, title)
			t.line(w, fmt.Sprintf("%-40s", left), fmt.Sprintf("%-40s", right), fmt.Sprintf("%-20s %-24s %s", "Time", "User@Host", "Branch"))
		}
		for _, g := range gs {
			if g.Kind == k {
				from, to, _ := strings.Cut(g.ID(), " ")
				t.line(w, from, to, describe(g))
			}
		}
		if t.headers {
			fmt.Fprintln(w)
		}
	}
}

func (t table) line(w io.Writer, from, to, more string) {
	switch t.output {
	case "only-from":
		fmt.Fprintln(w, from)
	case "only-to":
		fmt.Fprintln(w, to)
	default:
		if t.long {
			to += " " + more
		}
		fmt.Fprintln(w, from+" "+to)
	}
}

func describe(g ghost.Ghost) string {
	t := "-"
	if !g.Time.IsZero() {
		t = g.Time.UTC().Format("2006-01-02T15:04:05Z")
	}
	who, branch := "-", "-"
	if g.Meta != nil {
		who = g.Meta.User + "@" + g.Meta.Host
		if g.Meta.Branch != "" {
			branch = g.Meta.Branch
		}
	}
	return fmt.Sprintf("%-20s %-24s %s", t, who, branch)
}

type deleteOptions struct {
	listOptions
	all    bool
	dryRun bool
}

func newDeleteCmd(g *globals) *cobra.Command {
	o := &deleteOptions{listOptions: listOptions{g: g, sort: "name"}}
	cmd := &cobra.Command{
		Use:   "delete [diff|commits|all] [hash...]",
		Short: "Delete ghosts by hash prefix, by --from/--to, or --all",
		Long: `Delete removes ghost branches and prints them in git-ghost's table. As in git-ghost, the
kind defaults to diff ghosts, a selection by --from and --to (hash prefixes or revisions) or
--all is needed, and --dry-run prints what would go; jikken also takes hash prefixes, which
name ghosts of either kind.`,
		Example: `  git ghost delete --from HEAD --to 8f6ece3     # one diff ghost
  git ghost delete all --all --dry-run          # what emptying the ghost repository would delete
  git ghost delete 8f6ece3 89be8f8              # by hash prefix`,
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, named := ghost.KindDiff, false
			if len(args) > 0 {
				switch args[0] {
				case "diff":
					args, named = args[1:], true
				case "commits":
					kind, args, named = ghost.KindCommits, args[1:], true
				case "all":
					kind, args, named = "", args[1:], true
				}
			}
			if len(args) > 0 && !named {
				kind = "" // hash prefixes name ghosts of either kind
			}
			return o.run(cmd, kind, args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.all, "all", false, "delete every ghost of the kind")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be deleted")
	f.StringVar(&o.from, "from", "", "only ghosts whose base starts with this hash (or is this revision)")
	f.StringVar(&o.to, "to", "", "only ghosts whose diff hash or last commit starts with this hash (or is this revision)")
	return cmd
}

func (o *deleteOptions) run(cmd *cobra.Command, kind ghost.Kind, hashes []string) error {
	f, err := o.g.format()
	if err != nil {
		return err
	}
	lo, err := o.options(kind)
	if err != nil {
		return err
	}
	lo.Meta = false
	gs, err := ghost.Delete(cmd.Context(), ghost.DeleteOptions{ListOptions: lo, Hashes: hashes, All: o.all, DryRun: o.dryRun})
	if err != nil {
		return err
	}
	if f == "json" {
		return o.g.printDeleted(f, gs, o.dryRun)
	}
	table{headers: true, output: "text"}.print(o.g.io.Out, "Deleted ", kind, gs)
	if o.dryRun {
		fmt.Fprintf(o.g.io.ErrOut, "dry run: %d ghosts would be deleted\n", len(gs))
	}
	return nil
}

// printDeleted reports what gc or delete removed: JSON, or one "<from> <to>" line per ghost.
func (g *globals) printDeleted(f cmdutil.Format, gs []ghost.Ghost, dryRun bool) error {
	if f == "json" {
		if gs == nil {
			gs = []ghost.Ghost{}
		}
		return cmdutil.WriteJSON(g.io.Out, map[string]any{"deleted": !dryRun, "ghosts": gs})
	}
	for _, gh := range gs {
		fmt.Fprintln(g.io.Out, gh.ID())
	}
	if dryRun {
		fmt.Fprintf(g.io.ErrOut, "dry run: %d ghosts would be deleted\n", len(gs))
	}
	return nil
}

func newGCCmd(g *globals) *cobra.Command {
	var olderThan string
	var keep int
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "gc --older-than 30d [--keep N] [--dry-run]",
		Short: "Delete ghosts older than an age, keeping the newest N",
		Args:  rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := g.format()
			if err != nil {
				return err
			}
			var age time.Duration
			if olderThan != "" {
				if age, err = cmdutil.ParseAge(olderThan); err != nil {
					return cmdutil.UsageError("--older-than: %v", err)
				}
			}
			if keep < 0 {
				return cmdutil.UsageError("--keep must not be negative")
			}
			if age == 0 && keep == 0 {
				return cmdutil.UsageError("pass --older-than and/or --keep to say which ghosts to delete")
			}
			gs, err := ghost.GC(cmd.Context(), ghost.GCOptions{GhostRepo: g.repo, Prefix: g.prefix, RemoteOptions: g.remote(), OlderThan: age, Keep: keep, DryRun: dryRun})
			if err != nil {
				return err
			}
			return g.printDeleted(f, gs, dryRun)
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "delete ghosts older than this age (e.g. 30d, 2w, 12h)")
	cmd.Flags().IntVar(&keep, "keep", 0, "never delete the newest N ghosts")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be deleted")
	return cmd
}
