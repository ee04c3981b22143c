package cmdutil

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/store"
)

// completionBudget bounds how long a completion may read the store: a shell waits for it.
const completionBudget = 3 * time.Second

// runs opens the store a completion reads: --store when typed, else the default.
func (f *Factory) completionRuns(ctx context.Context) (store.Runs, error) {
	url := f.StoreURL
	if url == "" {
		url = DefaultStoreURL()
	}
	b, err := store.Open(ctx, url)
	return store.Runs{Blob: b}, err
}

// runIDs returns "latest" and the ids of the runs in the store that start with prefix, newest
// first (the one people want is usually recent).
func (f *Factory) runIDs(ctx context.Context, prefix string) []string {
	runs, err := f.completionRuns(ctx)
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
func (f *Factory) trialNames(ctx context.Context, run, prefix string) []string {
	runs, err := f.completionRuns(ctx)
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

// CompleteRuns completes every argument with run ids (and "latest"); with files, also with
// file names (for commands that take RUN|FILE).
func CompleteRuns(f *Factory, files bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, cancel := budget(cmd)
		defer cancel()
		dir := cobra.ShellCompDirectiveNoFileComp
		if files {
			dir = cobra.ShellCompDirectiveDefault
		}
		return f.runIDs(ctx, toComplete), dir
	}
}

// CompleteFirstRun completes the first argument with run ids and nothing after it.
func CompleteFirstRun(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return CompleteRuns(f, false)(cmd, args, toComplete)
	}
}

// CompleteRunTrial completes RUN TRIAL: run ids, then the trial names of that run.
func CompleteRunTrial(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, cancel := budget(cmd)
		defer cancel()
		switch len(args) {
		case 0:
			return f.runIDs(ctx, toComplete), cobra.ShellCompDirectiveNoFileComp
		case 1:
			return f.trialNames(ctx, args[0], toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteRunSlashTrial completes RUN/TRIAL: run ids followed by '/', then the run's trials.
func CompleteRunSlashTrial(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := budget(cmd)
		defer cancel()
		if run, trial, ok := strings.Cut(toComplete, "/"); ok {
			var out []string
			for _, t := range f.trialNames(ctx, run, trial) {
				out = append(out, run+"/"+t)
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, id := range f.runIDs(ctx, toComplete) {
			out = append(out, id+"/")
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// CompleteList completes a comma-separated list of values (--profiles a,b,c): the values not
// yet given, after what was typed up to the last comma.
func CompleteList(values ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		given := strings.Split(strings.TrimSuffix(done, ","), ",")
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, last) && !slices.Contains(given, v) {
				out = append(out, done+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
