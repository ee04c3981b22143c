package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/cmdutil/expflags"
)

func newValidateCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	var expFlags expflags.Flags
	var onHost bool
	var hs hostSettings
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check an experiment file and print the plan it expands to",
		Long: `Validate evaluates FILE as 'jikken run' would and prints the trials in dependency levels (a level
starts only after what it waits for), without running anything. Every problem of the file is
listed at once, each with file:line:column, the trial and the field; the exit code is 1 when
there is one. Warnings (a param in code that another interpreter parses, such as sh -c '...'
or python3 -c "...") go to stderr and do not change the exit code.

With --host it also prints what this host offers trials (cores, memory, GPUs and MIG
instances, and where each figure comes from) and how the plan fits: how many trials of each
kind can run at once, what limits them, and which trials can never run here; the exit code is 1
when some trial can never run here.`,
		Example: `  jikken validate sweep.jsonnet
  jikken validate sweep.jsonnet --host
  jikken validate sweep.jsonnet --host --gpus 0,1 --memory 64Gi
  jikken validate sweep.jsonnet -o json | jq '.trials | length'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := expFlags.Options(f)
			if err != nil {
				return err
			}
			exp, err := experiment.Load(args[0], opts)
			if err != nil {
				return err
			}
			for _, w := range serverWarnings(exp.Trials, defaultJobs()) {
				fmt.Fprintln(f.IO.ErrOut, "warning: "+w)
			}
			var fit *hostFit
			if onHost {
				if fit, err = fitOnHost(cmd.Context(), exp.Trials, hs); err != nil {
					return err
				}
			}
			if output == "json" {
				out := map[string]any{"name": exp.Name, "form": exp.Form, "trials": exp.Trials, "levels": levelNames(exp), "warnings": warningsJSON(exp)}
				if fit != nil {
					out["host"] = fit
				}
				if err := cmdutil.WriteJSON(f.IO.Out, out); err != nil {
					return err
				}
				return fit.never()
			}
			printWarnings(f.IO.ErrOut, exp.Warnings)
			w := f.IO.Out
			fmt.Fprintf(w, "%s: experiment %q (%s form), %d trials\n", args[0], exp.Name, exp.Form, len(exp.Trials))
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			for li, level := range experiment.Levels(exp.Trials) {
				fmt.Fprintf(tw, "\nlevel %d (%d trials)\n", li, len(level))
				for n, i := range level {
					if n == 8 && len(level) > 10 {
						fmt.Fprintf(tw, "  ... %d more\n", len(level)-n)
						break
					}
					t := exp.Trials[i]
					extra := ""
					switch {
					case t.ServiceImplied:
						extra += " [others use it while it runs; never stopped by jikken: mark a server service: true]"
					case t.Service:
						extra += " [service]"
					}
					if t.Restart != "" && t.Restart != experiment.RestartNo {
						extra += " restart " + string(t.Restart)
					}
					if t.Timeout > 0 {
						extra += " timeout " + time.Duration(t.Timeout).String()
					}
					if t.Retries > 0 {
						extra += fmt.Sprintf(" retries %d", t.Retries)
					}
					fmt.Fprintf(tw, "  %s\t%s%s\n", t.Name, t.Cmd.Short(), extra)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if fit != nil {
				fit.print(w)
			}
			return fit.never()
		},
	}
	cmd.Flags().BoolVar(&onHost, "host", false, "also print what this host offers and how the plan fits it")
	hs.addFlags(cmd, false)
	cmdutil.FormatFlag(cmd, &output, "text", "json")
	expFlags.Add(cmd)
	return cmd
}

func levelNames(exp *experiment.Experiment) [][]string {
	var out [][]string
	for _, level := range experiment.Levels(exp.Trials) {
		names := make([]string, len(level))
		for i, idx := range level {
			names[i] = exp.Trials[idx].Name
		}
		out = append(out, names)
	}
	return out
}

// printWarnings shows what may go wrong in a valid experiment, before anything runs.
func printWarnings(w io.Writer, warns []experiment.Problem) {
	for _, p := range warns {
		fmt.Fprintf(w, "warning: %s\n", p)
	}
}

func warningsJSON(exp *experiment.Experiment) []experiment.Problem {
	if exp.Warnings == nil {
		return []experiment.Problem{}
	}
	return exp.Warnings
}
