package cli

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/ghost"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// runView is a run as status and runs show it.
type runView struct {
	RunID      string               `json:"run_id"`
	Experiment string               `json:"experiment"`
	File       string               `json:"file"`
	Backend    string               `json:"backend"`
	Created    time.Time            `json:"created"`
	Tool       string               `json:"tool,omitempty"`
	Status     store.Status         `json:"status"`
	Note       string               `json:"note,omitempty"`
	Counts     map[store.Status]int `json:"counts"`
	Total      int                  `json:"total"`
	Code       *ghost.Snapshot      `json:"code,omitempty"`
	// Compute sums the trials' compute (store.Compute), when their records were read.
	Compute *store.Compute `json:"compute,omitempty"`
	Trials  []trialView    `json:"trials,omitempty"`
}

type trialView struct {
	Name     string       `json:"name"`
	Status   store.Status `json:"status"`
	ExitCode *int         `json:"exit_code"`
	Attempts int          `json:"attempts"`
	Seconds  float64      `json:"seconds,omitempty"`
	Reason   string       `json:"reason,omitempty"`
	// Devices are the GPU units the last attempt was given.
	Devices []string `json:"devices,omitempty"`
	// Notes are what the runner noticed about the last attempt.
	Notes []string `json:"notes,omitempty"`
	// Eliminated is the test that eliminated its configuration after it had started (a race).
	Eliminated string `json:"eliminated,omitempty"`
	// Queued is why a running trial's attempt still waits in its cluster's queue (Slurm's
	// pending reason), as its runner last saw it.
	Queued string `json:"queued,omitempty"`
	// Metric is a running trial's latest value of its primary metric (metrics.go).
	Metric *liveValue `json:"metric,omitempty"`
	// Compute is the wall time its attempts took, and lost to interruptions.
	Compute *store.Compute `json:"compute,omitempty"`
}

