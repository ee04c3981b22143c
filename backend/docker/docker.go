package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

// Backend runs each attempt as one container on a Docker engine. Make one with New.
type Backend struct {
	api *client.Client
	log *slog.Logger
	// engineWait is how long a call waits for an engine that went away (restarted) to return.
	engineWait time.Duration
	// bind: the attempt's files are bind mounts of the runner's folders, not copies (Files).
	bind bool

	mu       sync.Mutex
	images   map[string]*image
	networks map[string]*userNetwork
}

var (
	_ runner.Backend = (*Backend)(nil)
	_ runner.Checker = (*Backend)(nil)
)

// Options configure a Backend. The zero value talks to the engine named by DOCKER_HOST (or the
// local socket), negotiating the API version with it.
type Options struct {
	Log *slog.Logger
	// Host overrides DOCKER_HOST ("unix:///var/run/docker.sock", "tcp://host:2376").
	Host string
	// EngineWait is how long calls wait for an engine that stopped answering (it is being
	// restarted) before they fail; default 2 minutes.
	EngineWait time.Duration
	// Files says how an attempt's params and outputs travel (default FilesAuto).
	Files Files
}

// Files says how an attempt's params.json and output folder travel between the runner and its
// container.
type Files string

const (
	// FilesAuto binds when the engine is on this machine (a unix socket) and the runner is
	// root, who owns whatever a container writes; it copies otherwise.
	FilesAuto Files = ""
	// FilesCopy copies them through the engine's archive endpoint: works with a remote engine
	// and leaves files the runner owns, at two archive requests per attempt (about 0.27 s on
	// Docker 20.10, see docs/docker.md).
	FilesCopy Files = "copy"
	// FilesBind bind-mounts the runner's folders: the cheapest, but only for an engine on this
	// machine, and a container running as another user leaves files of that user.
	FilesBind Files = "bind"
)

// New returns a Backend. It does not contact the engine; Check does.
func New(o Options) (*Backend, error) {
	opts := []client.Opt{client.FromEnv}
	if o.Host != "" {
		opts = append(opts, client.WithHost(o.Host))
	}
	api, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w; check DOCKER_HOST", err)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.EngineWait <= 0 {
		o.EngineWait = 2 * time.Minute
	}
	var bind bool
	switch o.Files {
	case FilesAuto:
		bind = strings.HasPrefix(api.DaemonHost(), "unix://") && os.Geteuid() == 0
	case FilesBind:
		if !strings.HasPrefix(api.DaemonHost(), "unix://") {
			return nil, fmt.Errorf("docker files %q: the engine at %s is not on this machine, so the runner's folders cannot be mounted; use %q", o.Files, api.DaemonHost(), FilesCopy)
		}
		bind = true
	case FilesCopy:
	default:
		return nil, fmt.Errorf("docker files %q: use %q or %q", o.Files, FilesCopy, FilesBind)
	}
	return &Backend{api: api, log: o.Log, engineWait: o.EngineWait, bind: bind,
		images: map[string]*image{}, networks: map[string]*userNetwork{}}, nil
}

// Client is the Engine API client the backend uses (tests use it to look at what it made).
func (b *Backend) Client() *client.Client { return b.api }

// Name implements runner.Backend.
func (b *Backend) Name() string { return "docker" }

// Plan implements runner.Backend: an earlier runner's containers are stopped, not adopted.
func (b *Backend) Plan([]experiment.Trial) {}

// Check implements runner.Checker: the engine answers, and trials asking for GPUs get them.
func (b *Backend) Check(ctx context.Context, trials []experiment.Trial) error {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := b.api.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return fmt.Errorf("docker engine at %s is unreachable: %w; start it (service docker start) or point DOCKER_HOST at a running engine", b.api.DaemonHost(), err)
	}
	for _, t := range trials {
		if t.Resources.UsesGPU() {
			if err := b.checkGPU(ctx); err != nil {
				return fmt.Errorf("trial %s asks for %s: %w", t.Name, gpuString(t.Resources), err)
			}
			break
		}
	}
	return nil
}

