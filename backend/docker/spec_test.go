package docker

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"

	"github.com/jikken-dev/jikken/experiment"
)

func TestPortSpec(t *testing.T) {
	loopback := netip.MustParseAddr("127.0.0.1")
	tests := []struct {
		in       string
		port     string
		hostIP   netip.Addr
		hostPort string
		err      string
	}{
		{in: "8080", port: "8080/tcp", hostIP: loopback},
		{in: "9000:8080", port: "8080/tcp", hostIP: loopback, hostPort: "9000"},
		{in: "0.0.0.0:9000:8080", port: "8080/tcp", hostIP: netip.MustParseAddr("0.0.0.0"), hostPort: "9000"},
		{in: "[::1]:9000:53/udp", port: "53/udp", hostIP: netip.MustParseAddr("::1"), hostPort: "9000"},
		{in: "9000:8080/sctp", port: "8080/sctp", hostIP: loopback, hostPort: "9000"},
		{in: "", err: "bad container port"},
		{in: "70000", err: "bad container port"},
		{in: "x:8080", err: "bad host port"},
		{in: "1.2.3:80:80", err: "bad host address"},
		{in: "8080/icmp", err: "unknown protocol"},
		{in: "a:b:c:d", err: "too many colons"},
		{in: "[::1:80", err: "unclosed"},
	}
	for _, tt := range tests {
		p, b, err := portSpec(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("portSpec(%q) error = %v, want one containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("portSpec(%q): %v", tt.in, err)
			continue
		}
		if p.String() != tt.port || b.HostIP != tt.hostIP || b.HostPort != tt.hostPort {
			t.Errorf("portSpec(%q) = %s %s:%s, want %s %s:%s", tt.in, p, b.HostIP, b.HostPort, tt.port, tt.hostIP, tt.hostPort)
		}
	}
}

func TestVolumeSpec(t *testing.T) {
	tests := []struct {
		in   string
		want mount.Mount
		err  string
	}{
		{in: "/srv/data:/data", want: mount.Mount{Type: mount.TypeBind, Source: "/srv/data", Target: "/data"}},
		{in: "/srv/data:/data:ro", want: mount.Mount{Type: mount.TypeBind, Source: "/srv/data", Target: "/data", ReadOnly: true}},
		{in: "./in:/in", want: mount.Mount{Type: mount.TypeBind, Source: "/exp/in", Target: "/in"}},
		{in: "../shared:/s:rw", want: mount.Mount{Type: mount.TypeBind, Source: "/shared", Target: "/s"}},
		{in: "~/cache:/c", want: mount.Mount{Type: mount.TypeBind, Source: "/home/u/cache", Target: "/c"}},
		{in: "cache:/c", want: mount.Mount{Type: mount.TypeVolume, Source: "cache", Target: "/c"}},
		{in: "/scratch", want: mount.Mount{Type: mount.TypeVolume, Target: "/scratch"}},
		{in: "/scratch:ro", want: mount.Mount{Type: mount.TypeVolume, Target: "/scratch", ReadOnly: true}},
		{in: "cache:data", err: "must be absolute"},
		{in: "/a:/b:rx", err: "unknown mode"},
		{in: "/a:/b:ro:x", err: "too many colons"},
		{in: "bad name!:/x", err: "neither a path"},
	}
	for _, tt := range tests {
		got, err := volumeSpec(tt.in, "/exp", "/home/u")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("volumeSpec(%q) error = %v, want one containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("volumeSpec(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("volumeSpec(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestCommand(t *testing.T) {
	tests := []struct {
		cmd      experiment.Command
		hasShell bool
		want     []string
		err      string
	}{
		{cmd: experiment.Command{}, want: nil},
		{cmd: experiment.Command{Argv: []string{"true"}}, want: []string{"true"}},
		{cmd: experiment.Command{Shell: "echo $X > f"}, hasShell: true, want: []string{"/bin/sh", "-c", "echo $X > f"}},
		{cmd: experiment.Command{Shell: "train --lr 0.1"}, hasShell: true, want: []string{"/bin/sh", "-c", "train --lr 0.1"}},
		{cmd: experiment.Command{Shell: "train --lr 0.1"}, want: []string{"train", "--lr", "0.1"}},
		{cmd: experiment.Command{Shell: "echo $X"}, err: "has no /bin/sh"},
		{cmd: experiment.Command{Shell: "exit 3"}, err: "has no /bin/sh"},
		{cmd: experiment.Command{Shell: "A=1 train"}, err: "has no /bin/sh"},
	}
	for _, tt := range tests {
		got, err := command(tt.cmd, "img", tt.hasShell)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("command(%q) error = %v, want one containing %q", tt.cmd, err, tt.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tt.want) {
			t.Errorf("command(%q, shell=%v) = %q, %v; want %q", tt.cmd, tt.hasShell, got, err, tt.want)
		}
	}
}

func TestContainerEnv(t *testing.T) {
	env, params := containerEnv([]string{"JIKKEN_RUN_ID=r", "JIKKEN_PARAMS=/w/1/params.json", "JIKKEN_OUTPUT_DIR=/w/1/out", "LR=0.1"})
	want := []string{"JIKKEN_RUN_ID=r", "JIKKEN_PARAMS=/jikken/params.json", "JIKKEN_OUTPUT_DIR=/jikken/out", "LR=0.1"}
	if !cmp.Equal(env, want) || params != "/w/1/params.json" {
		t.Errorf("containerEnv = %q, %q; want %q, /w/1/params.json", env, params, want)
	}
}

func TestResources(t *testing.T) {
	got := resources(experiment.Resources{CPU: 1.5, Memory: 64 << 20, GPU: 2}, []string{"GPU-b", "GPU-d"})
	want := container.Resources{NanoCPUs: 1_500_000_000, Memory: 64 << 20, MemorySwap: 64 << 20,
		DeviceRequests: []container.DeviceRequest{{Driver: "nvidia", DeviceIDs: []string{"GPU-b", "GPU-d"}, Capabilities: [][]string{{"gpu"}}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	// Without devices from the runner, a count.
	got = resources(experiment.Resources{GPU: 0.5}, nil)
	if want := []container.DeviceRequest{{Driver: "nvidia", Count: 1, Capabilities: [][]string{{"gpu"}}}}; !cmp.Equal(want, got.DeviceRequests) {
		t.Errorf("a share without devices: %+v", got.DeviceRequests)
	}
	if diff := cmp.Diff(container.Resources{}, resources(experiment.Resources{}, nil)); diff != "" {
		t.Errorf("no resources asked, limits set:\n%s", diff)
	}
}

func TestHealthcheck(t *testing.T) {
	h := &experiment.Health{Cmd: experiment.Command{Shell: "wget -q -O /dev/null http://127.0.0.1/"}, Interval: experiment.Duration(time.Second)}
	got, err := healthcheck(h, "img", true)
	if err != nil {
		t.Fatal(err)
	}
	want := &container.HealthConfig{Test: []string{"CMD-SHELL", h.Cmd.Shell}, Interval: time.Second, Timeout: 5 * time.Second, Retries: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("healthcheck (-want +got):\n%s", diff)
	}
	if got, _ := healthcheck(h, "img", false); !cmp.Equal(got.Test, []string{"CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1/"}) {
		t.Errorf("healthcheck without a shell = %q", got.Test)
	}
	if got, err := healthcheck(&experiment.Health{TCP: "localhost:6379"}, "img", true); got != nil || err != nil {
		t.Errorf("a TCP probe became a container healthcheck: %v, %v", got, err)
	}
}

func TestNames(t *testing.T) {
	if got := containerName("20261122-sweep-ab12", "t/1 x", 2); got != "jikken-20261122-sweep-ab12-t_1_x-2" {
		t.Errorf("containerName = %q", got)
	}
	if got := hostAlias("cache_1"); got != "cache_1" {
		t.Errorf("hostAlias = %q", got)
	}
	if got := hostAlias("-a b-"); got != "a-b" {
		t.Errorf("hostAlias = %q", got)
	}
}
