package runner

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/store"
)

// sweep clears what an earlier runner of the run left behind when it was killed: temporary
// files in the store, and the folders of attempts it never collected. Their logs are kept in
// the store under the attempt's number (attempts/<n>/), so 'jikken logs --attempt' still shows
// why an attempt ended; their other outputs belonged to an attempt that did not finish, and go.
// The folders of adopted attempts (trial -> attempt), which go on, stay.
func (r *Runner) sweep(ctx context.Context, run string, prior map[string]*store.TrialRecord, adopted map[string]int) {
	if n, err := r.Runs.SweepTemp(ctx, run); err != nil {
		r.Log.Warn("remove temporary files left by an earlier runner", "err", err)
	} else if n > 0 {
		r.Log.Info("removed temporary files left by an earlier runner", "count", n)
	}
	if r.WorkRoot == "" {
		return
	}
	root := filepath.Join(r.WorkRoot, run)
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if isSpare(e.Name()) {
			removeAttemptDir(filepath.Join(root, e.Name()))
			continue
		}
		if trial, n, ok := strings.Cut(e.Name(), "@"); ok {
			if num, err := strconv.Atoi(n); err == nil && num > 0 && adopted[trial] != num {
				r.salvage(ctx, run, trial, num, filepath.Join(root, e.Name()))
			}
			continue
		}
		// The layout before attempt folders were named <trial>@<n>: <trial>/<n>/.
		if _, isTrial := prior[e.Name()]; !isTrial {
			continue
		}
		sub, _ := os.ReadDir(filepath.Join(root, e.Name()))
		for _, s := range sub {
			if num, err := strconv.Atoi(s.Name()); err == nil && num > 0 && s.IsDir() {
				r.salvage(ctx, run, e.Name(), num, filepath.Join(root, e.Name(), s.Name()))
			}
		}
		_ = os.Remove(filepath.Join(root, e.Name()))
	}
}

// salvage stores the logs of an uncollected attempt folder and removes the folder.
func (r *Runner) salvage(ctx context.Context, run, trial string, n int, dir string) {
	ok := true
	for _, name := range []string{"stdout.log", "stderr.log"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		key := store.TrialKey(run, trial, path.Join("attempts", strconv.Itoa(n), name))
		if err := store.PutFile(ctx, r.Runs.Blob, key, p); err != nil {
			r.Log.Warn("keep the logs of an attempt an earlier runner left", "trial", trial, "attempt", n, "err", err)
			ok = false
		}
	}
	if ok {
		_ = os.RemoveAll(dir)
	}
}