// checkGPU looks for what `docker run --gpus` needs: the NVIDIA runtime registered with the
// engine, or (for a local engine) the NVIDIA container toolkit's hook and a GPU.
func (b *Backend) checkGPU(ctx context.Context) error {
	info, err := b.api.Info(ctx, client.InfoOptions{})
	if err != nil {
		return fmt.Errorf("ask the docker engine about its runtimes: %w", err)
	}
	if _, ok := info.Info.Runtimes["nvidia"]; ok {
		return nil
	}
	if strings.HasPrefix(b.api.DaemonHost(), "unix://") {
		_, hook := exec.LookPath("nvidia-container-runtime-hook")
		_, smi := exec.LookPath("nvidia-smi")
		if hook == nil && smi == nil {
			return nil
		}
	}
	return errors.New("the docker engine has no GPU support (no nvidia runtime, no NVIDIA container toolkit, no nvidia-smi); run on a GPU host with the NVIDIA container toolkit, or drop resources.gpu")
}

// Start implements runner.Backend: it creates the attempt's container, copies its params and
// an empty output folder into it, starts it and begins streaming its logs.
func (b *Backend) Start(ctx context.Context, a *runner.Attempt) (runner.Process, error) {
	t := a.Trial
	if t.Image == "" {
		return nil, fmt.Errorf("trial %s has no image to run on the docker backend; set image", t.Name)
	}
	img, err := b.image(ctx, t.Image)
	if err != nil {
		return nil, err
	}
	needShell := needsShell(t.Cmd.Shell) || (t.Health != nil && t.Health.Cmd.Shell != "")
	hasShell := needShell && img.shell(ctx, b)
	cmd, err := command(t.Cmd, t.Image, hasShell)
	if err != nil {
		return nil, err
	}
	health, err := healthcheck(t.Health, t.Image, hasShell)
	if err != nil {
		return nil, err
	}
	env, paramsHost := containerEnv(a.Env)
	var input []byte
	if !b.bind {
		if input, err = attemptInput(paramsHost); err != nil {
			return nil, fmt.Errorf("trial %s: %w", t.Name, err)
		}
	}
	labels := map[string]string{}
	for k, v := range t.Labels {
		labels[k] = v
	}
	labels[LabelRun], labels[LabelTrial], labels[LabelAttempt] = a.RunID, t.Name, strconv.Itoa(a.N)

	hc := &container.HostConfig{Resources: resources(t.Resources, a.Devices), PortBindings: network.PortMap{}}
	if a.CheckpointDir != "" && b.bind {
		// Its user may not be the runner's: let it write there, attempt after attempt.
		if err := os.Chmod(a.CheckpointDir, 0o777); err != nil {
			return nil, fmt.Errorf("open the checkpoint folder to the container: %w", err)
		}
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: a.CheckpointDir, Target: containerCheckpoint})
	}
	if b.bind {
		// The trial's user may not be the runner's: let it write its outputs.
		if err := os.Chmod(a.OutputDir, 0o777); err != nil {
			return nil, fmt.Errorf("open output folder to the container: %w", err)
		}
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: a.OutputDir, Target: containerOutputDir})
		if paramsHost != "" {
			hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: paramsHost, Target: containerParams, ReadOnly: true})
		}
	}
	cfg := &container.Config{
		Image: img.id, Cmd: cmd, Env: env, Labels: labels, Healthcheck: health,
		Hostname: hostAlias(t.Name), ExposedPorts: network.PortSet{},
	}
	for _, p := range t.Ports {
		port, bind, err := portSpec(p)
		if err != nil {
			return nil, fmt.Errorf("trial %s: %w", t.Name, err)
		}
		cfg.ExposedPorts[port] = struct{}{}
		hc.PortBindings[port] = append(hc.PortBindings[port], bind)
	}
	home, _ := os.UserHomeDir()
	for _, v := range t.Volumes {
		m, err := volumeSpec(v, a.Workdir, home)
		if err != nil {
			return nil, fmt.Errorf("trial %s: %w", t.Name, err)
		}
		hc.Mounts = append(hc.Mounts, m)
	}

	nets, err := b.acquireNetworks(ctx, a.RunID, t.Networks)
	if err != nil {
		return nil, err
	}
	var netCfg *network.NetworkingConfig
	if len(nets) > 0 {
		// The engine attaches one network at create; the others are connected before start.
		hc.NetworkMode = container.NetworkMode(nets[0])
		netCfg = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			nets[0]: {Aliases: aliases(nets[0], t.Name)},
		}}
	}
	p := &process{b: b, a: a, img: img, health: t.Health, hasHealthcheck: health != nil || img.healthcheck,
		nets: nets, input: input, done: make(chan struct{}), logsDone: make(chan error, 1)}
	if err := b.create(ctx, p, cfg, hc, netCfg); err != nil {
		b.releaseNetworks(nets, a.RunID)
		return nil, err
	}
	if err := p.copyIn(ctx); err != nil {
		p.discard()
		return nil, err
	}
	for _, n := range nets[min(1, len(nets)):] {
		err := b.engine(ctx, func() error {
			_, err := b.api.NetworkConnect(ctx, n, client.NetworkConnectOptions{Container: p.id,
				EndpointConfig: &network.EndpointSettings{Aliases: aliases(n, t.Name)}})
			return err
		})
		if err != nil {
			p.discard()
			return nil, fmt.Errorf("connect %s to network %s: %w", t.Name, n, err)
		}
	}
	if err := p.start(ctx); err != nil {
		p.discard()
		return nil, startError(t, err)
	}
	if b.OnThisHost() {
		// The container's init on this host, for GPU leases; an engine elsewhere shows a pid
		// that means nothing here.
		if st, err := p.inspect(ctx); err == nil {
			p.leader = st.State.Pid
		}
	}
	go p.streamLogs()
	return p, nil
}

