//go:build unix

package local

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/host"
	"github.com/jikken-dev/jikken/host/cgroup"
	"github.com/jikken-dev/jikken/runner"
)

// limitsOf are the limits a trial's resources ask the local backend to enforce.
func limitsOf(t experiment.Trial) cgroup.Limits {
	return cgroup.Limits{CPU: t.Resources.CPU, Memory: t.Resources.Memory}
}

// cgroups is this machine's cgroup manager, found once; the error says why there is none.
func (b *Backend) cgroups() (*cgroup.Manager, error) {
	b.cgOnce.Do(func() {
		b.cg, b.cgErr = cgroup.Detect(cgroup.Options{Root: b.CgroupRoot})
	})
	return b.cg, b.cgErr
}

// checkLimits refuses trials whose cpu or memory cannot be enforced here, unless NoEnforce.
func (b *Backend) checkLimits(trials []experiment.Trial) error {
	var limited []experiment.Trial
	for _, t := range trials {
		if !limitsOf(t).IsZero() {
			limited = append(limited, t)
		}
	}
	if len(limited) == 0 {
		return nil
	}
	_, err := b.cgroups()
	if err == nil {
		return nil
	}
	if b.NoEnforce {
		b.warnOnce.Do(func() {
			b.logger().Warn("resources.cpu and resources.memory are not enforced (--no-enforce)", "why", unavailable(err))
		})
		return nil
	}
	who := "trial " + limited[0].Name + " declares " + limitsString(limitsOf(limited[0]))
	if len(limited) > 1 {
		who = fmt.Sprintf("%d trials declare resources.cpu or resources.memory (%s: %s)", len(limited), limited[0].Name, limitsString(limitsOf(limited[0])))
	}
	return fmt.Errorf("%s, which the local backend enforces with cgroups, but %v; run jikken as root (cgroup v1), "+
		"or in a delegated cgroup v2 group (systemd-run --user --scope -p Delegate=yes jikken run ...), "+
		"or pass --no-enforce to run them without limits", who, unavailable(err))
}

// unavailable is the reason in a Detect error, lower-cased for the middle of a sentence.
func unavailable(err error) string {
	s := err.Error()
	if errors.Is(err, cgroup.ErrUnavailable) {
		s = "none can be made here: " + strings.TrimPrefix(s, cgroup.ErrUnavailable.Error()+": ")
	}
	return s
}

func limitsString(l cgroup.Limits) string {
	var parts []string
	if l.CPU > 0 {
		parts = append(parts, "cpu "+strconv.FormatFloat(l.CPU, 'f', -1, 64))
	}
	if l.Memory > 0 {
		parts = append(parts, "memory "+host.FormatBytes(l.Memory))
	}
	return strings.Join(parts, " and ")
}

// group makes the cgroup of an attempt whose trial declares cpu or memory; nil when it declares
// neither, or no cgroup can be made here and NoEnforce is set.
func (b *Backend) group(a *runner.Attempt) (*cgroup.Group, error) {
	l := limitsOf(a.Trial)
	if l.IsZero() {
		return nil, nil
	}
	if err := b.checkLimits([]experiment.Trial{a.Trial}); err != nil {
		return nil, err
	}
	m, err := b.cgroups()
	if err != nil {
		return nil, nil // NoEnforce: checkLimits let it through
	}
	g, err := m.Create(a.RunID, a.Trial.Name, a.N, l)
	if err != nil {
		return nil, fmt.Errorf("trial %s: %w", a.Trial.Name, err)
	}
	return g, nil
}

// oomReason is how an attempt that the OOM killer hit ended, as the Docker backend says it.
func oomReason(l cgroup.Limits) string {
	if l.Memory > 0 {
		return "out of memory (limit " + host.FormatBytes(l.Memory) + ")"
	}
	return "out of memory"
}

// finder is the cgroup manager that finds the groups of attempts: the one that makes them, or,
// where this process can make none, one that only finds them (a 'jikken kill' run outside
// the delegated group the runner ran in).
func (b *Backend) finder() (*cgroup.Manager, error) {
	if m, err := b.cgroups(); err == nil {
		return m, nil
	}
	return cgroup.Lookup(cgroup.Options{Root: b.CgroupRoot})
}

// attemptGroup finds the cgroup of one attempt of run, made by this runner or one that died.
func (b *Backend) attemptGroup(run, trial string, attempt int) *cgroup.Group {
	m, err := b.finder()
	if err != nil {
		return nil
	}
	groups, err := m.Find(run)
	if err != nil {
		return nil
	}
	for _, g := range groups {
		if g.Trial == trial && (attempt == 0 || g.Attempt == attempt) {
			return g
		}
	}
	return nil
}

// liveGroups adds to live the attempts of run whose cgroups still hold processes (one that
// cleared its environment included), removes the groups a dead runner left empty, and the run's
// folders once no group is left in them.
func (b *Backend) liveGroups(run string, live []runner.LiveTrial) []runner.LiveTrial {
	m, err := b.finder()
	if err != nil {
		return live
	}
	groups, err := m.Find(run)
	if err != nil {
		b.logger().Warn("find the cgroups of run", "run", run, "err", err)
		return live
	}
	for _, g := range groups {
		pids, err := g.Procs()
		if err != nil {
			continue
		}
		if len(pids) == 0 {
			if err := g.Remove(); err != nil {
				b.logger().Warn("remove a cgroup left by an earlier runner", "err", err)
			}
			continue
		}
		found := false
		for _, lt := range live {
			found = found || lt.Trial == g.Trial && lt.Attempt == g.Attempt
		}
		if !found {
			live = append(live, runner.LiveTrial{RunID: run, Trial: g.Trial, Attempt: g.Attempt, Handle: "pgid:" + strconv.Itoa(pids[0])})
		}
	}
	// The runner asks when a run starts and ends: the run's folders go when no group is left.
	if err := m.Prune(run); err != nil {
		b.logger().Warn("remove the cgroup folders of run", "run", run, "err", err)
	}
	return live
}

func (b *Backend) logger() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.New(slog.DiscardHandler)
}
