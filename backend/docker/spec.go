package docker

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"

	"github.com/jikken-dev/jikken/experiment"
)

// Labels put on every container and network the backend creates. Live, StopLive and the
// network clean-up find what belongs to a run by these, never by reading the experiment again.
const (
	LabelRun     = "dev.jikken.run"
	LabelTrial   = "dev.jikken.trial"
	LabelAttempt = "dev.jikken.attempt"
)

// Paths inside the container: the attempt's params.json is copied here before it starts and its
// output folder copied out after it ends (see files.go); JIKKEN_OUTPUT_DIR / JIKKEN_PARAMS
// point at them.
const (
	containerOutputDir = "/jikken/out"
	containerParams    = "/jikken/params.json"
	// containerCheckpoint is where the trial's checkpoint folder, which outlives attempts, is
	// mounted ($JIKKEN_CHECKPOINT_DIR).
	containerCheckpoint = "/jikken/checkpoint"
)

// shellMeta are characters that make a command need a shell.
const shellMeta = "|&;<>()$`\\\"'*?[]#~{}!\n\t"

// command is the container's Cmd for a trial command: nil keeps the image's own, an argv is
// used as it is, a shell string runs under /bin/sh -c when the image has a shell and is split
// into words when it has none and needs none.
func command(c experiment.Command, image string, hasShell bool) ([]string, error) {
	switch {
	case c.Argv != nil:
		return c.Argv, nil
	case c.Shell == "":
		return nil, nil
	case hasShell:
		return []string{"/bin/sh", "-c", c.Shell}, nil
	case needsShell(c.Shell):
		return nil, fmt.Errorf("cmd %q needs a shell, but image %s has no /bin/sh; give cmd as an array of arguments", c.Shell, image)
	default:
		return strings.Fields(c.Shell), nil
	}
}

// needsShell reports whether a shell string means something only a shell can do: expansions,
// redirections, several commands, variable assignments or builtins.
func needsShell(s string) bool {
	if strings.ContainsAny(s, shellMeta) {
		return true
	}
	f := strings.Fields(s)
	return len(f) > 0 && (strings.Contains(f[0], "=") || shellBuiltin[f[0]])
}

var shellBuiltin = map[string]bool{
	"cd": true, "exit": true, "export": true, "set": true, "unset": true, "source": true, ".": true,
	"ulimit": true, "umask": true, "exec": true, "eval": true, "alias": true, "trap": true, "wait": true,
}

// containerEnv is the attempt's environment with the two host paths of the trial interface
// rewritten to where they are in the container. It returns the host path of params.json.
func containerEnv(env []string) (out []string, paramsHost string) {
	out = make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "JIKKEN_OUTPUT_DIR":
			kv = k + "=" + containerOutputDir
		case "JIKKEN_CHECKPOINT_DIR":
			kv = k + "=" + containerCheckpoint
		case "JIKKEN_PARAMS":
			paramsHost = v
			kv = k + "=" + containerParams
		}
		out = append(out, kv)
	}
	return out, paramsHost
}

// portSpec is one published port: "8080", "9000:8080", "0.0.0.0:9000:8080", "[::1]:9000:8080",
// each optionally followed by "/udp" or "/tcp". The host address defaults to 127.0.0.1 so a
// trial's port is not opened to the network unless the experiment says so.
func portSpec(s string) (network.Port, network.PortBinding, error) {
	bad := func(why string) (network.Port, network.PortBinding, error) {
		return network.Port{}, network.PortBinding{}, fmt.Errorf("port %q: %s; write [HOST_IP:][HOST_PORT:]CONTAINER_PORT[/tcp|/udp]", s, why)
	}
	rest, proto, _ := strings.Cut(s, "/")
	if proto == "" {
		proto = "tcp"
	}
	if proto != "tcp" && proto != "udp" && proto != "sctp" {
		return bad("unknown protocol " + proto)
	}
	var ip, host, cport string
	if strings.HasPrefix(rest, "[") {
		end := strings.Index(rest, "]:")
		if end < 0 {
			return bad("unclosed [ in the host address")
		}
		ip, rest = rest[1:end], rest[end+2:]
		var ok bool
		host, cport, ok = strings.Cut(rest, ":")
		if !ok {
			return bad("a host address needs a host port")
		}
	} else {
		parts := strings.Split(rest, ":")
		switch len(parts) {
		case 1:
			cport = parts[0]
		case 2:
			host, cport = parts[0], parts[1]
		case 3:
			ip, host, cport = parts[0], parts[1], parts[2]
		default:
			return bad("too many colons")
		}
	}
	addr := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	if ip != "" {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			return bad("bad host address " + ip)
		}
		addr = a
	}
	if !validPort(cport) {
		return bad("bad container port " + strconv.Quote(cport))
	}
	if host != "" && !validPort(host) {
		return bad("bad host port " + strconv.Quote(host))
	}
	p, err := network.ParsePort(cport + "/" + proto)
	if err != nil {
		return bad(err.Error())
	}
	return p, network.PortBinding{HostIP: addr, HostPort: host}, nil
}

