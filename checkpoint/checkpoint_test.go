package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/checkpoint"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3"
	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// writeFiles writes n files under dir whose contents start with tag.
func writeFiles(t testing.TB, dir, tag string, n int) map[string]string {
	t.Helper()
	want := map[string]string{}
	for i := range n {
		rel := fmt.Sprintf("shard-%d/part-%03d.bin", i%3, i)
		body := fmt.Sprintf("%s %d %s", tag, i, strings.Repeat("x", i*37))
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		want[rel] = body
	}
	return want
}

// readFiles returns every file under dir by its slash path.
func readFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sameFiles(t testing.TB, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d files, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s holds %.20q..., want %.20q...", k, got[k], v)
		}
	}
}

func folderStore(t testing.TB) store.Blob {
	b, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSaveRestoreIncremental saves a folder, changes one file and saves again: only that file
// is sent, an unchanged folder makes no version, a restore gives back the newest version, and
// older versions' files no one uses are pruned.
func TestSaveRestoreIncremental(t *testing.T) {
	ctx := context.Background()
	for name, b := range map[string]store.Blob{"folder": folderStore(t), "s3": fakeS3(t)} {
		t.Run(name, func(t *testing.T) {
			r := checkpoint.Remote{Blob: b, Prefix: checkpoint.Key("run1", "t1")}
			dir := t.TempDir()
			want := writeFiles(t, dir, "v1", 20)
			m1, st, err := r.Save(ctx, dir, nil, 1, 0)
			if err != nil || m1.Version != 1 || st.Uploaded != 20 {
				t.Fatalf("first save: %+v %+v %v", m1, st, err)
			}
			same, st, err := r.Save(ctx, dir, m1, 1, 0)
			if err != nil || same != m1 || st.Uploaded != 0 {
				t.Fatalf("save of an unchanged folder: %+v %+v %v", same, st, err)
			}
			p := filepath.Join(dir, "shard-1/part-004.bin")
			if err := os.WriteFile(p, []byte("changed"), 0o644); err != nil {
				t.Fatal(err)
			}
			want["shard-1/part-004.bin"] = "changed"
			m2, st, err := r.Save(ctx, dir, m1, 2, 0)
			if err != nil || m2.Version != 2 || st.Uploaded != 1 || st.Sent != int64(len("changed")) {
				t.Fatalf("second save: %+v %+v %v", m2, st, err)
			}
			latest, err := r.Latest(ctx)
			if err != nil || latest.Version != 2 {
				t.Fatalf("latest: %+v %v", latest, err)
			}
			out := filepath.Join(t.TempDir(), "restored")
			if err := r.Restore(ctx, latest, out); err != nil {
				t.Fatal(err)
			}
			sameFiles(t, readFiles(t, out), want)
			// A restored folder saves as unchanged: times came back too.
			if again, st, err := r.Save(ctx, out, latest, 3, 0); err != nil || again != latest || st.Uploaded != 0 {
				t.Fatalf("save of a restored folder: %+v %+v %v", again, st, err)
			}
			// A third version prunes the files of the first that the others do not use.
			if err := os.WriteFile(filepath.Join(dir, "shard-0/part-000.bin"), []byte("third"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := r.Save(ctx, dir, m2, 3, 0); err != nil {
				t.Fatal(err)
			}
			var keys []string
			_ = b.List(ctx, r.Prefix+"/", func(in store.Info) error { keys = append(keys, in.Key); return nil })
			for _, k := range keys {
				if strings.HasSuffix(k, "manifests/0000000001-1.json") || strings.HasSuffix(k, "files/0000000001-1/shard-1/part-004.bin") {
					t.Errorf("%s not pruned", k)
				}
			}
		})
	}
}

// TestTooLarge: a folder over the cap is not saved and the last good version stays.
func TestTooLarge(t *testing.T) {
	ctx := context.Background()
	r := checkpoint.Remote{Blob: folderStore(t), Prefix: checkpoint.Key("run1", "t1")}
	dir := t.TempDir()
	writeFiles(t, dir, "v1", 3)
	m1, _, err := r.Save(ctx, dir, nil, 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), bytes.Repeat([]byte("b"), 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = r.Save(ctx, dir, m1, 1, 1<<20)
	var tl *checkpoint.TooLargeError
	if !errors.As(err, &tl) || tl.Max != 1<<20 || !strings.Contains(err.Error(), "last good checkpoint is kept") {
		t.Fatalf("save over the cap: %v", err)
	}
	if latest, _ := r.Latest(ctx); latest == nil || latest.Version != 1 {
		t.Fatalf("latest after a refused save: %+v", latest)
	}
}

// TestFolderVersions: a folder's version counts the changes Observe sees, whoever observes.
func TestFolderVersions(t *testing.T) {
	f := checkpoint.FolderFor(t.TempDir(), "run1", "t1")
	st, err := f.Prepare()
	if err != nil || st.Version != 0 {
		t.Fatalf("new folder: %+v %v", st, err)
	}
	writeFiles(t, f.Dir, "a", 2)
	if st, _ = f.Observe(); st.Version != 1 || st.Files != 2 {
		t.Fatalf("after a write: %+v", st)
	}
	if st, _ = (checkpoint.Folder{Dir: f.Dir}).Observe(); st.Version != 1 {
		t.Fatalf("unchanged, seen by another runner: %+v", st)
	}
	later := time.Now().Add(time.Hour)
	_ = os.Chtimes(filepath.Join(f.Dir, "shard-0/part-000.bin"), later, later)
	if st, _ = f.Observe(); st.Version != 2 || !st.At.Equal(later) {
		t.Fatalf("after a change: %+v", st)
	}
}

func fakeS3(t testing.TB) store.Blob {
	return fakeS3With(t, nil)
}

func fakeS3With(t testing.TB, wrap func(http.Handler) http.Handler) store.Blob {
	srv := s3test.FakeWith(t, wrap)
	b, err := s3.New(context.Background(), "s3://"+srv.NewBucket()+"/runs", srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKillDuringUpload kills (SIGKILL) a process while it uploads the second version of a
// checkpoint, after some of its files reached the store: the half version is never restored;
// the first is, and the next save completes a version that restores whole.
func TestKillDuringUpload(t *testing.T) {
	killDuringUpload(t, func(wrap func(http.Handler) http.Handler) *s3test.Server { return s3test.FakeWith(t, wrap) })
}

// TestKillDuringUploadMinIO is TestKillDuringUpload against MinIO, through a proxy that holds
// the uploads to kill during.
func TestKillDuringUploadMinIO(t *testing.T) {
	killDuringUpload(t, func(wrap func(http.Handler) http.Handler) *s3test.Server {
		srv := s3test.MinIO(t)
		target, err := url.Parse(srv.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		proxy := httptest.NewServer(wrap(httputil.NewSingleHostReverseProxy(target)))
		t.Cleanup(proxy.Close)
		srv.Endpoint = proxy.URL
		return srv
	})
}

// killDuringUpload is the kill test against the S3 server serve starts, whose handler it wraps.
func killDuringUpload(t *testing.T, serve func(wrap func(http.Handler) http.Handler) *s3test.Server) {
	if os.Getenv("CHECKPOINT_CHILD") != "" {
		t.Skip("the child's side is TestKillChild")
	}
	ctx := context.Background()
	var put atomic.Int32
	landed, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := serve(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/files/0000000002-") {
				if put.Add(1) > 5 {
					// Hold the upload until the uploader is killed.
					once.Do(func() { close(landed) })
					<-release
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	bucket := srv.NewBucket()
	b, err := s3.New(ctx, "s3://"+bucket+"/runs", srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	r := checkpoint.Remote{Blob: b, Prefix: checkpoint.Key("run1", "t1"), Workers: 4}
	dir := t.TempDir()
	v1 := writeFiles(t, dir, "v1", 40)
	if _, _, err := r.Save(ctx, dir, nil, 1, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // new modification times for v2's files
	v2 := writeFiles(t, dir, "v2", 40)

	cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.v")
	cmd.Env = append(os.Environ(), "CHECKPOINT_CHILD=1", "CHECKPOINT_DIR="+dir, "CHECKPOINT_BUCKET="+bucket)
	for k, v := range srv.Env() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-landed:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		close(release)
		t.Fatalf("the child's upload never got going:\n%s", out.String())
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	close(release)
	if put.Load() < 5 {
		t.Fatalf("only %d files of the second version were sent", put.Load())
	}

	latest, err := r.Latest(ctx)
	if err != nil || latest == nil || latest.Version != 1 {
		t.Fatalf("latest after the kill: %+v %v", latest, err)
	}
	restored := filepath.Join(t.TempDir(), "r1")
	if err := r.Restore(ctx, latest, restored); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, readFiles(t, restored), v1)

	put.Store(-1000) // let the next save through
	m2, _, err := r.Save(ctx, dir, latest, 3, 0)
	if err != nil || m2.Version != 2 || m2.Attempt != 3 {
		t.Fatalf("save after the kill: %+v %v", m2, err)
	}
	if latest, _ = r.Latest(ctx); latest.Version != 2 {
		t.Fatalf("latest: %+v", latest)
	}
	restored = filepath.Join(t.TempDir(), "r2")
	if err := r.Restore(ctx, latest, restored); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, readFiles(t, restored), v2)
}

// TestKillChild is the process TestKillDuringUpload kills: it saves the folder as version 2.
func TestKillChild(t *testing.T) {
	if os.Getenv("CHECKPOINT_CHILD") == "" {
		t.Skip("run by TestKillDuringUpload")
	}
	ctx := context.Background()
	// The s3 store reads the server and credentials from the environment (s3test's Env).
	b, err := store.Open(ctx, "s3://"+os.Getenv("CHECKPOINT_BUCKET")+"/runs")
	if err != nil {
		t.Fatal(err)
	}
	r := checkpoint.Remote{Blob: b, Prefix: checkpoint.Key("run1", "t1"), Workers: 4}
	prev, err := r.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = r.Save(ctx, os.Getenv("CHECKPOINT_DIR"), prev, 2, 0)
	t.Fatalf("the save was to be killed, and returned %v", err)
}
