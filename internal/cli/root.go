// Package cli wires jikken's commands: flag parsing, output formats and progress, handing the work
// to the domain packages.
package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/iostreams"
)

// Version is set at build time with -ldflags "-X github.com/jikken-dev/jikken/internal/cli.Version=...".
var Version = "dev"

// Main runs jikken with the process's arguments and returns the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, iostreams.System(), os.Args[1:])
}

// Run runs jikken with args on the given streams and returns the exit code; tests call it.
func Run(ctx context.Context, ios *iostreams.IOStreams, args []string) int {
	exe, _ := os.Executable()
	f := &cmdutil.Factory{IO: ios, Executable: exe}
	return cmdutil.Execute(ctx, NewRootCmd(f), ios, "jikken", args)
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "jikken",
		Short: "Run reproducible experiments and compare their results",
		Long: `jikken (実験, "experiment") expands a Jsonnet experiment into trials, runs them on local
processes, Docker or Kubernetes, pins each trial to its code snapshot, params and seed, keeps
every result in a store, and compares algorithms with proper statistics.

Exit codes: 0 success; 1 error; 2 usage error; 3 the run finished but some trials failed;
130 interrupted.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if f.StoreURL == "" {
				f.StoreURL = cmdutil.DefaultStoreURL()
			}
			return nil
		},
	}
	root.PersistentFlags().StringVar(&f.StoreURL, "store", "", "where runs are kept: a folder or s3://bucket/prefix (default $JIKKEN_STORE or ./.jikken)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.UsageError("%v (see '%s --help')", err, c.CommandPath())
	})
	for _, add := range commands {
		root.AddCommand(add(f))
	}
	return root
}

// commands lists the constructors of the top-level commands; each command group adds itself
// in its own file so groups stay independent.
var commands []func(*cmdutil.Factory) *cobra.Command

func register(c func(*cmdutil.Factory) *cobra.Command) { commands = append(commands, c) }
