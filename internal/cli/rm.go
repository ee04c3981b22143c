package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/ghost"
	"github.com/jikken-dev/jikken/ghost/gitexec"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/progress"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// rmOptions are the flags and arguments of 'jikken rm'.
type rmOptions struct {
	f              *cmdutil.Factory
	refs           []string
	olderThan      string
	keep           int
	keepSet        bool
	statuses       []string
	experiment     string
	dryRun         bool
	force          bool
	backendObjects bool
	output         string
	settings       backendSettings
}

func newRmCmd(f *cmdutil.Factory) *cobra.Command {
	o := &rmOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rm [RUN...]",
		Short: "Delete runs from the store",
		Long: `Rm deletes runs from the store: every object under runs/RUN/ (manifest, state, trial records,
logs, metrics, artifacts), the manifest last, so a delete that stops midway leaves a run that
'jikken runs' still lists and running rm again finishes it. It also removes what the run left on
this machine: the git ref that kept its code snapshot (refs/jikken/snapshots/...) in the
experiment's repository, unless another run in the store uses the same snapshot, and its work
folder. With --backend-objects it also deletes what the backend keeps of the run: the Jobs of a
kubernetes run, the containers and networks of a docker run.

RUN is a run id, a unique prefix, or "latest". Instead of naming runs, select them; with both,
the flags narrow the named runs:
  --experiment NAME   runs of that experiment
  --keep N            all but the newest N runs (of the experiment with --experiment, of the
                      named RUNs when there are any): those N are never deleted
  --status STATUS     runs in that state (failed, killed, succeeded, running, pending,
                      skipped; comma-separated for several), as 'jikken runs' shows it
  --older-than AGE    runs created more than AGE ago: 30d, 12h, 1d12h

A run whose runner is still alive is never deleted without --force: a named one is an error, a
selected one is skipped with a warning. Stop it with 'jikken kill RUN' first: a runner whose
run was deleted under it goes on writing trial records no command lists. Try a selection with
--dry-run: it lists what would go and deletes nothing.`,
		Example: `  jikken rm latest
  jikken rm 20261122-101500-sweep-3f2a 20261122-1030
  jikken rm --older-than 30d --keep 10
  jikken rm --status failed --dry-run
  jikken rm --experiment sweep --status failed,killed -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.refs, o.keepSet = args, cmd.Flags().Changed("keep")
			return runRm(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.olderThan, "older-than", "", "select runs created more than this long ago (30d, 12h, 1d12h)")
	fl.IntVar(&o.keep, "keep", 0, "keep the newest N runs (of the experiment, or of the named runs) whatever else selects them")
	fl.StringSliceVar(&o.statuses, "status", nil, "select runs in this state: failed, killed, succeeded, running, pending, skipped")
	fl.StringVar(&o.experiment, "experiment", "", "select runs of this experiment")
	fl.BoolVar(&o.dryRun, "dry-run", false, "list the runs that would be deleted; delete nothing")
	fl.BoolVar(&o.force, "force", false, "delete runs whose runner is still alive (stop them with 'jikken kill' instead)")
	fl.BoolVar(&o.backendObjects, "backend-objects", false, "also delete what the backend keeps of the run (kubernetes Jobs, docker containers and networks); needs the cluster or engine")
	cmdutil.FormatFlag(cmd, &o.output, "text", "json")
	o.settings.addFlags(cmd, false)
	return cmd
}

// rmCandidate is a run rm considers: what its manifest, state and lock say.
type rmCandidate struct {
	id      string
	m       *store.Manifest // nil when the manifest cannot be read
	status  store.Status
	holder  *store.LockInfo
	created time.Time
}

// rmRun is a deleted (or, with --dry-run, deletable) run as -o json shows it.
type rmRun struct {
	RunID      string       `json:"run_id"`
	Experiment string       `json:"experiment,omitempty"`
	Status     store.Status `json:"status"`
	Backend    string       `json:"backend,omitempty"`
	Created    time.Time    `json:"created,omitzero"`
	// Objects is how many store objects were deleted (or would be).
	Objects int `json:"objects"`
	// BackendObjects is how many Jobs (kubernetes) or containers (docker) --backend-objects
	// deleted.
	BackendObjects *int `json:"backend_objects,omitempty"`
	// SnapshotRef is the git ref of the run's code snapshot that was deleted.
	SnapshotRef string   `json:"snapshot_ref,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

// rmSkip is a selected run left alone because its runner is alive.
type rmSkip struct {
	RunID  string `json:"run_id"`
	Reason string `json:"reason"`
}

type rmResult struct {
	DryRun  bool     `json:"dry_run"`
	Runs    []*rmRun `json:"runs"`
	Skipped []rmSkip `json:"skipped,omitempty"`
	Objects int      `json:"objects"`
}

func runRm(ctx context.Context, o *rmOptions) error {
	age, err := o.check()
	if err != nil {
		return err
	}
	runs, err := openRuns(ctx, o.f)
	if err != nil {
		return err
	}
	sel, err := selectRuns(ctx, runs, o, age)
	if err != nil {
		return err
	}
	text := o.output == "text"
	ios := o.f.IO
	res := &rmResult{DryRun: o.dryRun, Runs: []*rmRun{}, Skipped: sel.skipped}
	if text {
		for _, s := range sel.skipped {
			fmt.Fprintf(ios.ErrOut, "skipped run %s: it %s; stop it with 'jikken kill %s' first, or pass --force\n", s.RunID, s.Reason, s.RunID)
		}
	}
	d := &rmDeleter{o: o, runs: runs, selected: map[string]bool{}, known: map[string]*store.Manifest{}}
	for _, c := range sel.targets {
		d.selected[c.id] = true
	}
	for _, c := range sel.scope {
		d.known[c.id] = c.m
	}
	for _, c := range sel.targets {
		r := &rmRun{RunID: c.id, Status: c.status, Created: c.created}
		if c.m != nil {
			r.Experiment, r.Backend = c.m.Experiment, c.m.Backend
		}
		res.Runs = append(res.Runs, r)
		if o.dryRun {
			if r.Objects, err = countObjects(ctx, runs.Blob, c.id); err != nil {
				return err
			}
			res.Objects += r.Objects
			if text {
				fmt.Fprintf(ios.Out, "would delete run %s (%s)\n", c.id, plural(r.Objects, "object"))
			}
			continue
		}
		err := d.delete(ctx, c, r)
		res.Objects += r.Objects
		if text {
			for _, w := range r.Warnings {
				fmt.Fprintf(ios.ErrOut, "warning: run %s: %s\n", c.id, w)
			}
		}
		if err != nil {
			return err // it says how many objects went and to run rm again
		}
		if text {
			fmt.Fprintf(ios.Out, "deleted run %s (%s)\n", c.id, describeRm(r))
		}
	}
	if !text {
		return cmdutil.WriteJSON(ios.Out, res)
	}
	printRmSummary(ios.Out, res, runs.Blob.Location())
	return nil
}

// check validates the options and returns the age --older-than asks for.
func (o *rmOptions) check() (time.Duration, error) {
	if len(o.refs) == 0 && o.olderThan == "" && !o.keepSet && len(o.statuses) == 0 && o.experiment == "" {
		return 0, cmdutil.UsageError("say which runs to delete: RUN ids (or latest), or a selection with --older-than, --keep, --status or --experiment (see 'jikken rm --help')")
	}
	if o.keep < 0 {
		return 0, cmdutil.UsageError("--keep %d: want 0 or more runs to keep", o.keep)
	}
	for _, s := range o.statuses {
		if !slices.Contains(runStatuses, store.Status(s)) {
			return 0, cmdutil.UsageError("--status %q: want one of %s", s, joinStatuses(runStatuses))
		}
	}
	if o.olderThan == "" {
		return 0, nil
	}
	age, err := cmdutil.ParseAge(o.olderThan)
	if err != nil {
		return 0, cmdutil.UsageError("--older-than %q: want an age such as 30d, 12h or 1d12h", o.olderThan)
	}
	return age, nil
}

// rmSelection is what rm chose: the runs it looked at (the named ones, or all, of the
// experiment), those it deletes, and those it leaves because their runner is alive.
type rmSelection struct {
	scope   []*rmCandidate
	targets []*rmCandidate
	skipped []rmSkip
}

// selectRuns applies the arguments and selection flags. --keep spares the newest runs of the
// scope before --status and --older-than pick among the rest. A named run whose runner is alive
// is an error (without --force); a selected one is skipped.
func selectRuns(ctx context.Context, runs store.Runs, o *rmOptions, age time.Duration) (*rmSelection, error) {
	ids, err := rmScope(ctx, runs, o.refs)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	sel := &rmSelection{}
	for _, id := range ids {
		c, err := loadCandidate(ctx, runs, id, host, o.experiment)
		if err != nil {
			return nil, err
		}
		if c != nil {
			sel.scope = append(sel.scope, c)
		}
	}
	slices.SortStableFunc(sel.scope, func(a, b *rmCandidate) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	cands := sel.scope
	if o.keepSet {
		cands = cands[:max(0, len(cands)-o.keep)]
	}
	now := time.Now()
	for _, c := range cands {
		if len(o.statuses) > 0 && !slices.Contains(o.statuses, string(c.status)) {
			continue
		}
		if o.olderThan != "" && (c.created.IsZero() || now.Sub(c.created) <= age) {
			continue
		}
		if busy := runnerBusy(c, host); busy != "" && !o.force {
			if len(o.refs) > 0 {
				return nil, fmt.Errorf("run %s %s; stop it with 'jikken kill %s' first, or pass --force to delete it anyway", c.id, busy, c.id)
			}
			sel.skipped = append(sel.skipped, rmSkip{RunID: c.id, Reason: busy})
			continue
		}
		sel.targets = append(sel.targets, c)
	}
	return sel, nil
}

// printRmSummary writes the last line of rm's text output.
func printRmSummary(w io.Writer, res *rmResult, location string) {
	switch {
	case len(res.Runs) == 0 && len(res.Skipped) == 0:
		fmt.Fprintf(w, "no run to delete in %s matches\n", location)
		return
	case len(res.Runs) == 0:
		fmt.Fprintf(w, "nothing deleted: %s still running\n", plural(len(res.Skipped), "run"))
		return
	}
	verb := "deleted"
	if res.DryRun {
		verb = "would delete"
	}
	fmt.Fprintf(w, "%s %s (%s)", verb, plural(len(res.Runs), "run"), plural(res.Objects, "object"))
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "; skipped %s still running", plural(len(res.Skipped), "run"))
	}
	if res.DryRun {
		fmt.Fprint(w, "; dry run, nothing was deleted")
	}
	fmt.Fprintln(w)
}

