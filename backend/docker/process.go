package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/host"
	"github.com/jikken-dev/jikken/runner"
)

// maxReruns is how many times an attempt is started again in its container after the engine
// was restarted under it.
const maxReruns = 3

// process is one attempt's container.
type process struct {
	b              *Backend
	a              *runner.Attempt
	img            *image
	health         *experiment.Health
	hasHealthcheck bool
	nets           []string
	id             string
	// input is the archive copied into the container before each start (see inputArchive).
	input []byte

	// since is the engine's start time of the current run of the container, for its logs.
	since string
	// leader is the pid of the container's init on this host (0: unknown), which leads its
	// process group.
	leader   int
	logsDone chan error
	stopping atomic.Bool
	done     chan struct{}
}

var (
	_ runner.Process   = (*process)(nil)
	_ runner.Healthier = (*process)(nil)
)

func (p *process) Handle() string { return handle(p.id) }

// GroupLeader implements runner.GroupLeader: the container's init, as the engine started it on
// this host (0 when unknown; a container started again after an engine restart keeps its first).
func (p *process) GroupLeader() int { return p.leader }

// ImageDigest is the digest of the image the container runs, recorded with the trial.
func (p *process) ImageDigest() string { return p.img.digest }

// HasHealthCheck implements runner.HealthChecked: the trial's health or the image's HEALTHCHECK.
func (p *process) HasHealthCheck() bool { return p.hasHealthcheck }

// start starts the container.
func (p *process) start(ctx context.Context) error {
	return p.b.engine(ctx, func() error {
		_, err := p.b.api.ContainerStart(ctx, p.id, client.ContainerStartOptions{})
		return err
	})
}

// streamLogs follows the container's output into StdoutPath and StderrPath until it ends.
func (p *process) streamLogs() {
	p.logsDone <- p.copyLogs(context.Background(), true)
}

func (p *process) copyLogs(ctx context.Context, follow bool) error {
	stdout, err := os.Create(p.a.StdoutPath)
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr, err := os.Create(p.a.StderrPath)
	if err != nil {
		return err
	}
	defer stderr.Close()
	rc, err := p.b.api.ContainerLogs(ctx, p.id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: follow, Since: p.since})
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = stdcopy.StdCopy(stdout, stderr, rc)
	return err
}

// Wait implements runner.Process: it waits for the container to end (riding out an engine
// restart), makes sure its logs are complete, copies its outputs out, and removes it.
func (p *process) Wait() runner.Exit {
	exit := p.watch()
	watched := exit.Err == nil
	select {
	case <-p.logsDone:
	case <-time.After(30 * time.Second):
	}
	// The followed stream shows the output while the container runs, but it may miss the end:
	// Docker 20.10's follow drops a last line without a newline now and then, and a stream
	// breaks when the engine restarts. Read the logs again, whole, into the same files (a
	// reader following them keeps its place: the start is the same).
	if err := p.copyLogs(context.Background(), false); err != nil && exit.Err == nil {
		exit.Err = fmt.Errorf("read the container's logs: %w", err)
	}
	// A container that could not be watched to its end may be gone or half-run: its outputs
	// are not worth a wait for the engine.
	if watched {
		if err := p.collectOutputs(context.Background()); err != nil {
			exit.Err = err
		}
	}
	p.discard()
	close(p.done)
	return exit
}

