package docker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/jikken-dev/jikken/store"
)

// TestImageHealthcheckIsWaitedFor: a service whose image has a HEALTHCHECK (and whose trial
// declares no health) is healthy only when that check passes. The client fetches from the
// service, which serves only after 2 s: started too early, it fails.
func TestImageHealthcheckIsWaitedFor(t *testing.T) {
	needEngine(t)
	ctx := context.Background()
	tag := "jikken-test-healthcheck:" + randomHex()
	if err := buildFrom(ctx, busybox, "HEALTHCHECK --interval=1s --timeout=1s CMD test -e /srv/ready", tag); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = api.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true})
	})
	net := "jikken-test-net-" + randomHex()
	r := runExperiment(t, newBackend(t), `
local net = "`+net+`";
[
  {
    name: "svc", image: "`+tag+`", service: true, networks: [net],
    cmd: "mkdir -p /srv && sleep 2 && echo ready > /srv/x && touch /srv/ready && exec httpd -f -p 8080 -h /srv",
  },
  {
    name: "client", image: "IMAGE", networks: [net],
    depends: [{ trial: "svc", condition: "healthy" }],
    cmd: "wget -q -O - http://svc:8080/x > $JIKKEN_OUTPUT_DIR/got.txt",
  },
]`, 2)
	if r.sum.Status != store.Succeeded {
		t.Fatalf("run %s; trials: %v", r.sum.Status, statusOf(r))
	}
	if got := r.file(t, "client", "got.txt"); got != "ready\n" {
		t.Fatalf("client fetched %q", got)
	}
}

// TestHTTPHealthIsProbedAtTheContainer: health {http: URL} is a GET of the URL at the
// container's own address (its host part names the container's side), so the image needs no
// tool; the service serves only after 2 s, and a client started too early fails.
func TestHTTPHealthIsProbedAtTheContainer(t *testing.T) {
	needEngine(t)
	net := "jikken-test-net-" + randomHex()
	r := runExperiment(t, newBackend(t), `
local net = "`+net+`";
[
  {
    name: "svc", image: "IMAGE", service: true, networks: [net],
    cmd: "mkdir -p /srv && sleep 2 && echo ready > /srv/x && exec httpd -f -p 8080 -h /srv",
    health: { http: "http://127.0.0.1:8080/x", interval: 0.2 },
  },
  {
    name: "client", image: "IMAGE", networks: [net],
    depends: [{ trial: "svc", condition: "healthy" }],
    cmd: "wget -q -O - http://svc:8080/x > $JIKKEN_OUTPUT_DIR/got.txt",
  },
]`, 2)
	if r.sum.Status != store.Succeeded {
		t.Fatalf("run %s; trials: %v", r.sum.Status, statusOf(r))
	}
	if got := r.file(t, "client", "got.txt"); got != "ready\n" {
		t.Fatalf("client fetched %q", got)
	}
}

// TestServiceThatTurnsUnhealthyIsRestarted: the check goes on once it has passed; a service
// whose checks keep failing is stopped and, with restart: on-failure, started again. The service
// ends at once on SIGTERM (a sleeping PID 1 would wait out the stop's grace period) and the client
// outlives the first attempt by several seconds, so a loaded machine still sees the restart while
// a dependant needs it (with a 6 s client and a grace-long stop, the client ended first once here).
func TestServiceThatTurnsUnhealthyIsRestarted(t *testing.T) {
	needEngine(t)
	r := runExperiment(t, newBackend(t), `[
  {
    name: "svc", image: "IMAGE", service: true, restart: "on-failure", backoff: 0.1,
    cmd: "trap 'exit 143' TERM; mkdir -p /srv && echo ok > /srv/x && httpd -p 8080 -h /srv && sleep 1 && { test $JIKKEN_ATTEMPT -ge 2 || rm /srv/x; }; sleep 60 & wait",
    health: { http: "http://127.0.0.1:8080/x", interval: 0.2 },
  },
  { name: "client", image: "IMAGE", cmd: "sleep 12", depends: ["svc"] },
]`, 2)
	if r.sum.Status != store.Succeeded || r.sum.Trials[0].Status != store.Stopped {
		t.Fatalf("run %s; trials: %v", r.sum.Status, statusOf(r))
	}
	a := r.sum.Trials[0].Attempts
	if len(a) != 2 || !strings.HasPrefix(a[0].Reason, "not healthy any more: 3 checks in a row failed (http ") {
		t.Fatalf("svc attempts: %+v", a)
	}
}