// viewRun reads a run's manifest, state and trial records. A run whose runner died shows as
// interrupted, with what to do.
func viewRun(ctx context.Context, runs store.Runs, id string, withTrials bool) (*runView, error) {
	m, err := runs.Manifest(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &runView{RunID: id, Experiment: m.Experiment, File: m.File, Backend: m.Backend, Created: m.Created, Tool: m.Tool,
		Status: store.Pending, Counts: map[store.Status]int{}, Total: len(m.Trials), Code: m.Code}
	st, stErr := runs.State(ctx, id)
	if !withTrials && stErr == nil && st.Status.Final() && st.Counts != nil {
		// A finished run's counts are in its state: no need to read every trial record.
		v.Status = st.Status
		counted := 0
		for k, n := range st.Counts {
			if n > 0 {
				v.Counts[k] = n
				counted += n
			}
		}
		// A search's trials are in the counts, not in the manifest's plan.
		v.Total = max(v.Total, counted)
		return v, nil
	}
	recs, err := runs.Trials(ctx, id)
	if err != nil {
		return nil, err
	}
	plan := store.Planned(m, recs)
	v.Total = len(plan)
	for _, t := range plan {
		tv := trialView{Name: t.Name, Status: store.Pending}
		if rec := recs[t.Name]; rec != nil {
			tv.Status, tv.ExitCode, tv.Attempts, tv.Reason, tv.Devices = rec.Status, rec.ExitCode, len(rec.Attempts), rec.Reason, rec.Devices
			if n := len(rec.Attempts); n > 0 {
				tv.Notes = rec.Attempts[n-1].Notes
			}
			tv.Eliminated = rec.Eliminated
			if c := rec.Compute; c != nil {
				tv.Compute = c
				if v.Compute == nil {
					v.Compute = &store.Compute{}
				}
				v.Compute.Spent += c.Spent
				v.Compute.Lost += c.Lost
			}
			if rec.Status == store.Running && rec.Live != nil {
				tv.Queued = rec.Live.Queued
			}
			if rec.Started != nil {
				end := time.Now()
				if rec.Finished != nil {
					end = *rec.Finished
				}
				tv.Seconds = end.Sub(*rec.Started).Seconds()
			}
		}
		v.Counts[tv.Status]++
		if withTrials {
			v.Trials = append(v.Trials, tv)
		}
	}
	if stErr == nil {
		v.Status = st.Status
	}
	if x := runner.ExportOf(m.Backend); x != nil {
		// No jikken runner works on an exported run: its engine does.
		if v.Status == store.Running {
			v.Note = exportedNote(x, m)
		}
		return v, nil
	}
	if v.Status == store.Running {
		holder, _ := runs.LockHolder(ctx, id)
		host, _ := os.Hostname()
		switch {
		case holder == nil:
			v.Status, v.Note = store.Killed, "the runner is gone; resume with 'jikken resume "+id+"'"
		case holder.Host == host && !store.HolderAlive(holder, host):
			v.Status, v.Note = store.Killed, fmt.Sprintf("runner pid %d died; resume with 'jikken resume %s'", holder.PID, id)
		default:
			v.Note = fmt.Sprintf("runner pid %d on %s", holder.PID, holder.Host)
		}
		if v.Status == store.Killed {
			// No runner watches the queue any more: what it last saw may be stale.
			for i := range v.Trials {
				v.Trials[i].Queued = ""
			}
		}
	}
	return v, nil
}

// exportedNote says where an exported run stands when its engine cannot be asked.
func exportedNote(x *runner.Export, m *store.Manifest) string {
	return fmt.Sprintf("exported to %s; see '%s'", x.Engine, x.Show(x.Workflow(m.RunID, m.Options.Backend)))
}

// exportedRun refuses to run or stop an exported run: its engine runs it.
func exportedRun(m *store.Manifest) error {
	x := runner.ExportOf(m.Backend)
	if x == nil {
		return nil
	}
	var manage []string
	for _, c := range x.Manage {
		manage = append(manage, "'"+c+"'")
	}
	return cmdutil.UsageError("run %s was exported to %s, which runs it, not jikken; see '%s' (or %s)", m.RunID, x.Engine, x.Show(x.Workflow(m.RunID, m.Options.Backend)), strings.Join(manage, ", "))
}

// withWorkflow asks the engine of an exported run how its workflow stands, and shows it; when
// the engine cannot be asked (no cluster answers), the run's own state and note stand.
func (v *runView) withWorkflow(ctx context.Context, x *runner.Export, m *store.Manifest) {
	st, err := x.State(ctx, m.Options.Backend, x.Workflow(m.RunID, m.Options.Backend))
	if err != nil {
		return
	}
	if st.Status != "" {
		v.Status = st.Status
	}
	v.Note = st.Note
}

func newStatusCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	var all bool
	cmd := &cobra.Command{
		Use:   "status RUN",
		Short: "Show a run's progress and each trial's state",
		Long: `Status shows how many trials of RUN succeeded, failed, run or wait, and lists the trials that
did not succeed (all trials with --all). RUN is a run id, a unique prefix, or "latest".`,
		Example: `  jikken status latest
  jikken status 20261122-101500-sweep --all
  jikken status latest -o json | jq '.counts'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			runs, id, err := resolveRun(ctx, f, args[0])
			if err != nil {
				return err
			}
			v, err := viewRun(ctx, runs, id, true)
			if err != nil {
				return err
			}
			if x := runner.ExportOf(v.Backend); x != nil && v.Status == store.Running {
				m, err := runs.Manifest(ctx, id)
				if err != nil {
					return err
				}
				v.withWorkflow(ctx, x, m)
			}
			withLiveValues(ctx, runs, v)
			if output == "json" {
				return cmdutil.WriteJSON(f.IO.Out, v)
			}
			w := f.IO.Out
			fmt.Fprintf(w, "run:        %s\nexperiment: %s (%s)\nbackend:    %s\ncreated:    %s\nstatus:     %s", v.RunID, v.Experiment, v.File, v.Backend, v.Created.Local().Format(time.DateTime), v.Status)
			if v.Note != "" {
				fmt.Fprintf(w, " (%s)", v.Note)
			}
			fmt.Fprintln(w)
			if v.Code != nil {
				dirty := ""
				if v.Code.Dirty {
					dirty = fmt.Sprintf(" + %d changed files", len(v.Code.Files))
				}
				fmt.Fprintf(w, "code:       %s@%.12s%s\n", v.Code.Repo, v.Code.Head, dirty)
			}
			fmt.Fprintf(w, "trials:     %d total", v.Total)
			for _, s := range []store.Status{store.Succeeded, store.Pruned, store.Eliminated, store.Failed, store.Skipped, store.Killed, store.Stopped, store.Running, store.Pending} {
				if n := v.Counts[s]; n > 0 {
					fmt.Fprintf(w, ", %d %s", n, s)
				}
			}
			fmt.Fprintln(w)
			if c := v.Compute; c != nil && c.Lost > 0 {
				// Only interrupted attempts lose compute: preemptions, lost nodes, time limits.
				fmt.Fprintf(w, "compute:    %s spent, %s lost to interruptions (after the last checkpoint)\n",
					time.Duration(c.Spent*float64(time.Second)).Round(100*time.Millisecond), time.Duration(c.Lost*float64(time.Second)).Round(100*time.Millisecond))
			}
			var show []trialView
			for _, t := range v.Trials {
				if all || t.Status != store.Succeeded {
					show = append(show, t)
				}
			}
			if len(show) == 0 {
				return nil
			}
			fmt.Fprintln(w)
			devices := false
			for _, t := range show {
				devices = devices || len(t.Devices) > 0
			}
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			if devices {
				fmt.Fprintln(tw, "TRIAL\tSTATUS\tEXIT\tATTEMPTS\tTIME\tGPUS\tREASON")
			} else {
				fmt.Fprintln(tw, "TRIAL\tSTATUS\tEXIT\tATTEMPTS\tTIME\tREASON")
			}
			for _, t := range show {
				exit := "-"
				if t.ExitCode != nil {
					exit = fmt.Sprint(*t.ExitCode)
				}
				reason := t.Reason
				if t.Queued != "" {
					reason = "queued: " + t.Queued
				}
				if t.Metric != nil {
					reason = t.Metric.String() + "  " + reason
				}
				for _, n := range t.Notes {
					reason += " [" + n + "]"
				}
				if t.Eliminated != "" {
					reason += " [after it started: " + t.Eliminated + "]"
				}
				if devices {
					gpus := strings.Join(t.Devices, ",")
					if gpus == "" {
						gpus = "-"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1fs\t%s\t%s\n", t.Name, t.Status, exit, t.Attempts, t.Seconds, gpus, reason)
				} else {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1fs\t%s\n", t.Name, t.Status, exit, t.Attempts, t.Seconds, reason)
				}
			}
			return tw.Flush()
		},
	}
	cmdutil.FormatFlag(cmd, &output, "text", "json")
	cmd.Flags().BoolVar(&all, "all", false, "list every trial, not only those that did not succeed")
	return cmd
}

func newRunsCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	var limit int
	cmd := &cobra.Command{
		Use:     "runs",
		Short:   "List the runs in the store, newest last",
		Example: "  jikken runs\n  jikken runs --store s3://lab/jikken -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			runs, err := openRuns(ctx, f)
			if err != nil {
				return err
			}
			ids, err := runs.RunIDs(ctx)
			if err != nil {
				return err
			}
			sort.Strings(ids)
			if limit > 0 && len(ids) > limit {
				ids = ids[len(ids)-limit:]
			}
			views := []*runView{}
			for _, id := range ids {
				v, err := viewRun(ctx, runs, id, false)
				if err != nil {
					return err
				}
				views = append(views, v)
			}
			if output == "json" {
				return cmdutil.WriteJSON(f.IO.Out, views)
			}
			if len(views) == 0 {
				fmt.Fprintf(f.IO.ErrOut, "no runs in %s; start one with 'jikken run FILE'\n", runs.Blob.Location())
				return nil
			}
			tw := tabwriter.NewWriter(f.IO.Out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tEXPERIMENT\tSTATUS\tTRIALS\tSUCCEEDED\tPRUNED\tELIMINATED\tFAILED\tCREATED")
			for _, v := range views {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", v.RunID, v.Experiment, v.Status, v.Total, v.Counts[store.Succeeded], v.Counts[store.Pruned], v.Counts[store.Eliminated], v.Counts[store.Failed]+v.Counts[store.Skipped], v.Created.Local().Format(time.DateTime))
			}
			return tw.Flush()
		},
	}
	cmdutil.FormatFlag(cmd, &output, "text", "json")
	cmd.Flags().IntVarP(&limit, "limit", "n", 0, "show only the newest N runs")
	return cmd
}