// aliases are the names a trial is reached by on a network: the engine allows them only on
// networks users made.
func aliases(network, trial string) []string {
	if builtinNetwork(network) {
		return nil
	}
	return []string{hostAlias(trial)}
}

// create makes the container, replacing a leftover of the same attempt (an earlier runner of
// this run died between create and remove).
func (b *Backend) create(ctx context.Context, p *process, cfg *container.Config, hc *container.HostConfig, nc *network.NetworkingConfig) error {
	name := containerName(p.a.RunID, p.a.Trial.Name, p.a.N)
	for try := 0; ; try++ {
		var res client.ContainerCreateResult
		err := b.engine(ctx, func() (err error) {
			res, err = b.api.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: hc, NetworkingConfig: nc})
			return err
		})
		if err == nil {
			p.id = res.ID
			return nil
		}
		if cerrdefs.IsConflict(err) && try == 0 {
			_, _ = b.api.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			continue
		}
		return fmt.Errorf("create container for %s: %w", p.a.Trial.Name, err)
	}
}

// startError explains the engine's refusals people can act on.
func startError(t experiment.Trial, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "could not select device driver"):
		return fmt.Errorf("start %s: the docker engine cannot give it %s (%w); install the NVIDIA container toolkit on a GPU host, or drop resources.gpu", t.Name, gpuString(t.Resources), err)
	case strings.Contains(msg, "bind source path does not exist"):
		return fmt.Errorf("start %s: %w; create the host folder or fix the trial's volumes", t.Name, err)
	case strings.Contains(msg, "exec: ") && (strings.Contains(msg, "no such file") || strings.Contains(msg, "not found")):
		return fmt.Errorf("start %s: %w; the program of the trial's cmd is not in image %s", t.Name, err, t.Image)
	case strings.Contains(msg, "port is already allocated") || strings.Contains(msg, "address already in use"):
		return fmt.Errorf("start %s: %w; choose another host port in the trial's ports", t.Name, err)
	}
	return fmt.Errorf("start %s: %w", t.Name, err)
}

// engine runs call, and while the engine does not answer or fails on its way down (it is
// restarting) waits for it and tries again, up to the backend's engine wait.
func (b *Backend) engine(ctx context.Context, call func() error) error {
	deadline := time.Now().Add(b.engineWait)
	// The wait between tries is waitEngine's: try again as soon as the engine answers.
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		err := call()
		if err == nil || time.Now().After(deadline) {
			return struct{}{}, backoff.Permanent(err)
		}
		serverFault := cerrdefs.IsInternal(err) || cerrdefs.IsUnavailable(err) || cerrdefs.IsUnknown(err)
		// While it stops its containers (up to their stop timeout) a stopping engine still
		// answers pings but fails calls: give it that long to go.
		if !client.IsErrConnectionFailed(err) && !(serverFault && b.goingAway(ctx, 15*time.Second)) {
			return struct{}{}, backoff.Permanent(err)
		}
		b.log.Warn("docker engine unreachable; waiting for it", "err", err)
		if werr := b.waitEngine(ctx, deadline); werr != nil {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(&backoff.ZeroBackOff{}), backoff.WithMaxElapsedTime(0))
	return err
}

