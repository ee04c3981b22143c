package docker_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"
)

// The integration tests need a Docker engine and Debian's busybox-static (copied into a
// scratch image, since no registry is reachable). Without them they skip, unless CI=true:
// there a missing engine fails the tests (scripts/ci/docker.sh sets the machine up).
var (
	engineErr error
	api       *client.Client
	// busybox is the test image: FROM scratch, /bin/busybox and its applets.
	busybox string
	// keepImage is set when busybox belongs to the test process that started this one.
	keepImage bool
)

// Set when this test binary is run again by a test, as an unprivileged runner.
const (
	childImageEnv  = "JIKKEN_TEST_CHILD_IMAGE"
	childRunnerEnv = "JIKKEN_TEST_CHILD_RUNNER"
)

func TestMain(m *testing.M) {
	code := func() int {
		if err := setUp(); err != nil {
			if os.Getenv("CI") == "true" {
				fmt.Fprintf(os.Stderr, "docker tests: %v\nCI=true, so this is a failure; run scripts/ci/docker.sh first\n", err)
				return 1
			}
			engineErr = err
		}
		defer tearDown()
		return m.Run()
	}()
	os.Exit(code)
}

func setUp() error {
	var err error
	api, err = client.New(client.FromEnv)
	if err != nil {
		return fmt.Errorf("docker client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	if _, err := api.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return fmt.Errorf("no docker engine reachable at %s: %w", api.DaemonHost(), err)
	}
	// A test that runs this binary again as another user hands it the image it built.
	if tag := os.Getenv(childImageEnv); tag != "" {
		busybox, keepImage = tag, true
		return nil
	}
	bin, err := exec.LookPath("busybox")
	if err != nil {
		return errors.New("no busybox binary to build the test image from; apt-get install busybox-static")
	}
	busybox = "jikken-test-busybox:" + randomHex()
	if err := buildBusybox(ctx, api, bin, busybox); err != nil {
		busybox = ""
		return err
	}
	return nil
}

func tearDown() {
	if api == nil {
		return
	}
	if busybox != "" && !keepImage {
		_, _ = api.ImageRemove(context.Background(), busybox, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	}
	api.Close()
}

// needEngine skips the test when no engine (or no test image) is available.
func needEngine(t *testing.T) {
	t.Helper()
	if engineErr != nil {
		t.Skipf("skipping: %v", engineErr)
	}
}

func randomHex() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// buildFrom builds an image of one Dockerfile line on top of base.
func buildFrom(ctx context.Context, base, line, tag string) error {
	return buildImage(ctx, api, tag, map[string][]byte{"Dockerfile": []byte("FROM " + base + "\n" + line + "\n")})
}

// buildBusybox builds a scratch image holding the busybox binary, its applets linked in /bin,
// with the classic builder (BuildKit may not be there).
func buildBusybox(ctx context.Context, api *client.Client, bin, tag string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	dockerfile := "FROM scratch\nCOPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n"
	return buildImage(ctx, api, tag, map[string][]byte{"Dockerfile": []byte(dockerfile), "busybox": data})
}

// buildImage builds an image from a context of files with the classic builder.
func buildImage(ctx context.Context, api *client.Client, tag string, files map[string][]byte) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data))}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	res, err := api.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true, Version: build.BuilderV1})
	if err != nil {
		return fmt.Errorf("build test image: %w", err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		var msg struct{ Error string }
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.Error != "" {
			return fmt.Errorf("build test image: %s", msg.Error)
		}
	}
	return sc.Err()
}
