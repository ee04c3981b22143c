// Package cli wires jikken's commands: flag parsing, output formats and progress, handing the work
// to the domain packages.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/jikken-dev/jikken/internal/cli/analysiscmd"
	"github.com/jikken-dev/jikken/internal/cli/execcmd"
	"github.com/jikken-dev/jikken/internal/cli/exportcmd"
	"github.com/jikken-dev/jikken/internal/cli/ghostcmd"
	"github.com/jikken-dev/jikken/internal/cli/simcmd"
	"github.com/jikken-dev/jikken/internal/cli/storecmd"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/cmdutil/complete"
	"github.com/jikken-dev/jikken/internal/cmdutil/expflags"
	"github.com/jikken-dev/jikken/internal/evalguard"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/internal/version"
	_ "github.com/jikken-dev/jikken/store/s3" // s3:// for store.Open
)

// Main runs jikken with the process's arguments and returns the exit code.
func Main() int { return MainWith(Plugins{}) }

// Plugins are the simulator plugins compiled into a jikken binary (cmd/jikken/app), by name.
type Plugins = simcmd.Plugins

// MainWith is Main for a jikken binary built with custom simulator plugins (cmd/jikken/app).
func MainWith(pl Plugins) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exe, _ := os.Executable()
	f := &cmdutil.Factory{IO: iostreams.System(), Executable: exe}
	routeClientGoLogs(f.IO.ErrOut)
	return cmdutil.Execute(ctx, newRootCmd(f, pl), f.IO, "jikken", os.Args[1:])
}

// Run runs jikken with args on the given streams and returns the exit code; tests call it. The
// process is not a jikken binary then (a test binary), so nothing runs it again: the Jsonnet
// evaluation is not moved to a bounded child, and --detach and trials' $JIKKEN_BIN are off.
func Run(ctx context.Context, ios *iostreams.IOStreams, args []string) int {
	return RunWith(ctx, ios, args, Plugins{})
}

// RunWith is Run with custom simulator plugins.
func RunWith(ctx context.Context, ios *iostreams.IOStreams, args []string, pl Plugins) int {
	f := &cmdutil.Factory{IO: ios}
	return cmdutil.Execute(ctx, newRootCmd(f, pl), ios, "jikken", args)
}

// The groups of commands in 'jikken --help'.
const (
	groupRun     = "run"
	groupResults = "results"
	groupManage  = "manage"
	groupSim     = "sim"
	groupOther   = "other"
)

// newRootCmd builds the command tree: this function is the one place that lists every command.
// Only the simulator's commands get the simulator's plugins.
func newRootCmd(f *cmdutil.Factory, pl Plugins) *cobra.Command {
	cobra.EnableCommandSorting = false // help lists commands in the order below, most used first
	root := &cobra.Command{
		Use:   "jikken",
		Short: "Run reproducible experiments and compare their results",
		Long: `jikken (実験, "experiment") expands a Jsonnet experiment into trials, runs them on local
processes, Docker or Kubernetes, pins each trial to its code snapshot, params and seed, keeps
every result in a store, and compares algorithms with proper statistics.

Exit codes: 0 success; 1 error; 2 usage error; 3 the run finished but some trials failed;
130 interrupted.`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if f.StoreURL == "" {
				f.StoreURL = cmdutil.DefaultStoreURL()
			}
			return nil
		},
	}
	root.SetVersionTemplate("jikken {{.Version}}\n")
	root.PersistentFlags().StringVar(&f.StoreURL, "store", "", "where runs are kept: a folder or s3://bucket/prefix (default $JIKKEN_STORE or ./.jikken)")
	root.AddGroup(
		&cobra.Group{ID: groupRun, Title: "Run experiments:"},
		&cobra.Group{ID: groupResults, Title: "Look at results:"},
		&cobra.Group{ID: groupManage, Title: "Manage stores and code:"},
		&cobra.Group{ID: groupSim, Title: "Simulate clusters:"},
		&cobra.Group{ID: groupOther, Title: "Other commands:"},
	)
	for _, g := range []struct {
		id   string
		cmds []*cobra.Command
	}{
		{groupRun, []*cobra.Command{newRunCmd(f), newResumeCmd(f), newExtendCmd(f), newKillCmd(f), newValidateCmd(f),
			newReproduceCmd(f), exportcmd.NewCmd(f)}},
		{groupResults, []*cobra.Command{newRunsCmd(f), newStatusCmd(f), newLogsCmd(f), newMetricsCmd(f), newResultsCmd(f), newSearchCmd(f), newUICmd(f),
			analysiscmd.NewCompareCmd(f), analysiscmd.NewPlotCmd(f), analysiscmd.NewReportCmd(f)}},
		{groupManage, []*cobra.Command{newRmCmd(f), storecmd.NewCmd(f), ghostcmd.NewCmd(f)}},
		{groupSim, []*cobra.Command{simcmd.NewCmd(f, pl)}},
		{groupOther, []*cobra.Command{newVersionCmd(f), execcmd.NewCmd(f), newEvalCmd(f)}},
	} {
		for _, c := range g.cmds {
			c.GroupID = g.id
			root.AddCommand(c)
		}
	}
	root.SetHelpCommandGroupID(groupOther)
	root.SetCompletionCommandGroupID(groupOther)
	completeArgs(f, root)
	cmdutil.Conventions(root)
	return root
}