func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n < 65536
}

var volumeName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)

// volumeSpec is one mount: "SRC:DST[:ro|rw]" where SRC is a host path (absolute, or starting
// with ./ ../ or ~/, resolved against dir) for a bind mount or a name for a named volume, or a
// lone absolute DST for an anonymous volume removed with the container.
func volumeSpec(s, dir, home string) (mount.Mount, error) {
	bad := func(why string) (mount.Mount, error) {
		return mount.Mount{}, fmt.Errorf("volume %q: %s; write HOST_PATH:CONTAINER_PATH[:ro] or NAME:CONTAINER_PATH[:ro]", s, why)
	}
	parts := strings.Split(s, ":")
	readOnly := false
	if n := len(parts); n == 3 || (n == 2 && (parts[1] == "ro" || parts[1] == "rw")) {
		switch parts[n-1] {
		case "ro":
			readOnly = true
		case "rw":
		default:
			return bad("unknown mode " + strconv.Quote(parts[n-1]))
		}
		parts = parts[:n-1]
	}
	var src, dst string
	switch len(parts) {
	case 1:
		dst = parts[0]
	case 2:
		src, dst = parts[0], parts[1]
	default:
		return bad("too many colons")
	}
	if !strings.HasPrefix(dst, "/") {
		return bad("the container path must be absolute")
	}
	m := mount.Mount{Target: dst, ReadOnly: readOnly}
	switch {
	case src == "":
		m.Type = mount.TypeVolume
	case src == "~" || strings.HasPrefix(src, "~/"):
		m.Type, m.Source = mount.TypeBind, filepath.Join(home, strings.TrimPrefix(src, "~"))
	case filepath.IsAbs(src):
		m.Type, m.Source = mount.TypeBind, filepath.Clean(src)
	case src == "." || src == ".." || strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../"):
		m.Type, m.Source = mount.TypeBind, filepath.Join(dir, src)
	case volumeName.MatchString(src):
		m.Type, m.Source = mount.TypeVolume, src
	default:
		return bad("the source is neither a path (/abs, ./rel, ~/home) nor a volume name")
	}
	return m, nil
}

// resources turns a trial's resources into container limits. Memory swap is capped at the
// memory limit so a trial over its limit is killed instead of swapping. The GPU devices the
// runner assigned are asked for by id: a count alone makes the engine give devices 0..n-1, so
// every 1-GPU container would land on GPU 0. Without assigned devices (the runner knows no GPUs
// of this engine's host) a count is all there is to ask for.
func resources(r experiment.Resources, devices []string) container.Resources {
	var out container.Resources
	if r.CPU > 0 {
		out.NanoCPUs = int64(r.CPU * 1e9)
	}
	if r.Memory > 0 {
		out.Memory, out.MemorySwap = r.Memory, r.Memory
	}
	switch {
	case len(devices) > 0:
		out.DeviceRequests = []container.DeviceRequest{{Driver: "nvidia", DeviceIDs: devices, Capabilities: [][]string{{"gpu"}}}}
	case r.UsesGPU():
		out.DeviceRequests = []container.DeviceRequest{{Driver: "nvidia", Count: max(1, r.GPUs()), Capabilities: [][]string{{"gpu"}}}}
	}
	return out
}

// healthcheck turns a trial's command probe into the container's healthcheck. TCP probes are
// dialled from the host instead (see process.WaitHealthy), so they need no tool in the image.
func healthcheck(h *experiment.Health, image string, hasShell bool) (*container.HealthConfig, error) {
	if h == nil || h.Cmd.IsZero() {
		return nil, nil
	}
	var test []string
	switch {
	case h.Cmd.Argv != nil:
		test = append([]string{"CMD"}, h.Cmd.Argv...)
	case hasShell:
		test = []string{"CMD-SHELL", h.Cmd.Shell}
	default:
		argv, err := command(h.Cmd, image, false)
		if err != nil {
			return nil, fmt.Errorf("health: %w", err)
		}
		test = append([]string{"CMD"}, argv...)
	}
	interval := time.Duration(h.Interval)
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	return &container.HealthConfig{Test: test, Interval: interval, Timeout: max(interval, 5*time.Second), Retries: 3}, nil
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// containerName is a readable, unique name for an attempt's container.
func containerName(run, trial string, attempt int) string {
	return "jikken-" + unsafeName.ReplaceAllString(run+"-"+trial, "_") + "-" + strconv.Itoa(attempt)
}

// hostAlias is the name other containers on the trial's networks reach it by.
func hostAlias(trial string) string {
	a := strings.Trim(unsafeName.ReplaceAllString(trial, "-"), "-.")
	if len(a) > 63 {
		a = a[:63]
	}
	return a
}
