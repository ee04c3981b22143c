package docker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/docker"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

// createRecorder is a unix socket in front of the engine that keeps the bodies of
// /containers/create requests.
type createRecorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *createRecorder) serve(t *testing.T) string {
	t.Helper()
	engine := strings.TrimPrefix(api.DaemonHost(), "unix://")
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", engine)
		}},
	}
	sock := filepath.Join(t.TempDir(), "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/containers/create") {
			body, _ := io.ReadAll(r.Body)
			c.mu.Lock()
			c.bodies = append(c.bodies, body)
			c.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		proxy.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "unix://" + sock
}

// The devices the runner assigns reach the engine by id (a count would give every 1-GPU
// container GPU 0), and an engine without GPU support refuses them with a clear error.
func TestGPUTrialsAskTheEngineForTheirOwnDevices(t *testing.T) {
	needEngine(t)
	rec := &createRecorder{}
	b, err := docker.New(docker.Options{Host: rec.serve(t)})
	if err != nil {
		t.Fatal(err)
	}
	tr := experiment.Trial{Name: "train", Image: busybox, Cmd: experiment.Command{Shell: "true"}, Resources: experiment.Resources{GPU: 1}}
	a, err := runner.NewAttempt(filepath.Join(t.TempDir(), "a"), "gpu-run-"+randomHex(), tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.Workdir, a.Devices = t.TempDir(), []string{"GPU-00000000-0000-4000-8000-000000000002"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := b.Start(ctx, a)
	if err == nil {
		p.Stop(0)
		p.Wait()
		t.Fatal("an engine without the NVIDIA runtime started a GPU container")
	}
	if !strings.Contains(err.Error(), "the docker engine cannot give it 1 GPU") || !strings.Contains(err.Error(), "install the NVIDIA container toolkit") {
		t.Errorf("error = %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bodies) == 0 {
		t.Fatal("no create request reached the engine")
	}
	var create struct {
		HostConfig struct {
			DeviceRequests []struct {
				Driver       string
				Count        int
				DeviceIDs    []string
				Capabilities [][]string
			}
		}
	}
	if err := json.Unmarshal(rec.bodies[len(rec.bodies)-1], &create); err != nil {
		t.Fatal(err)
	}
	dr := create.HostConfig.DeviceRequests
	if len(dr) != 1 || dr[0].Count != 0 || len(dr[0].DeviceIDs) != 1 || dr[0].DeviceIDs[0] != a.Devices[0] || dr[0].Driver != "nvidia" {
		t.Fatalf("the create request asks for %+v, want DeviceIDs [%s]", dr, a.Devices[0])
	}
}