// runStatuses are the states --status accepts.
var runStatuses = []store.Status{store.Pending, store.Running, store.Succeeded, store.Failed, store.Skipped, store.Killed}

func joinStatuses(ss []store.Status) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// backendObjectNoun names what DeleteRun counted for r's backend.
func backendObjectNoun(r *rmRun) string {
	if n := descriptorOf(r.Backend).Noun; n != "" {
		return n
	}
	return "object"
}

// describeRm is what the line of a deleted run says in brackets.
func describeRm(r *rmRun) string {
	s := plural(r.Objects, "object")
	if r.BackendObjects != nil {
		s += ", " + plural(*r.BackendObjects, backendObjectNoun(r))
	}
	if r.SnapshotRef != "" {
		s += ", snapshot ref " + r.SnapshotRef
	}
	return s
}

// rmScope is the runs rm chooses from: the named ones, or every run in the store.
func rmScope(ctx context.Context, runs store.Runs, refs []string) ([]string, error) {
	if len(refs) == 0 {
		return runs.RunIDs(ctx)
	}
	var ids []string
	for _, ref := range refs {
		id, err := runs.Resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// loadCandidate reads what rm needs to know of a run, or returns nil when the run is not of
// experiment (unless that is ""). A run whose manifest cannot be parsed is still a candidate,
// of no experiment, so that a broken run can be deleted by name.
func loadCandidate(ctx context.Context, runs store.Runs, id, host, experiment string) (*rmCandidate, error) {
	c := &rmCandidate{id: id, status: store.Pending}
	m, err := runs.Manifest(ctx, id)
	switch {
	case err == nil:
		c.m, c.created = m, m.Created
	case errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	if experiment != "" && (c.m == nil || c.m.Experiment != experiment) {
		return nil, nil
	}
	if st, err := runs.State(ctx, id); err == nil {
		c.status = st.Status
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if c.holder, err = runs.LockHolder(ctx, id); err != nil {
		return nil, err
	}
	// As 'jikken runs' shows it: a running run whose runner is gone was killed.
	if c.status == store.Running && (c.holder == nil || c.holder.Host == host && !store.HolderAlive(c.holder, host)) {
		c.status = store.Killed
	}
	return c, nil
}

// runnerBusy says why a run's runner may still be working on it, or "" when it is not: a live
// process on this host, or a lock held on another host, where it cannot be checked from here.
func runnerBusy(c *rmCandidate, host string) string {
	switch {
	case c.holder == nil:
		return ""
	case store.HolderAlive(c.holder, host):
		return fmt.Sprintf("is still running (runner pid %d)", c.holder.PID)
	case c.holder.Host != host:
		return fmt.Sprintf("is locked by runner pid %d on %s", c.holder.PID, c.holder.Host)
	}
	return ""
}

func countObjects(ctx context.Context, b store.Blob, id string) (int, error) {
	n := 0
	err := b.List(ctx, store.RunKey(id, "")+"/", func(store.Info) error {
		n++
		return nil
	})
	return n, err
}

// rmDeleter deletes runs and what they left outside the store.
type rmDeleter struct {
	o    *rmOptions
	runs store.Runs
	// selected are the runs this rm deletes; known holds the manifests read so far.
	selected map[string]bool
	known    map[string]*store.Manifest
	// refsInUse are the snapshot refs of the runs that stay, read on first need.
	refsInUse map[string]bool
}

// delete removes run c: its backend objects (with --backend-objects), its store objects, then
// its snapshot ref and work folder. Only the store's objects can fail it; the rest are warnings.
func (d *rmDeleter) delete(ctx context.Context, c *rmCandidate, r *rmRun) error {
	if d.o.backendObjects && c.m != nil && descriptorOf(c.m.Backend).Caps.DeletesRuns {
		n, err := d.deleteBackendObjects(ctx, c.m)
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("its %s objects were not deleted: %v", c.m.Backend, err))
		} else {
			r.BackendObjects = &n
		}
	}
	line := d.progress()
	n, err := d.runs.Delete(ctx, c.id, func(n int) { line.Draw(fmt.Sprintf("deleting run %s: %d objects", c.id, n)) })
	line.Clear()
	r.Objects = n
	if err != nil {
		return err
	}
	if c.m == nil {
		return nil
	}
	if c.m.Code != nil {
		ref, err := d.deleteSnapshotRef(ctx, c.m)
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("its code snapshot ref was not deleted: %v", err))
		}
		r.SnapshotRef = ref
	}
	if err := removeWorkFolder(ctx, d.runs.Blob, c.m); err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("its work folder was not removed: %v", err))
	}
	return nil
}

