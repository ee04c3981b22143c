// Package s3test gives tests an S3 server: an in-process fake (gofakes3) for fast unit tests,
// and a real MinIO process, started from a binary built by scripts/ci/minio.sh, for integration
// tests.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/jikken-dev/jikken/store/s3"
)

// Test credentials of the servers started here.
const (
	AccessKey = "jikkentest"
	SecretKey = "jikken-test-secret-0123"
)

// Server is a running S3 endpoint.
type Server struct {
	// Endpoint is http://127.0.0.1:PORT.
	Endpoint string

	t       testing.TB
	mu      sync.Mutex
	cmd     *exec.Cmd // MinIO only
	exited  chan error
	bin     string
	dataDir string
	addr    string
	logPath string
}

// Fake starts an in-process gofakes3 server that lives until the test ends.
func Fake(t testing.TB) *Server {
	t.Helper()
	return FakeWith(t, nil)
}

// FakeWith is Fake with the server's handler wrapped by wrap (when not nil), to inject
// failures.
func FakeWith(t testing.TB, wrap func(http.Handler) http.Handler) *Server {
	t.Helper()
	h := gofakes3.New(s3mem.New()).Server()
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &Server{Endpoint: ts.URL, t: t}
}

// MinIOBinary finds the MinIO server binary: $JIKKEN_MINIO, else
// $HOME/.cache/jikken-test/bin/minio. It returns "" when there is none.
func MinIOBinary() string {
	if p := os.Getenv("JIKKEN_MINIO"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	p := filepath.Join(home, ".cache", "jikken-test", "bin", "minio")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// MinIO starts a MinIO server on 127.0.0.1 with a fresh data folder, stopped when the test
// ends. Without the binary the test is skipped, except under CI=true where it fails.
func MinIO(t testing.TB) *Server {
	t.Helper()
	bin := MinIOBinary()
	if bin == "" {
		msg := "no MinIO binary: build it with scripts/ci/minio.sh (it prints the path) and set JIKKEN_MINIO to that path"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("JIKKEN_MINIO: %v", err)
	}
	dir := t.TempDir()
	s := &Server{t: t, bin: bin, dataDir: filepath.Join(dir, "data"), addr: freeAddr(t), logPath: filepath.Join(dir, "minio.log")}
	s.Endpoint = "http://" + s.addr
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Logf("stop minio: %v", err)
		}
	})
	return s
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Stop stops the MinIO process (the data folder stays), as an outage would.
func (s *Server) Stop() {
	s.t.Helper()
	if err := s.stop(); err != nil {
		s.t.Fatal(err)
	}
}

// Start starts MinIO again on the same address and data after Stop.
func (s *Server) Start() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "server", "--quiet", "--address", s.addr, "--console-address", "127.0.0.1:0", s.dataDir)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+AccessKey, "MINIO_ROOT_PASSWORD="+SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start minio: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait for readiness: the health endpoint answers 200 once the server serves requests. The
	// deadline only turns a hung start into a failure; tests do not depend on how long it takes.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(s.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(s.logPath)
			return fmt.Errorf("minio exited before it was ready: %v\n%s", err, log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			log, _ := os.ReadFile(s.logPath)
			return fmt.Errorf("minio did not become ready at %s\n%s", s.Endpoint, log)
		}
	}
	s.cmd = cmd
	s.exited = exited
	return nil
}

func (s *Server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
	return nil
}

// Config returns a store configuration for this server with the test credentials.
func (s *Server) Config() s3.Config {
	yes := true
	return s3.Config{
		Endpoint: s.Endpoint, Region: "us-east-1", PathStyle: &yes,
		AccessKeyID: AccessKey, SecretAccessKey: SecretKey,
	}
}

// Env returns the environment variables that point the s3 store at this server.
func (s *Server) Env() map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL_S3":   s.Endpoint,
		"AWS_REGION":            "us-east-1",
		"AWS_ACCESS_KEY_ID":     AccessKey,
		"AWS_SECRET_ACCESS_KEY": SecretKey,
		"JIKKEN_S3_PATH_STYLE":  "true",
		"JIKKEN_S3_CONFIG":      os.DevNull,
	}
}

// Setenv sets Env for the rest of the test (so the test must not be parallel).
func (s *Server) Setenv(t testing.TB) {
	for k, v := range s.Env() {
		t.Setenv(k, v)
	}
}

// Client returns a plain minio-go client of this server.
func (s *Server) Client() *minio.Client {
	s.t.Helper()
	c, err := minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Region: "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// NewBucket creates a bucket with a fresh name and returns the name.
func (s *Server) NewBucket() string {
	s.t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "jikken-test-" + hex.EncodeToString(b[:])
	if err := s.Client().MakeBucket(context.Background(), name, minio.MakeBucketOptions{}); err != nil {
		s.t.Fatalf("make bucket: %v", err)
	}
	return name
}

// Read returns the content of an object.
func (s *Server) Read(bucket, key string) string {
	s.t.Helper()
	obj, err := s.Client().GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		s.t.Fatalf("read %s: %v", key, err)
	}
	return string(b)
}

// Keys lists every object name in bucket.
func (s *Server) Keys(bucket string) []string {
	s.t.Helper()
	var out []string
	for o := range s.Client().ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			s.t.Fatal(o.Err)
		}
		out = append(out, o.Key)
	}
	return out
}
