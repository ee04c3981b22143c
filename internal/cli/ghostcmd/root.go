package ghostcmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/ghost"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/internal/version"
)

// Version is printed by `version`: the binary's version and commit.
var Version = version.String()

// globals are the flags every ghost command takes, with git-ghost's names.
type globals struct {
	io             *iostreams.IOStreams
	repo           string
	prefix         string
	srcDir         string
	verbose        bool
	output         string
	connectTimeout time.Duration
}

func (g *globals) remote() ghost.RemoteOptions {
	t := g.connectTimeout
	if t == 0 {
		t = -1 // --connect-timeout 0: no limit
	}
	return ghost.RemoteOptions{ConnectTimeout: t}
}

// NewCmd returns the `ghost` command group for jikken.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return newRoot(f.IO, "ghost")
}

// Main runs the git-ghost binary with the process's arguments and returns its exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, iostreams.System(), os.Args[1:])
}

// Run runs git-ghost with args on the given streams and returns the exit code.
func Run(ctx context.Context, ios *iostreams.IOStreams, args []string) int {
	return cmdutil.Execute(ctx, newRoot(ios, "git-ghost"), ios, "git-ghost", args)
}

func newRoot(ios *iostreams.IOStreams, use string) *cobra.Command {
	g := &globals{io: ios}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Send the exact state of a working tree to another machine through a ghost git repository",
		Long: `Ghost snapshots carry local commits, staged and unstaged changes and untracked files
through a separate "ghost" git repository, compatible with Preferred Networks' git-ghost:

  push [diff|commits|all]   store the state; prints "<base> <hash>" per ghost
  pull [diff|commits|all]   apply ghosts at the repository root (refuses a dirty tree or a
                            HEAD that is not the ghost's base)
  show, list (ls), delete, gc

The ghost repository comes from --ghost-repo or GIT_GHOST_REPO, the branch prefix from
--ghost-prefix or GIT_GHOST_PREFIX (default "ghost"). Every command accepts -o json.
Exit codes: 0 success, 1 failure, 2 usage error (an unknown command, flag or argument).`,
		Example: `  git ghost push                        # prints "<base> <hash>"
  git ghost pull 8f6ece3                # on the other machine, in a clone at <base>
  git ghost push all                    # local commits too; then 'pull all <hash>' anywhere
  git ghost list all --from HEAD`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          unknownCommand,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&g.repo, "ghost-repo", os.Getenv("GIT_GHOST_REPO"), "URL of the ghost repository ($GIT_GHOST_REPO)")
	pf.StringVar(&g.prefix, "ghost-prefix", envOr("GIT_GHOST_PREFIX", ghost.DefaultPrefix), "prefix of ghost branches ($GIT_GHOST_PREFIX)")
	pf.StringVar(&g.srcDir, "src-dir", envOr("GIT_GHOST_SRC_DIR", "."), "a directory inside the repository to work on ($GIT_GHOST_SRC_DIR)")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "say more on stderr")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json (list also: only-from, only-to)")
	pf.DurationVar(&g.connectTimeout, "connect-timeout", ghost.DefaultConnectTimeout, "give up connecting to an SSH ghost repository after this long (0: never)")
	var workDir string
	pf.StringVar(&workDir, "ghost-working-dir", "", "ignored; accepted for git-ghost compatibility (no clone is made)")
	_ = pf.MarkHidden("ghost-working-dir")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.UsageError("%v (see '%s --help')", err, c.CommandPath())
	})
	cmd.AddCommand(newPushCmd(g), newPullCmd(g), newShowCmd(g), newListCmd(g), newDeleteCmd(g), newGCCmd(g),
		newVersionCmd(g), newCompletionCmd())
	return cmd
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// format checks -o for commands that know text and json only.
func (g *globals) format() (cmdutil.Format, error) {
	return cmdutil.CheckFormat(g.output, "text", "json")
}

func (g *globals) warn(format string, args ...any) {
	fmt.Fprintf(g.io.ErrOut, "warning: "+format+"\n", args...)
}

func (g *globals) info(format string, args ...any) {
	if g.verbose {
		fmt.Fprintf(g.io.ErrOut, format+"\n", args...)
	}
}

// unknownCommand refuses arguments to a command that only groups others: they can only be a
// mistyped command name.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return cmdutil.UsageError("%s", cmdutil.UnknownCommandMessage(cmd, args[0]))
}

// rangeArgs is cobra.RangeArgs reporting a usage error.
func rangeArgs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if max == 0 && len(args) > 0 && cmd.HasSubCommands() {
			return unknownCommand(cmd, args)
		}
		if len(args) < min || len(args) > max {
			if min == max {
				return cmdutil.UsageError("%s takes %d arguments, got %d (see '%s --help')", cmd.CommandPath(), min, len(args), cmd.CommandPath())
			}
			return cmdutil.UsageError("%s takes %d to %d arguments, got %d (see '%s --help')", cmd.CommandPath(), min, max, len(args), cmd.CommandPath())
		}
		return nil
	}
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Long:  `Version prints "git-ghost <version> (revision: <commit>)", git-ghost's line.`,
		Args:  rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := g.format()
			if err != nil {
				return err
			}
			version, revision := versionInfo()
			if f == "json" {
				return cmdutil.WriteJSON(g.io.Out, map[string]string{"version": version, "revision": revision, "implementation": "jikken"})
			}
			fmt.Fprintf(g.io.Out, "git-ghost %s (revision: %s)\n", version, revision)
			return nil
		},
	}
}

// versionInfo returns the version (Version, else the module version go install recorded) and
// the short commit the binary was built from, as far as the build recorded them.
func versionInfo() (version, revision string) {
	version, revision = Version, "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version, revision
	}
	if version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = strings.TrimPrefix(bi.Main.Version, "v")
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 7 {
			revision = s.Value[:7]
		}
	}
	return version, revision
}

func newCompletionCmd() *cobra.Command {
	return &cobra.Command{
		Use:       "completion bash|zsh|fish|powershell",
		Short:     "Print a shell completion script",
		Args:      rangeArgs(1, 1),
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			out := cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return cmdutil.UsageError("unknown shell %q; use bash, zsh, fish or powershell", args[0])
		},
	}
}
