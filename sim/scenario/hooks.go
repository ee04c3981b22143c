package scenario

import (
	"fmt"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

func (b *builder) extenders() ([]scheduler.Extender, error) {
	if len(b.sc.Scheduler.Extenders) > 0 {
		return nil, fmt.Errorf("scheduler.extenders: not supported yet")
	}
	return nil, nil
}

func (b *builder) remoteScheduler() (sim.Scheduler, error) {
	return nil, fmt.Errorf("scheduler.profile: remote is not supported yet")
}

func (b *builder) remoteSubmitter(f string, _ *RemoteSource) (sim.Submitter, error) {
	return nil, fmt.Errorf("%s: not supported yet", f)
}