// discard removes the container and lets go of its networks.
func (p *process) discard() {
	ctx := context.Background()
	err := p.b.engine(ctx, func() error {
		_, err := p.b.api.ContainerRemove(ctx, p.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		return err
	})
	if err != nil && !cerrdefs.IsNotFound(err) {
		p.b.log.Warn("remove container", "trial", p.a.Trial.Name, "container", p.id, "err", err)
	}
	p.b.releaseNetworks(p.nets, p.a.RunID)
}

// watch waits for the container to exit. When the engine goes away meanwhile it waits for the
// engine to return; a container the restart killed is started again with fresh outputs.
func (p *process) watch() runner.Exit {
	ctx := context.Background()
	for reruns := 0; ; {
		code, err := p.waitExit(ctx)
		if err == nil && (code == 0 || p.stopping.Load()) {
			return p.exit(ctx, code)
		}
		if err == nil && !p.b.goingAway(ctx, time.Second) {
			return p.exit(ctx, code)
		}
		if cerrdefs.IsNotFound(err) {
			return runner.Exit{Code: -1, Err: fmt.Errorf("container %s of %s was removed while it ran", p.id, p.a.Trial.Name)}
		}
		p.b.log.Warn("docker engine went away while a trial ran; waiting for it", "trial", p.a.Trial.Name, "err", err)
		if werr := p.b.waitEngine(ctx, time.Now().Add(p.b.engineWait)); werr != nil {
			return runner.Exit{Code: -1, Err: fmt.Errorf("watch container %s: %w", p.id, werr)}
		}
		st, err := p.inspect(ctx)
		switch {
		case cerrdefs.IsNotFound(err):
			return runner.Exit{Code: -1, Err: fmt.Errorf("container %s of %s was removed while the engine was away", p.id, p.a.Trial.Name)}
		case err != nil:
			return runner.Exit{Code: -1, Err: fmt.Errorf("container %s after the engine restarted: %w", p.id, err)}
		case st.State.Running:
			continue
		case st.State.ExitCode == 0 || p.stopping.Load() || reruns == maxReruns:
			return p.exitOf(st)
		}
		reruns++
		if err := p.rerun(ctx); err != nil {
			return runner.Exit{Code: -1, Err: fmt.Errorf("start %s again after the engine restarted: %w", p.a.Trial.Name, err)}
		}
	}
}

// waitExit waits for the container to stop running and returns its exit code, or the error
// that cut the wait short.
func (p *process) waitExit(ctx context.Context) (int, error) {
	res := p.b.api.ContainerWait(ctx, p.id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case r := <-res.Result:
		if r.Error != nil && r.Error.Message != "" {
			return 0, errors.New(r.Error.Message)
		}
		return int(r.StatusCode), nil
	case err := <-res.Error:
		return 0, err
	}
}

// rerun starts the container again with an empty output folder.
func (p *process) rerun(ctx context.Context) error {
	if err := p.copyIn(ctx); err != nil {
		return err
	}
	<-p.logsDone
	if err := p.start(ctx); err != nil {
		return err
	}
	// The logs of the earlier run stay with the engine; the attempt's files get this one's.
	if st, err := p.inspect(ctx); err == nil {
		p.since = st.State.StartedAt
	}
	go p.streamLogs()
	return nil
}

func (p *process) inspect(ctx context.Context) (container.InspectResponse, error) {
	var res client.ContainerInspectResult
	err := p.b.engine(ctx, func() (err error) {
		res, err = p.b.api.ContainerInspect(ctx, p.id, client.ContainerInspectOptions{})
		return err
	})
	if err == nil && res.Container.State == nil {
		err = errors.New("the engine reported no state")
	}
	return res.Container, err
}

// exit reports how the container ended; a non-zero code is explained from its state.
func (p *process) exit(ctx context.Context, code int) runner.Exit {
	if code == 0 {
		return runner.Exit{}
	}
	st, err := p.inspect(ctx)
	if err != nil {
		return runner.Exit{Code: code}
	}
	return p.exitOf(st)
}

func (p *process) exitOf(st container.InspectResponse) runner.Exit {
	e := runner.Exit{Code: st.State.ExitCode}
	if e.Code == 137 && !st.State.OOMKilled && !p.stopping.Load() {
		// docker kill, or an engine reclaiming its host, not the runner: the trial did
		// nothing wrong.
		e.Interrupted = runner.Preempted
	}
	switch {
	case st.State.OOMKilled:
		e.Reason = "out of memory"
		if m := p.a.Trial.Resources.Memory; m > 0 {
			e.Reason = "out of memory (limit " + host.FormatBytes(m) + ")"
		}
	case st.State.Error != "":
		e.Reason = st.State.Error
	}
	return e
}

// Stop implements runner.Process: SIGTERM (or the image's stop signal), SIGKILL after grace.
func (p *process) Stop(grace time.Duration) error { return p.StopWith("", grace) }

// StopWith implements runner.Warner: the engine sends signal ("USR1"; "" for the image's stop
// signal), then SIGKILL after grace (the stop timeout).
func (p *process) StopWith(signal string, grace time.Duration) error {
	p.stopping.Store(true)
	secs := int((grace + time.Second - 1) / time.Second)
	opts := client.ContainerStopOptions{Timeout: &secs}
	if signal != "" {
		opts.Signal = "SIG" + signal
	}
	ctx := context.Background()
	err := p.b.engine(ctx, func() error {
		_, err := p.b.api.ContainerStop(ctx, p.id, opts)
		return err
	})
	if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsNotModified(err) {
		return fmt.Errorf("stop container %s: %w", p.id, err)
	}
	return nil
}

// WaitHealthy implements runner.Healthier: the container's healthcheck (the trial's command
// probe, or the image's own) reports healthy, or the trial's TCP probe connects to the
// container's address, until the runner's deadline.
func (p *process) WaitHealthy(ctx context.Context) error {
	interval := 200 * time.Millisecond
	if h := p.health; h != nil && h.Interval > 0 {
		interval = min(interval, time.Duration(h.Interval))
	}
	return runner.PollHealthy(ctx, p.a.Trial.Name, p.done, interval, p.healthy)
}

// WatchLiveness implements runner.LivenessWatcher: the check of WaitHealthy, every interval
// once it has passed, until runner.FailureThreshold checks in a row fail. (An image's or a
// command's healthcheck is the engine's, which counts its own retries: its "unhealthy" then
// stands for a few more checks.)
func (p *process) WatchLiveness(ctx context.Context) error {
	interval := 200 * time.Millisecond
	if h := p.health; h != nil && h.Interval > 0 {
		interval = max(interval, time.Duration(h.Interval))
	}
	if err := runner.PollLiveness(ctx, p.a.Trial.Name, p.done, interval, p.healthy); err != nil {
		return err
	}
	return fmt.Errorf("%d checks in a row failed%s", runner.FailureThreshold, p.describeCheck())
}

// describeCheck names the check WatchLiveness runs, for its error.
func (p *process) describeCheck() string {
	switch h := p.health; {
	case h != nil && h.TCP != "":
		return " (tcp " + h.TCP + ")"
	case h != nil && h.HTTP != "":
		return " (http " + h.HTTP + ")"
	}
	return " (the container's healthcheck)"
}

func (p *process) healthy(ctx context.Context) (bool, error) {
	st, err := p.inspect(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, err
	}
	if !st.State.Running {
		return false, fmt.Errorf("%s: %w", p.a.Trial.Name, runner.ErrAttemptEnded)
	}
	if p.health != nil && p.health.TCP != "" {
		return p.dial(ctx, st), nil
	}
	if p.health != nil && p.health.HTTP != "" {
		return p.get(ctx, st), nil
	}
	if !p.hasHealthcheck {
		return true, nil
	}
	// "unhealthy" is not final: the engine keeps probing, and a later pass makes it healthy.
	h := st.State.Health
	return h != nil && h.Status == container.Healthy, nil
}

// get runs an HTTP probe against the container's address on each of its networks: the URL's
// host names the container's side (as a tcp probe's does), so it is replaced by the address.
func (p *process) get(ctx context.Context, st container.InspectResponse) bool {
	u, err := url.Parse(p.health.HTTP)
	if err != nil || st.NetworkSettings == nil {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	for _, ep := range st.NetworkSettings.Networks {
		if ep == nil || !ep.IPAddress.IsValid() {
			continue
		}
		v := *u
		v.Host = net.JoinHostPort(ep.IPAddress.String(), port)
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := runner.ProbeHTTP(pctx, v.String())
		cancel()
		if err == nil {
			return true
		}
	}
	return false
}

// dial tries the TCP probe's port on each of the container's addresses.
func (p *process) dial(ctx context.Context, st container.InspectResponse) bool {
	_, port, err := net.SplitHostPort(p.health.TCP)
	if err != nil {
		port = p.health.TCP
	}
	if _, err := strconv.Atoi(port); err != nil || st.NetworkSettings == nil {
		return false
	}
	for _, ep := range st.NetworkSettings.Networks {
		if ep == nil || !ep.IPAddress.IsValid() {
			continue
		}
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ep.IPAddress.String(), port))
		if err == nil {
			c.Close()
			return true
		}
	}
	return false
}