// goingAway tells an engine on its way down (it stops its containers and fails calls when it
// shuts down) from one that is up: it stops answering within the window.
func (b *Backend) goingAway(ctx context.Context, window time.Duration) bool {
	for end := time.Now().Add(window); time.Now().Before(end); {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := b.api.Ping(pctx, client.PingOptions{})
		cancel()
		if err != nil {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// waitEngine polls the engine until it answers or the deadline passes.
func (b *Backend) waitEngine(ctx context.Context, deadline time.Time) error {
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := b.api.Ping(pctx, client.PingOptions{})
		return struct{}{}, err
	}, backoff.WithBackOff(backoff.NewConstantBackOff(250*time.Millisecond)), backoff.WithMaxElapsedTime(time.Until(deadline)))
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("docker engine did not come back within %s: %w", b.engineWait, err)
	}
	return err
}

// Live implements runner.Backend: every container labelled with the run, running or not (a
// stopped one is a leftover that StopLive removes).
func (b *Backend) Live(ctx context.Context, runID string) ([]runner.LiveTrial, error) {
	var res client.ContainerListResult
	err := b.engine(ctx, func() (err error) {
		res, err = b.api.ContainerList(ctx, client.ContainerListOptions{All: true,
			Filters: client.Filters{}.Add("label", LabelRun+"="+runID)})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list containers of run %s: %w", runID, err)
	}
	out := make([]runner.LiveTrial, 0, len(res.Items))
	for _, c := range res.Items {
		n, _ := strconv.Atoi(c.Labels[LabelAttempt])
		out = append(out, runner.LiveTrial{RunID: runID, Trial: c.Labels[LabelTrial], Attempt: n, Handle: handle(c.ID)})
	}
	return out, nil
}

// DeleteRun removes everything the engine keeps of a run: every container labelled with it,
// running or not, and then its networks (also one created just before a runner died, which no
// container holds). It returns how many containers it removed.
func (b *Backend) DeleteRun(ctx context.Context, runID string) (int, error) {
	live, err := b.Live(ctx, runID)
	if err != nil {
		return 0, err
	}
	for i, lt := range live {
		if err := b.StopLive(ctx, lt); err != nil {
			return i, err
		}
	}
	return len(live), b.removeRunNetworks(ctx, runID)
}

// StopLive implements runner.Backend: it stops and removes the container, then removes the
// run's networks nothing uses any more.
func (b *Backend) StopLive(ctx context.Context, lt runner.LiveTrial) error {
	id := strings.TrimPrefix(lt.Handle, "docker:")
	if id == "" || id == lt.Handle {
		return fmt.Errorf("bad docker handle %q", lt.Handle)
	}
	err := b.engine(ctx, func() error {
		grace := 5
		_, err := b.api.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &grace})
		if err != nil && !cerrdefs.IsNotFound(err) {
			return err
		}
		_, err = b.api.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		return err
	})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove container %s of trial %s: %w", id, lt.Trial, err)
	}
	return b.removeRunNetworks(ctx, lt.RunID)
}

func handle(id string) string {
	if len(id) > 12 {
		id = id[:12]
	}
	return "docker:" + id
}

// gpuString says what GPUs a trial asks for.
func gpuString(r experiment.Resources) string {
	switch {
	case r.MIG != "":
		return "a MIG instance " + r.MIG
	case r.GPU == 1:
		return "1 GPU"
	case r.GPU < 1:
		return fmt.Sprintf("a %g share of a GPU", r.GPU)
	}
	return fmt.Sprintf("%g GPUs", r.GPU)
}

// OnThisHost reports whether the engine runs on this machine (a unix socket): its containers
// then share this host's CPUs, memory and GPUs, which the runner can count.
func (b *Backend) OnThisHost() bool { return strings.HasPrefix(b.api.DaemonHost(), "unix://") }
