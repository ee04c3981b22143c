package runner

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jikken-dev/jikken/checkpoint"
	"github.com/jikken-dev/jikken/host"
)

// checkpointState is the version of a trial's checkpoint an attempt starts from: in its folder
// on this host, and in the store (where an executor keeps it).
type checkpointState struct {
	local, stored int
}

// prepareCheckpoint gives the attempt its trial's checkpoint folder, which outlives attempts
// (and runners: the trial writes it in place), and the variables that tell the trial about it.
// An executor next to the trial (OutputStorer) replaces the folder with one it restores from
// the store, and the variables with its own.
func (a *attempt) prepareCheckpoint(ctx context.Context, att *Attempt) (checkpointState, error) {
	var ck checkpointState
	r, t := a.d.r, &att.Trial
	cp := t.CheckpointSettings()
	if r.WorkRoot != "" {
		f := checkpoint.FolderFor(r.WorkRoot, att.RunID, t.Name)
		st, err := f.Prepare()
		if err != nil {
			return ck, err
		}
		ck.local = st.Version
		att.CheckpointDir = f.Dir
		att.Env = append(att.Env, "JIKKEN_CHECKPOINT_DIR="+f.Dir)
		if st.Files > 0 {
			att.Env = append(att.Env, "JIKKEN_RESUMED=1")
		}
	}
	att.Env = append(att.Env,
		"JIKKEN_CHECKPOINT_EVERY="+time.Duration(cp.Every).String(),
		"JIKKEN_CHECKPOINT_BEFORE="+time.Duration(cp.Before).String(),
		"JIKKEN_CHECKPOINT_MAX="+strconv.FormatInt(cp.MaxSize, 10))
	m, err := checkpoint.Remote{Blob: r.Runs.Blob, Prefix: checkpoint.Key(att.RunID, t.Name)}.Latest(ctx)
	if err != nil {
		return ck, err
	}
	if m != nil {
		ck.stored = m.Version
	}
	return ck, nil
}

// checkpointAfter reads the trial's checkpoint once the attempt ended: its newest version and
// when it was saved, from the store when an executor kept it there (stored), else from its
// folder here, with a note when the folder is over its cap.
func (a *attempt) checkpointAfter(ctx context.Context, att *Attempt, stored bool) (int, time.Time, []string) {
	if stored {
		m, err := checkpoint.Remote{Blob: a.d.r.Runs.Blob, Prefix: checkpoint.Key(att.RunID, att.Trial.Name)}.Latest(ctx)
		if err != nil {
			return 0, time.Time{}, []string{"checkpoint: " + err.Error()}
		}
		if m == nil {
			return 0, time.Time{}, nil
		}
		return m.Version, m.Saved, nil
	}
	if att.CheckpointDir == "" {
		return 0, time.Time{}, nil
	}
	st, err := checkpoint.Folder{Dir: att.CheckpointDir}.Observe()
	if err != nil {
		return st.Version, st.At, []string{"checkpoint: " + err.Error()}
	}
	var notes []string
	if max := att.Trial.CheckpointSettings().MaxSize; st.Size > max {
		notes = append(notes, fmt.Sprintf("checkpoint folder %s holds %s, over its cap of %s (checkpoint.max_size)",
			att.CheckpointDir, host.FormatBytes(st.Size), host.FormatBytes(max)))
	}
	return st.Version, st.At, notes
}
