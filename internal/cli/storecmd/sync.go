package storecmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/store"
)

// NewCmd returns the `store` command group.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Move runs between stores (a folder, s3://bucket/prefix)",
	}
	cmd.AddCommand(newSyncCmd(f))
	return cmd
}

type syncOptions struct {
	f        *cmdutil.Factory
	run      string
	from, to string
	jobs     int
	force    bool
	output   string
}

func newSyncCmd(f *cmdutil.Factory) *cobra.Command {
	o := &syncOptions{f: f}
	cmd := &cobra.Command{
		Use:   "sync RUN --to STORE [--from STORE]",
		Short: "Copy a run from one store to another",
		Long: `Sync copies every file of RUN (manifest, state, trial records, metrics, results, logs,
artifacts) from the store --from (default: --store, $JIKKEN_STORE or ./.jikken) to the store
--to. Files the target already holds unchanged are not sent again, so sync can be repeated and
an interrupted sync resumed. The run's manifest is written last: in the target the run appears
in 'jikken runs' only once all its files are there.

A run that a live runner still holds (its lock is present) is refused unless --force; sync it
again when it has ended. S3 endpoints and credentials come from the AWS environment variables
(see docs/store.md); both stores may be S3 if they share them.`,
		Example: `  jikken store sync latest --to s3://team-results/jikken
  jikken store sync 20261122-1030-sweep --from s3://team-results/jikken --to ./.jikken`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.run = args[0]
			if o.from == "" {
				o.from = f.StoreURL
			}
			if o.to == "" {
				return cmdutil.UsageError("store sync: --to is required (a folder or s3://bucket/prefix)")
			}
			if o.jobs < 1 {
				return cmdutil.UsageError("store sync: -j must be at least 1")
			}
			return runSync(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.from, "from", "", "store to copy from (default: the --store value)")
	fl.StringVar(&o.to, "to", "", "store to copy to (required)")
	fl.IntVarP(&o.jobs, "jobs", "j", 8, "how many files are copied at once")
	fl.BoolVar(&o.force, "force", false, "copy a run even though a runner holds its lock")
	cmdutil.FormatFlag(cmd, &o.output, "text", "json")
	return cmd
}

func runSync(ctx context.Context, o *syncOptions) error {
	src, err := store.Open(ctx, o.from)
	if err != nil {
		return err
	}
	dst, err := store.Open(ctx, o.to)
	if err != nil {
		return err
	}
	if src.Location() == dst.Location() {
		return cmdutil.UsageError("store sync: --from and --to are the same store (%s)", src.Location())
	}
	runs := store.Runs{Blob: src}
	id, err := runs.Resolve(ctx, o.run)
	if err != nil {
		return err
	}
	if li, err := runs.LockHolder(ctx, id); err != nil {
		return err
	} else if li != nil && !o.force {
		return fmt.Errorf("store sync: run %s is held by a runner (pid %d on %s since %s); sync it when the run has ended, or pass --force to copy it as it is now",
			id, li.PID, li.Host, li.Started.Format("2006-01-02 15:04:05Z07:00"))
	}
	st, err := SyncRun(ctx, src, dst, id, o.jobs)
	if err != nil {
		return err
	}
	if o.output == "json" {
		return cmdutil.WriteJSON(o.f.IO.Out, st)
	}
	fmt.Fprintf(o.f.IO.Out, "synced run %s from %s to %s: %d files copied (%s), %d unchanged\n",
		st.Run, st.From, st.To, st.Copied, humanBytes(st.Bytes), st.Unchanged)
	return nil
}

// SyncStats says what SyncRun did.
type SyncStats struct {
	Run       string `json:"run"`
	From      string `json:"from"`
	To        string `json:"to"`
	Copied    int    `json:"copied"`
	Unchanged int    `json:"unchanged"`
	Bytes     int64  `json:"bytes"`
}

// compareLimit is the size up to which an object present in the target is compared by content;
// above it equal sizes count as unchanged (artifacts and logs are written once per attempt).
const compareLimit = 4 << 20

// SyncRun copies the files of run from src to dst, jobs at a time, skipping those dst already
// holds. Trial records follow their trial's other files, and the manifest comes last, so that a
// reader of dst never sees a run, or a finished trial, whose files are missing. The run's lock
// is not copied.
func SyncRun(ctx context.Context, src, dst store.Blob, run string, jobs int) (*SyncStats, error) {
	st := &SyncStats{Run: run, From: src.Location(), To: dst.Location()}
	prefix := store.RunKey(run, "") + "/"
	var files []store.Info
	err := src.List(ctx, prefix, func(in store.Info) error {
		if in.Key != store.RunKey(run, "lock") {
			files = append(files, in)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store sync: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("store sync: run %s has no files in %s", run, src.Location())
	}
	// Three waves: data files, then records (trial.json, state.json), then the manifest.
	waves := make([][]store.Info, 3)
	for _, in := range files {
		switch path.Base(in.Key) {
		case "manifest.json":
			if in.Key == store.RunKey(run, "manifest.json") {
				waves[2] = append(waves[2], in)
				continue
			}
		case "trial.json", "state.json":
			waves[1] = append(waves[1], in)
			continue
		}
		waves[0] = append(waves[0], in)
	}
	var mu sync.Mutex
	for _, wave := range waves {
		err := forEach(ctx, wave, jobs, func(in store.Info) error {
			copied, err := copyObject(ctx, src, dst, in)
			mu.Lock()
			defer mu.Unlock()
			if copied {
				st.Copied++
				st.Bytes += in.Size
			} else if err == nil {
				st.Unchanged++
			}
			return err
		})
		if err != nil {
			return st, fmt.Errorf("store sync %s to %s: %w", run, dst.Location(), err)
		}
	}
	return st, nil
}

// forEach calls fn for every item, at most jobs at once, and returns the errors joined (sorted
// so the message does not depend on timing).
func forEach(ctx context.Context, items []store.Info, jobs int, fn func(store.Info) error) error {
	var (
		g    errgroup.Group
		mu   sync.Mutex
		errs []error
	)
	g.SetLimit(jobs)
	for _, in := range items {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := fn(in); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// copyObject copies one object unless dst holds the same, and reports whether it copied.
func copyObject(ctx context.Context, src, dst store.Blob, in store.Info) (bool, error) {
	same, err := sameObject(ctx, src, dst, in)
	if err != nil || same {
		return false, err
	}
	rc, err := src.Get(ctx, in.Key)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	if err := dst.Put(ctx, in.Key, rc, in.Size); err != nil {
		return false, err
	}
	return true, nil
}

func sameObject(ctx context.Context, src, dst store.Blob, in store.Info) (bool, error) {
	got, err := dst.Stat(ctx, in.Key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case got.Size != in.Size:
		return false, nil
	case in.Size > compareLimit:
		return true, nil
	}
	a, err := store.ReadAll(ctx, src, in.Key)
	if err != nil {
		return false, err
	}
	b, err := store.ReadAll(ctx, dst, in.Key)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	return bytes.Equal(a, b), nil
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