// progress returns the line that counts a run's objects as they go, drawn on a terminal only
// and never with -o json.
func (d *rmDeleter) progress() *progress.Line {
	ios := d.o.f.IO
	return progress.New(ios.ErrOut, d.o.output == "text" && ios.ErrTTY)
}

func (d *rmDeleter) deleteBackendObjects(ctx context.Context, m *store.Manifest) (int, error) {
	b, err := openBackend(ctx, d.o.f, d.runs.Blob, m.Backend, d.o.settings.over(m.Backend, m.Options.Backend))
	if err != nil {
		return 0, err
	}
	jd, ok := b.(runner.RunDeleter)
	if !ok {
		return 0, fmt.Errorf("backend %s cannot delete a run's objects", m.Backend)
	}
	return jd.DeleteRun(ctx, m.RunID)
}

// deleteSnapshotRef deletes the ref that kept m's code snapshot in its repository, when the
// repository is on this machine, the ref still points at the snapshot and no run that stays uses
// it ('jikken reproduce' records the snapshot of the run it reproduces). It returns the ref it
// deleted, or "".
func (d *rmDeleter) deleteSnapshotRef(ctx context.Context, m *store.Manifest) (string, error) {
	ref, repo := m.Code.Ref, m.Code.Repo
	if ref == "" || !strings.HasPrefix(ref, ghost.SnapshotRefPrefix) || repo == "" || m.Code.Commit == "" {
		return "", nil // a clean tree is kept by its commit, not by a ref of jikken's
	}
	if st, err := os.Stat(repo); err != nil || !st.IsDir() {
		return "", nil
	}
	inUse, err := d.snapshotRefsInUse(ctx)
	if err != nil {
		return "", err
	}
	if inUse[ref] {
		return "", nil
	}
	git := gitexec.Client{Dir: repo}
	cur, err := git.Run(ctx, "rev-parse", "--verify", "-q", ref)
	if err != nil || strings.TrimSpace(string(cur)) != m.Code.Commit {
		return "", nil // gone already, or no longer the run's snapshot
	}
	if _, err := git.Run(ctx, "update-ref", "-d", ref, m.Code.Commit); err != nil {
		return "", fmt.Errorf("in %s: %w", repo, err)
	}
	return ref, nil
}

