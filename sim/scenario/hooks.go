package scenario

import (
	"fmt"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/extender"
	"github.com/jikken-dev/jikken/sim/remote"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

func (b *builder) extenders() ([]scheduler.Extender, error) {
	var out []scheduler.Extender
	for i, x := range b.sc.Scheduler.Extenders {
		f := fmt.Sprintf("scheduler.extenders[%d]", i)
		timeout, err := duration(f+".httpTimeout", x.HTTPTimeout, 0)
		if err != nil {
			return nil, err
		}
		cfg := extender.Config{URLPrefix: x.URLPrefix, FilterVerb: x.FilterVerb, PrioritizeVerb: x.PrioritizeVerb,
			BindVerb: x.BindVerb, PreemptVerb: x.PreemptVerb, Weight: x.Weight, NodeCacheCapable: x.NodeCacheCapable,
			Ignorable: x.Ignorable, HTTPTimeout: timeout.Duration()}
		for _, m := range x.ManagedResources {
			cfg.ManagedResources = append(cfg.ManagedResources, m.Name)
			if _, err := b.names.Index(m.Name); err != nil {
				return nil, fmt.Errorf("%s.managedResources: %w", f, err)
			}
		}
		e, err := extender.New(cfg, b.names)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func (b *builder) remoteScheduler() (sim.Scheduler, error) {
	r := b.sc.Scheduler.Remote
	if r == nil || r.URL == "" {
		return nil, fmt.Errorf("scheduler.remote.url: profile remote needs the scheduler service's URL")
	}
	s, err := remote.NewScheduler(r.URL, 0)
	if err != nil {
		return nil, fmt.Errorf("scheduler.remote.url: %w", err)
	}
	return s, nil
}

func (b *builder) remoteSubmitter(f string, r *RemoteSource) (sim.Submitter, error) {
	s, err := remote.NewSubmitter(r.URL, 0, b.names)
	if err != nil {
		return nil, fmt.Errorf("%s.url: %w", f, err)
	}
	return s, nil
}
