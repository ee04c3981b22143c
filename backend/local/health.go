//go:build unix

package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/jikken-dev/jikken/runner"
)

// probeTimeout bounds one probe, so a probe that hangs (a command waiting on a dead server)
// does not hold the check past the next interval forever.
const probeTimeout = 10 * time.Second

// WaitHealthy implements runner.Healthier with the trial's tcp, http or cmd probe, every
// interval (default 200ms), until it passes, the attempt ends or ctx is done.
func (p *process) WaitHealthy(ctx context.Context) error {
	if p.health == nil {
		return nil
	}
	return runner.PollHealthy(ctx, p.trial, p.done, p.interval(), func(ctx context.Context) (bool, error) {
		return p.probe(ctx) == nil, nil
	})
}

// WatchLiveness implements runner.LivenessWatcher: the same probe, every interval, until
// runner.FailureThreshold fail in a row.
func (p *process) WatchLiveness(ctx context.Context) error {
	if p.health == nil {
		<-ctx.Done()
		return ctx.Err()
	}
	var last error
	err := runner.PollLiveness(ctx, p.trial, p.done, p.interval(), func(ctx context.Context) (bool, error) {
		if last = p.probe(ctx); last != nil && ctx.Err() != nil {
			return false, ctx.Err()
		}
		return last == nil, nil
	})
	if err != nil {
		return err
	}
	return fmt.Errorf("%d probes in a row failed, the last: %w", runner.FailureThreshold, last)
}

func (p *process) interval() time.Duration {
	if d := time.Duration(p.health.Interval); d > 0 {
		return d
	}
	return 200 * time.Millisecond
}

// probe runs the check once; the error says why it failed.
func (p *process) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	switch {
	case p.health.TCP != "":
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", p.health.TCP)
		if err != nil {
			return fmt.Errorf("health check: %w", err)
		}
		c.Close()
		return nil
	case p.health.HTTP != "":
		return runner.ProbeHTTP(ctx, p.health.HTTP)
	}
	cmd := p.b.command(p.health.Cmd, p.dir)
	cmd.Dir, cmd.Env = p.dir, p.env
	// Its own group, killed whole when the probe runs out of time.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("health check %s: %w", p.health.Cmd, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer stop()
	if err := cmd.Wait(); err != nil {
		var exit interface{ ExitCode() int }
		if errors.As(err, &exit) {
			return fmt.Errorf("health check %s: exit status %d", p.health.Cmd, exit.ExitCode())
		}
		return fmt.Errorf("health check %s: %w", p.health.Cmd, err)
	}
	return nil
}