// snapshotRefsInUse reads the snapshot refs of every run that this rm does not delete.
func (d *rmDeleter) snapshotRefsInUse(ctx context.Context) (map[string]bool, error) {
	if d.refsInUse != nil {
		return d.refsInUse, nil
	}
	ids, err := d.runs.RunIDs(ctx)
	if err != nil {
		return nil, err
	}
	inUse := map[string]bool{}
	for _, id := range ids {
		if d.selected[id] {
			continue
		}
		m, ok := d.known[id]
		if !ok {
			if m, err = d.runs.Manifest(ctx, id); err != nil && errors.Is(err, store.ErrNotFound) {
				continue
			} else if err != nil {
				return nil, fmt.Errorf("check which runs use the snapshot: %w", err)
			}
		}
		if m != nil && m.Code != nil && m.Code.Ref != "" {
			inUse[m.Code.Ref] = true
		}
	}
	d.refsInUse = inUse
	return inUse, nil
}

// removeWorkFolder removes the run's folder of attempts, runner log and code copies, which a
// runner that was killed leaves behind; code copies are git worktrees of the repository and
// are unregistered there.
func removeWorkFolder(ctx context.Context, b store.Blob, m *store.Manifest) error {
	dir := filepath.Join(workRoot(b), m.RunID)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if m.Code != nil {
		for _, e := range ents {
			if e.IsDir() && (e.Name() == "code" || strings.HasPrefix(e.Name(), "code-")) {
				_ = ghost.Release(ctx, *m.Code, filepath.Join(dir, e.Name()))
			}
		}
	}
	return os.RemoveAll(dir)
}
