package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/host"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/core"
)

// hostFit is how a plan fits this host, for 'jikken validate --host'.
type hostFit struct {
	Host        *host.Inventory `json:"host"`
	TrialMemory int64           `json:"trial_memory"`
	Kinds       []fitKind       `json:"kinds"`
	Unfit       []string        `json:"unfit,omitempty"`
}

// fitKind is a set of trials that ask for the same resources.
type fitKind struct {
	Trials    []string             `json:"trials"`
	Resources experiment.Resources `json:"resources"`
	// AtOnce is how many of them the host can run together (-1: no limit from resources).
	AtOnce int    `json:"at_once"`
	Limit  string `json:"limit,omitempty"`
}

func fitOnHost(ctx context.Context, trials []experiment.Trial, hs hostSettings) (*hostFit, error) {
	capacity, _, inv, err := thisHostCapacity(ctx, hs)
	if err != nil {
		return nil, err
	}
	fit := &hostFit{Host: inv, TrialMemory: capacity.Memory}
	if err := runner.CheckFit(trials, capacity); err != nil {
		fit.Unfit = core.Unfit(trials, capacity)
	}
	byReq := map[experiment.Resources]int{}
	for _, t := range trials {
		k, ok := byReq[t.Resources]
		if !ok {
			k = len(fit.Kinds)
			byReq[t.Resources] = k
			n, limit := atOnce(t.Resources, capacity)
			fit.Kinds = append(fit.Kinds, fitKind{Resources: t.Resources, AtOnce: n, Limit: limit})
		}
		fit.Kinds[k].Trials = append(fit.Kinds[k].Trials, t.Name)
	}
	return fit, nil
}

// defaultJobsFor is the -j of a run that sets none, when the plan makes one right: what the
// trials' declared resources hold at once on capacity (jobsForHost), else, for a file in combu's
// form, every trial, since combu starts each container as soon as its dependencies are up and a
// combu file's servers (nginx, a data loader) would otherwise hold the cap and keep the rest
// from ever starting.
func defaultJobsFor(exp *experiment.Experiment, c *core.Capacity) (int, bool) {
	if n, ok := jobsForHost(exp.Trials, c); ok {
		return n, true
	}
	if exp.Form == "combu" && len(exp.Trials) > 0 {
		return len(exp.Trials), true
	}
	return 0, false
}

// jobsForHost is the -j a plan's declared resources make right on capacity (nil: trials run
// elsewhere): the most trials of one kind it holds at once, when every trial declares cores,
// GPUs or a MIG instance, as resources then cap what runs together. Memory alone does not
// count: trials that declare only memory may still load every core.
func jobsForHost(trials []experiment.Trial, c *core.Capacity) (int, bool) {
	if c == nil || len(trials) == 0 {
		return 0, false
	}
	most := 0
	seen := map[experiment.Resources]bool{}
	for _, t := range trials {
		r := t.Resources
		if r.CPU <= 0 && r.GPU <= 0 && r.MIG == "" {
			return 0, false
		}
		if seen[r] {
			continue
		}
		seen[r] = true
		n, _ := atOnce(r, c)
		most = max(most, n)
	}
	return max(most, 1), true
}

// atOnce is how many trials asking for r the capacity holds together, and what stops more.
func atOnce(r experiment.Resources, c *core.Capacity) (int, string) {
	n, limit := math.MaxInt, ""
	bound := func(m int, why string) {
		if m < n {
			n, limit = m, why
		}
	}
	if r.CPU > 0 && c.CPU > 0 {
		bound(int(c.CPU/r.CPU+1e-9), "cores")
	}
	if r.Memory > 0 && c.Memory > 0 {
		bound(int(c.Memory/r.Memory), "memory")
	}
	whole, migs := 0, map[string]int{}
	for _, d := range c.GPUs {
		if d.MIG == "" {
			whole++
		} else {
			migs[d.MIG]++
		}
	}
	switch {
	case r.GPU >= 1:
		bound(whole/int(r.GPU), "GPUs")
	case r.GPU > 0:
		bound(whole*int(1/r.GPU+1e-9), "GPUs")
	case r.MIG != "":
		bound(migs[r.MIG], "MIG instances "+r.MIG)
	}
	if n == math.MaxInt {
		return -1, ""
	}
	return n, limit
}

func (f *hostFit) print(w io.Writer) {
	inv := f.Host
	fmt.Fprintf(w, "\nthis host: %g cores, %s of memory (trials may use %s; the rest is kept for the system), %d GPU units\n",
		inv.CPUs, host.FormatBytes(inv.Memory), host.FormatBytes(f.TrialMemory), len(inv.GPUs))
	for _, g := range inv.GPUs {
		desc := strings.TrimSpace(strings.Join([]string{g.Name, g.MIG}, " "))
		if g.MemoryMiB > 0 {
			desc += fmt.Sprintf(" %d MiB", g.MemoryMiB)
		}
		fmt.Fprintf(w, "  GPU %s  %s  %s\n", g.Index, g.ID(), strings.TrimSpace(desc))
	}
	for _, n := range inv.Notes {
		fmt.Fprintf(w, "  (%s)\n", n)
	}
	fmt.Fprintln(w, "\nhow the plan fits (the cap -j applies on top):")
	kinds := append([]fitKind(nil), f.Kinds...)
	sort.SliceStable(kinds, func(i, j int) bool { return len(kinds[i].Trials) > len(kinds[j].Trials) })
	for _, k := range kinds {
		names := strings.Join(k.Trials, ", ")
		if len(k.Trials) > 3 {
			names = fmt.Sprintf("%s, %s ... (%d trials)", k.Trials[0], k.Trials[1], len(k.Trials))
		}
		switch {
		case k.AtOnce < 0:
			fmt.Fprintf(w, "  %s: ask for nothing; only -j limits them\n", names)
		case k.AtOnce == 0:
			fmt.Fprintf(w, "  %s: %s: never fits (%s)\n", names, resourcesString(k.Resources), k.Limit)
		default:
			fmt.Fprintf(w, "  %s: %s: %d at once (%s)\n", names, resourcesString(k.Resources), k.AtOnce, k.Limit)
		}
	}
	if len(f.Unfit) > 0 {
		fmt.Fprintln(w, "\ncannot run here:")
		for _, u := range f.Unfit {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
}

// never is the error of a plan with trials the host can never run (nil: every trial fits, or
// the host was not asked).
func (f *hostFit) never() error {
	if f == nil || len(f.Unfit) == 0 {
		return nil
	}
	return fmt.Errorf("%d of the plan's trials can never run on this host (listed above); lower their resources or run them elsewhere (--backend)", len(f.Unfit))
}

func resourcesString(r experiment.Resources) string {
	var parts []string
	if r.CPU > 0 {
		parts = append(parts, fmt.Sprintf("cpu %g", r.CPU))
	}
	if r.Memory > 0 {
		parts = append(parts, "memory "+host.FormatBytes(r.Memory))
	}
	if r.GPU > 0 {
		parts = append(parts, fmt.Sprintf("gpu %g", r.GPU))
	}
	if r.MIG != "" {
		parts = append(parts, "mig "+r.MIG)
	}
	return strings.Join(parts, ", ") + " each"
}
