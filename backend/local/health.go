//go:build unix

package local

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/jikken-dev/jikken/runner"
)

// probeTimeout bounds one probe, so a probe that hangs (a command waiting on a dead server)
// does not hold the check past the next interval forever.
const probeTimeout = 10 * time.Second

// WaitHealthy implements runner.Healthier with the trial's tcp or cmd probe, every interval
// (default 200ms), until it passes, the attempt ends or ctx is done.
func (p *process) WaitHealthy(ctx context.Context) error {
	if p.health == nil {
		return nil
	}
	interval := time.Duration(p.health.Interval)
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if p.probe(ctx) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return fmt.Errorf("%s: %w", p.trial, runner.ErrAttemptEnded)
		case <-tick.C:
		}
	}
}

func (p *process) probe(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if p.health.TCP != "" {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", p.health.TCP)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	cmd := p.b.command(p.health.Cmd, p.dir)
	cmd.Dir, cmd.Env = p.dir, p.env
	// Its own group, killed whole when the probe runs out of time.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return false
	}
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer stop()
	return cmd.Wait() == nil
}