// completeArgs tells the shell what the arguments and flags of the commands are: run ids,
// trial names, backends (formats are completed where -o is defined).
func completeArgs(f *cmdutil.Factory, root *cobra.Command) {
	byPath := map[string]cobra.CompletionFunc{
		"status": complete.FirstRun(f), "results": complete.FirstRun(f),
		"resume": complete.FirstRun(f), "extend": complete.FirstRun(f), "report": complete.FirstRun(f),
		"store sync": complete.FirstRun(f), "rm": complete.Runs(f, false),
		"kill": complete.Runs(f, true), "compare": complete.Runs(f, true),
		"plot": complete.Runs(f, true), "logs": complete.RunTrial(f),
		"reproduce": complete.RunSlashTrial(f),
	}
	for path, fn := range byPath {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c == root {
			panic("completeArgs: no command " + path)
		}
		c.ValidArgsFunction = fn
	}
	backendNames := cobra.FixedCompletions(backendList(), cobra.ShellCompDirectiveNoFileComp)
	for _, c := range root.Commands() {
		if c.Flags().Lookup("backend") != nil {
			_ = c.RegisterFlagCompletionFunc("backend", backendNames)
		}
	}
}

func newVersionCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print jikken's version, commit and platform",
		Long: `Version prints the version of this jikken and the commit it was built from, with "-dirty" when
the working tree had uncommitted changes. Every run records the same in its manifest ("tool",
"build") and every trial record in "tool".`,
		Example: "  jikken version\n  jikken version -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in := version.Get()
			if output == "json" {
				return cmdutil.WriteJSON(f.IO.Out, in)
			}
			fmt.Fprintf(f.IO.Out, "jikken %s\n%s, %s\n", in, in.Go, in.Platform)
			return nil
		},
	}
	cmdutil.FormatFlag(cmd, &output, "text", "json")
	return cmd
}

// newEvalCmd is the hidden child a bounded evaluation runs (internal/evalguard).
func newEvalCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:    expflags.EvalCommand,
		Short:  "Evaluate an experiment file for a parent jikken (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return evalguard.Serve(f.IO.In, f.IO.Out, os.Exit)
		},
	}
}

// routeClientGoLogs sends what client-go logs (through klog, process-wide) to a warn-level
// logger on w. Left to klog, it prints "Waited before sending request" on stderr every ten
// seconds while the client's rate limit holds a request back a second or more, which a large
// sweep does by design (10,000 creates at 500 a second); its errors (a watch the API server
// broke) still show.
func routeClientGoLogs(w io.Writer) {
	klog.SetSlogLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
