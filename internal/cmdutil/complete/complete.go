// Package complete completes jikken's arguments from the store: run ids and trial names, read
// within a budget, since a shell waits for them.
package complete

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/store"
)

// completionBudget bounds how long a completion may read the store: a shell waits for it.
const completionBudget = 3 * time.Second

// completionRuns opens the store a completion reads: --store when typed, else the default.
func completionRuns(ctx context.Context, f *cmdutil.Factory) (store.Runs, error) {
	url := f.StoreURL
	if url == "" {
		url = cmdutil.DefaultStoreURL()
	}
	b, err := store.Open(ctx, url)
	return store.Runs{Blob: b}, err
}

// runIDs returns "latest" and the ids of the runs in the store that start with prefix, newest
// first (the one people want is usually recent).
func runIDs(ctx context.Context, f *cmdutil.Factory, prefix string) []string {
	runs, err := completionRuns(ctx, f)
	if err != nil {
		return nil
	}
	ids, err := runs.RunIDs(ctx)
	if err != nil {
		return nil
	}
	out := []string{}
	if strings.HasPrefix("latest", prefix) && len(ids) > 0 {
		out = append(out, "latest")
	}
	for _, id := range slices.Backward(ids) {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	return out
}

// trialNames returns the names of run's trials that start with prefix.
func trialNames(ctx context.Context, f *cmdutil.Factory, run, prefix string) []string {
	runs, err := completionRuns(ctx, f)
	if err != nil {
		return nil
	}
	id, err := runs.Resolve(ctx, run)
	if err != nil {
		return nil
	}
	m, err := runs.Manifest(ctx, id)
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range m.Trials {
		if strings.HasPrefix(t.Name, prefix) {
			out = append(out, t.Name)
		}
	}
	return out
}

func budget(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, completionBudget)
}

// Runs completes every argument with run ids (and "latest"); with files, also with
// file names (for commands that take RUN|FILE).
func Runs(f *cmdutil.Factory, files bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, cancel := budget(cmd)
		defer cancel()
		dir := cobra.ShellCompDirectiveNoFileComp
		if files {
			dir = cobra.ShellCompDirectiveDefault
		}
		return runIDs(ctx, f, toComplete), dir
	}
}

// FirstRun completes the first argument with run ids and nothing after it.
func FirstRun(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return Runs(f, false)(cmd, args, toComplete)
	}
}

// RunTrial completes RUN TRIAL: run ids, then the trial names of that run.
func RunTrial(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, cancel := budget(cmd)
		defer cancel()
		switch len(args) {
		case 0:
			return runIDs(ctx, f, toComplete), cobra.ShellCompDirectiveNoFileComp
		case 1:
			return trialNames(ctx, f, args[0], toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// RunSlashTrial completes RUN/TRIAL: run ids followed by '/', then the run's trials.
func RunSlashTrial(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := budget(cmd)
		defer cancel()
		if run, trial, ok := strings.Cut(toComplete, "/"); ok {
			var out []string
			for _, t := range trialNames(ctx, f, run, trial) {
				out = append(out, run+"/"+t)
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, id := range runIDs(ctx, f, toComplete) {
			out = append(out, id+"/")
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
