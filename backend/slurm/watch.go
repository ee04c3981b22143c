package slurm

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/runner"
)

// watch adds p to the jobs the poller watches, starting the poller if it is not running.
func (b *Backend) watch(p *process) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.watched[p.id] = p
	if !b.watching {
		b.watching = true
		go b.poll()
	}
}

// poke makes the poller look now (a Stop wants its end seen soon).
func (b *Backend) poke() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// missedPolls is how many polls in a row a job may be missing from squeue before the backend
// asks scontrol about it once more and gives up.
const missedPolls = 3

// poll asks Slurm, with one squeue call per round whatever the number of jobs, how the
// watched jobs are doing, ends the processes of those that ended, and stops when none is left.
// The interval grows while nothing changes and while squeue fails (a busy controller), and
// drops back when something happens.
func (b *Backend) poll() {
	interval := b.cfg.Poll
	missing := map[string]int{}
	for {
		select {
		case <-b.kick:
		case <-time.After(interval):
		}
		b.mu.Lock()
		if len(b.watched) == 0 {
			b.watching = false
			b.mu.Unlock()
			return
		}
		runs := map[string]bool{}
		for _, p := range b.watched {
			runs[jobName(p.run)] = true
		}
		b.mu.Unlock()
		names := make([]string, 0, len(runs))
		for n := range runs {
			names = append(names, n)
		}
		sort.Strings(names)

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := b.slurm(ctx, "squeue", "-h", "-r", "-t", "all", "--name="+strings.Join(names, ","), "-O", squeueFormat)
		cancel()
		if err != nil {
			b.cfg.Log.Warn("slurm: squeue failed; trying again", "err", err, "in", interval)
			interval = min(2*interval, b.cfg.MaxPoll)
			continue
		}
		changed := b.update(parseSqueue(out), missing)
		if changed {
			interval = b.cfg.Poll
		} else {
			interval = min(interval+interval/2, b.cfg.MaxPoll)
		}
	}
}

// update applies one squeue listing to the watched jobs; it reports whether any ended or
// changed its pending reason.
func (b *Backend) update(jobs []jobState, missing map[string]int) bool {
	seen := map[string]jobState{}
	for _, j := range jobs {
		seen[j.ID] = j
	}
	b.mu.Lock()
	procs := make([]*process, 0, len(b.watched))
	for _, p := range b.watched {
		procs = append(procs, p)
	}
	b.mu.Unlock()

	changed := false
	// Pending reasons that changed, grouped: an array of 1,000 tasks waiting for resources is
	// one line, not 1,000.
	pending := map[string][]*process{}
	defer func() {
		for reason, ps := range pending {
			if len(ps) == 1 {
				b.cfg.Log.Info("trial pending", "trial", ps[0].trial, "job", ps[0].id, "reason", reason)
				continue
			}
			b.cfg.Log.Info("trials pending", "count", len(ps), "reason", reason, "first", ps[0].trial, "job", ps[0].id)
		}
	}()
	for _, p := range procs {
		j, ok := seen[p.id]
		if !ok {
			// Gone from squeue's listing: purged after MinJobAge, or a controller restart.
			missing[p.id]++
			if missing[p.id] < missedPolls {
				continue
			}
			j = jobState{ID: p.id}
		}
		delete(missing, p.id)
		switch {
		case j.State == "PENDING":
			// "None" is a job the scheduler has not looked at yet, not a reason to wait.
			reason := j.Reason
			if reason == "None" {
				reason = ""
			}
			if reason != p.reason {
				p.reason = reason
				if reason != "" {
					pending[reason] = append(pending[reason], p)
				}
				p.tell(reason)
				changed = true
			}
			continue
		case j.State != "" && !terminal[j.State]:
			if p.reason != "" {
				// Out of the queue: its timeout starts now, and its end is soon worth a look.
				p.reason = ""
				p.tell("")
				changed = true
			}
			continue
		}
		b.finish(p, j)
		changed = true
	}
	return changed
}

// tell passes a pending reason to the runner, which records it for 'jikken status'.
func (p *process) tell(reason string) {
	if p.queued != nil {
		p.queued(reason)
	}
}

// finish ends p with its exit status: the one squeue listed, or, for a job squeue no longer
// lists, scontrol's (or accounting's).
func (b *Backend) finish(p *process, j jobState) {
	if !j.HasExit {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := b.slurm(ctx, "scontrol", "-o", "show", "job", p.id)
		if full, ok := parseScontrol(out); err == nil && ok && terminal[full.State] {
			j = full
		} else if acct, ok := b.sacct(ctx, p.id); ok {
			j = acct
		}
	}
	var e runner.Exit
	switch {
	case j.State == "":
		e = runner.Exit{Code: -1, Err: fmt.Errorf("slurm: job %s left the controller's memory before its end was seen (MinJobAge), and accounting does not know it", p.id)}
	default:
		e = exitOf(j, p.memory)
	}
	b.mu.Lock()
	delete(b.watched, p.id)
	b.mu.Unlock()
	p.end(e)
}

// sacct asks the accounting database how a job ended, where the cluster keeps one.
func (b *Backend) sacct(ctx context.Context, id string) (jobState, bool) {
	out, err := b.slurm(ctx, "sacct", "-n", "-P", "-X", "-j", id, "-o", "State,ExitCode")
	if err != nil {
		return jobState{}, false
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	state, code, ok := strings.Cut(line, "|")
	if !ok {
		return jobState{}, false
	}
	j, _ := parseScontrol("JobId=" + id + " JobState=" + strings.TrimSpace(state) + " ExitCode=" + code)
	return j, terminal[j.State]
}
