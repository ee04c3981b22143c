package cli

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// fakeJobs stands in for a cluster backend: it records the runs whose Jobs it was asked to
// delete. Its other methods are never called by rm.
type fakeJobs struct {
	runner.Backend
	namespace string
	deleted   []string
	err       error
}

// fakeCluster is the backend the fake-cluster driver opens.
var fakeCluster *fakeJobs

// fakeClusterSettings records a namespace, as the kubernetes backend does.
type fakeClusterSettings struct {
	Namespace string `flag:"fake-namespace" record:"namespace" help:"namespace of the fake Jobs"`
}

func init() {
	runner.Register(runner.Descriptor{
		Name: "fake-cluster", Noun: "Job", Caps: runner.Capabilities{DeletesRuns: true},
		Settings: func() any { return &fakeClusterSettings{} },
		Open: func(_ context.Context, _ runner.Env, s any) (runner.Backend, error) {
			fakeCluster.namespace = s.(*fakeClusterSettings).Namespace
			return fakeCluster, nil
		},
	})
}

func (b *fakeJobs) DeleteRun(ctx context.Context, runID string) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	b.deleted = append(b.deleted, runID)
	return 3, nil
}

// TestRmBackendObjectsDeletesKubernetesJobs: the Jobs of a kubernetes run are deleted only with
// --backend-objects, in the namespace the run recorded; a cluster that fails is a warning and
// the run is deleted all the same.
func TestRmBackendObjectsDeletesKubernetesJobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fake := &fakeJobs{}
	fakeCluster = fake
	blob, err := store.OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	addRun := func(id string) {
		t.Helper()
		m := &store.Manifest{RunID: id, Experiment: "k", Backend: "fake-cluster", Created: time.Now().UTC(),
			Options: store.RunOptions{Backend: map[string]string{"namespace": "team-a"}}}
		if err := runs.WriteManifest(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	rm := func(args ...string) (code int, out, errOut string) {
		ios, _, o, e := iostreams.Test()
		code = Run(ctx, ios, append([]string{"rm", "--store", dir}, args...))
		return code, o.String(), e.String()
	}

	addRun("20261122-100000-k-0001")
	if code, out, errOut := rm("latest"); code != 0 || !strings.Contains(out, "deleted run 20261122-100000-k-0001 (1 object)\n") || len(fake.deleted) != 0 {
		t.Fatalf("rm without --backend-objects: exit %d, stdout %q, stderr %q, Jobs deleted for %q", code, out, errOut, fake.deleted)
	}

	addRun("20261122-100000-k-0002")
	code, out, errOut := rm("latest", "--backend-objects")
	if code != 0 || !strings.Contains(out, "deleted run 20261122-100000-k-0002 (1 object, 3 Jobs)\n") {
		t.Fatalf("rm --backend-objects: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !slices.Equal(fake.deleted, []string{"20261122-100000-k-0002"}) || fake.namespace != "team-a" {
		t.Errorf("Jobs deleted for %q in namespace %q, want the run's in team-a", fake.deleted, fake.namespace)
	}

	addRun("20261122-100000-k-0003")
	fake.err = errors.New("cluster unreachable")
	code, out, errOut = rm("latest", "--backend-objects")
	if code != 0 || !strings.Contains(out, "deleted run 20261122-100000-k-0003 (1 object)\n") ||
		!strings.Contains(errOut, "warning: run 20261122-100000-k-0003: its fake-cluster objects were not deleted: cluster unreachable") {
		t.Fatalf("rm with an unreachable cluster: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if ids, _ := runs.RunIDs(ctx); len(ids) != 0 {
		t.Errorf("runs left: %q", ids)
	}
}
