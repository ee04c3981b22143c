package kubernetes

// These unit tests run against client-go's fake clientset: an in-memory object tracker with
// watch support but no API server, no controllers and no scheduler. They check what the backend
// sends and how it reads Job and pod states; the same behaviours against a real control plane
// are in cluster_test.go (make test-k8s).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/ghost"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

func trial(name string) experiment.Trial {
	seed := int64(3)
	return experiment.Trial{
		Name: name, Image: "python:3.12", Cmd: experiment.Command{Argv: []string{"python", "train.py"}},
		Params: map[string]any{"lr": 0.1}, Seed: &seed, Env: map[string]string{"MODE": "fast"},
		Resources:    experiment.Resources{CPU: 1.5, Memory: 2 << 30, GPU: 2},
		NodeSelector: map[string]string{"pool": "gpu"}, Timeout: experiment.Duration(90 * time.Second),
		Tolerations: []experiment.Toleration{{Key: "pool", Operator: "Equal", Value: "spot", Effect: "NoSchedule"}},
	}
}

func attempt(t *testing.T, run string, tr experiment.Trial, n int) *runner.Attempt {
	dir := filepath.Join(t.TempDir(), tr.Name)
	a := &runner.Attempt{RunID: run, Trial: tr, N: n, Dir: dir, OutputDir: filepath.Join(dir, "out"),
		StdoutPath: filepath.Join(dir, "stdout.log"), StderrPath: filepath.Join(dir, "stderr.log"),
		Env: []string{"JIKKEN_RUN_ID=" + run, "JIKKEN_TRIAL=" + tr.Name, "JIKKEN_OUTPUT_DIR=" + filepath.Join(dir, "out"), "JIKKEN_PARAMS=" + filepath.Join(dir, "params.json"), "MODE=fast"}}
	if err := os.MkdirAll(a.OutputDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "params.json"), []byte(`{"lr":0.1,"seed":3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return a
}

func newFake(t *testing.T) (*Backend, *fake.Clientset, store.Blob) {
	t.Helper()
	return newFakeWaiting(t, time.Hour)
}

// newFakeWaiting is newFake with pending Jobs failed after pending (no Job controller runs).
func newFakeWaiting(t *testing.T, pending time.Duration) (*Backend, *fake.Clientset, store.Blob) {
	t.Helper()
	blob, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
		r.Status.Allowed = true
		return true, r, nil
	})
	b := NewForClient(cs, Config{Namespace: "default", StoreURL: "s3://bucket/runs", StoreSecret: "jikken-s3", Store: blob,
		ExecutorImage: "jikken:test", PendingTimeout: pending})
	t.Cleanup(b.Close)
	return b, cs, blob
}

func TestJobSpec(t *testing.T) {
	b, _, _ := newFake(t)
	a := attempt(t, "20260101-000000-x-ab12", trial("lr=0.1/seed=3"), 2)
	spec, err := b.podSpec(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	j, err := b.cfg.Job(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Name) > 63 || !strings.HasPrefix(j.Name, "jk-lr-0-1-seed-3-") || !strings.HasSuffix(j.Name, "-2") {
		t.Errorf("job name %q", j.Name)
	}
	if j.Name != JobName(a.RunID, a.Trial.Name, 2) || j.Name == JobName(a.RunID, a.Trial.Name, 1) {
		t.Error("job names must be deterministic per run, trial and attempt")
	}
	if *j.Spec.BackoffLimit != 0 || *j.Spec.ActiveDeadlineSeconds != 90 {
		t.Errorf("backoffLimit %d, activeDeadlineSeconds %d", *j.Spec.BackoffLimit, *j.Spec.ActiveDeadlineSeconds)
	}
	if ttl := j.Spec.TTLSecondsAfterFinished; ttl == nil || *ttl != 600 {
		t.Errorf("ttlSecondsAfterFinished %v, want the default 10 minutes: finished Jobs must not pile up", ttl)
	}
	pod := j.Spec.Template
	for _, l := range []map[string]string{j.Labels, pod.Labels} {
		if l[LabelRun] != a.RunID || l[LabelAttempt] != "2" || l[LabelManagedBy] != "jikken" || l[LabelTrial] == "" {
			t.Errorf("labels %v", l)
		}
	}
	if pod.Annotations[AnnotationTrial] != "lr=0.1/seed=3" {
		t.Errorf("the full trial name must be kept in an annotation: %v", pod.Annotations)
	}
	c := pod.Spec.Containers[0]
	if c.Image != "python:3.12" || !qEq(c.Resources.Limits[GPUResource], "2") || !qEq(c.Resources.Requests[corev1.ResourceCPU], "1500m") ||
		!qEq(c.Resources.Limits[corev1.ResourceMemory], "2Gi") {
		t.Errorf("container %s resources %v", c.Image, c.Resources)
	}
	want := []string{binPath, "trial-exec", "--store", "s3://bucket/runs", "--log-dir", logDir, "--flush-every", "10s", "--", "python", "train.py"}
	if strings.Join(c.Command, " ") != strings.Join(want, " ") {
		t.Errorf("command %q", c.Command)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["JIKKEN_OUTPUT_DIR"] != outDir || env["JIKKEN_PARAMS"] != paramPath || env["JIKKEN_PARAMS_JSON"] != `{"lr":0.1,"seed":3}` || env["MODE"] != "fast" {
		t.Errorf("env %v", env)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != "jikken-s3" {
		t.Errorf("store credentials must come from the Secret: %v", c.EnvFrom)
	}
	for _, e := range c.Env {
		if strings.Contains(e.Name, "SECRET") || strings.Contains(e.Name, "ACCESS_KEY") {
			t.Errorf("credential inlined in the pod: %s", e.Name)
		}
	}
	if pod.Spec.NodeSelector["pool"] != "gpu" || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("pod spec %v %v", pod.Spec.NodeSelector, pod.Spec.RestartPolicy)
	}
	gpuTol, ownTol := false, false
	for _, tol := range pod.Spec.Tolerations {
		gpuTol = gpuTol || tol.Key == string(GPUResource)
		ownTol = ownTol || (tol.Key == "pool" && tol.Value == "spot" && tol.Effect == corev1.TaintEffectNoSchedule && tol.Operator == corev1.TolerationOpEqual)
	}
	if !gpuTol || !ownTol {
		t.Errorf("GPU trials tolerate the GPU taint, and every trial its own tolerations: %v", pod.Spec.Tolerations)
	}
	if len(pod.Spec.InitContainers) != 1 || pod.Spec.InitContainers[0].Image != "jikken:test" {
		t.Errorf("init containers %v", pod.Spec.InitContainers)
	}
}

func qEq(q resource.Quantity, want string) bool { return q.Cmp(resource.MustParse(want)) == 0 }

func TestCodeSnapshotAddsCheckout(t *testing.T) {
	b, _, blob := newFake(t)
	run := "r-code"
	m := &store.Manifest{RunID: run, File: "/home/me/proj/exp/sweep.jsonnet",
		Code: &ghost.Snapshot{Repo: "/home/me/proj", Origin: "https://example.com/p.git", Head: "abc", Base: "abc", Dirty: true, GhostRepo: "https://example.com/ghosts.git"}}
	if err := (store.Runs{Blob: blob}).WriteManifest(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	tr := trial("t")
	tr.Workdir = "src"
	spec, err := b.podSpec(context.Background(), attempt(t, run, tr, 1))
	if err != nil {
		t.Fatal(err)
	}
	j, err := b.cfg.Job(spec)
	if err != nil {
		t.Fatal(err)
	}
	inits := j.Spec.Template.Spec.InitContainers
	if len(inits) != 2 || inits[1].Name != "jikken-code" || !strings.Contains(inits[1].Env[0].Value, `"ghost_repo":"https://example.com/ghosts.git"`) {
		t.Fatalf("init containers %+v", inits)
	}
	if cmd := strings.Join(j.Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(cmd, "--workdir /code/exp/src") {
		t.Errorf("the trial runs in its folder of the checkout: %s", cmd)
	}
}

// run starts an attempt and returns its process and Job.
func start(t *testing.T, b *Backend, cs *fake.Clientset, a *runner.Attempt) (runner.Process, *batchv1.Job) {
	t.Helper()
	p, err := b.Start(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	j, err := cs.BatchV1().Jobs("default").Get(context.Background(), JobName(a.RunID, a.Trial.Name, a.N), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p, j
}

func wait(t *testing.T, p runner.Process) runner.Exit {
	t.Helper()
	ch := make(chan runner.Exit, 1)
	go func() { ch <- p.Wait() }()
	select {
	case e := <-ch:
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not return")
	}
	return runner.Exit{}
}

func setJobCondition(t *testing.T, cs *fake.Clientset, j *batchv1.Job, typ batchv1.JobConditionType, reason string) {
	t.Helper()
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason})
	if _, err := cs.BatchV1().Jobs(j.Namespace).UpdateStatus(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func addPod(t *testing.T, cs *fake.Clientset, j *batchv1.Job, status corev1.PodStatus) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-x", Namespace: j.Namespace, Labels: j.Spec.Template.Labels}, Status: status}
	if _, err := cs.CoreV1().Pods(j.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// countingBlob counts the uploads that go through it.
type countingBlob struct {
	store.Blob
	mu   sync.Mutex
	puts []string
}

func (c *countingBlob) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	c.mu.Lock()
	c.puts = append(c.puts, key)
	c.mu.Unlock()
	return c.Blob.Put(ctx, key, r, size)
}

// TestRunnerLeavesExecutorOutputsInTheStore runs a trial through the runner while a stand-in
// for the in-pod executor uploads its outputs: the runner neither downloads nor re-uploads them,
// and the stored metrics are the executor's (stdout not scanned twice).
func TestRunnerLeavesExecutorOutputsInTheStore(t *testing.T) {
	// The stand-in completes the Job: no pod ever shows, so give it time under load.
	b, cs, blob := newFakeWaiting(t, time.Minute)
	ctx := context.Background()
	counting := &countingBlob{Blob: blob}
	runs := store.Runs{Blob: counting}
	m := &store.Manifest{RunID: "r-out", Options: store.RunOptions{Jobs: 1}, Trials: []experiment.Trial{trial("t1")}}
	if err := runs.WriteManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	counting.puts = nil
	outputs := map[string]string{"stdout.log": "::metric acc=1\n", "stderr.log": "", "metrics.jsonl": `{"name":"acc","value":1}` + "\n", "artifacts/m.bin": "m"}
	go func() {
		name := JobName("r-out", "t1", 1)
		for {
			j, err := cs.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				for key, body := range outputs {
					_ = blob.Put(ctx, store.TrialKey("r-out", "t1", key), strings.NewReader(body), int64(len(body)))
				}
				j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})
				_, _ = cs.BatchV1().Jobs("default").UpdateStatus(ctx, j, metav1.UpdateOptions{})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r := &runner.Runner{Backend: b, Runs: runs, Jobs: 1, WorkRoot: t.TempDir(), Workdir: t.TempDir()}
	sum, err := r.Execute(ctx, m, false)
	if err != nil || sum.Status != store.Succeeded {
		t.Fatalf("run %v %v %+v", sum, err, sum.Trials[0])
	}
	for key, want := range outputs {
		got, err := store.ReadAll(ctx, blob, store.TrialKey("r-out", "t1", key))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want the executor's %q", key, got, err, want)
		}
	}
	for _, key := range counting.puts {
		// The runner's own files: records, state, the run's summary as it ends, its lock.
		if base := path.Base(key); base != "trial.json" && base != "params.json" && base != "state.json" && base != "summary.json" && !strings.HasSuffix(key, ".lock") {
			t.Errorf("the runner uploaded %s again", key)
		}
	}
}

func TestWaitReportsExitCodeOfFailedPod(t *testing.T) {
	b, cs, _ := newFake(t)
	p, j := start(t, b, cs, attempt(t, "r1", trial("t1"), 1))
	addPod(t, cs, j, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer,
		ImageID: "docker-pullable://python@sha256:abc",
		State:   corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}})
	setJobCondition(t, cs, j, batchv1.JobFailed, "BackoffLimitExceeded")
	if e := wait(t, p); e.Code != 3 || e.Err != nil {
		t.Fatalf("exit %+v, want code 3", e)
	}
	if d := p.(runner.ImageDigester).ImageDigest(); d != "python@sha256:abc" {
		t.Errorf("image digest %q: the node's image ID, without the runtime's scheme", d)
	}
}

func TestWaitReportsOOMAndDeadline(t *testing.T) {
	b, cs, _ := newFake(t)
	p, j := start(t, b, cs, attempt(t, "r1", trial("oom"), 1))
	addPod(t, cs, j, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}})
	setJobCondition(t, cs, j, batchv1.JobFailed, "BackoffLimitExceeded")
	if e := wait(t, p); e.Code != 137 || !strings.Contains(e.Reason, "out of memory") {
		t.Errorf("exit %+v", e)
	}
	p, j = start(t, b, cs, attempt(t, "r1", trial("slow"), 1))
	setJobCondition(t, cs, j, batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded)
	if e := wait(t, p); !strings.Contains(e.Reason, "timed out after 1m30s") {
		t.Errorf("exit %+v", e)
	}
}

func TestImagePullFailureFailsTheTrial(t *testing.T) {
	b, cs, _ := newFake(t)
	p, j := start(t, b, cs, attempt(t, "r1", trial("t1"), 1))
	addPod(t, cs, j, corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, Image: "nope:1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "not found"}}}}})
	e := wait(t, p)
	if e.Err == nil || !strings.Contains(e.Err.Error(), "image pull failed for nope:1") {
		t.Fatalf("exit %+v", e)
	}
	if _, err := cs.BatchV1().Jobs("default").Get(context.Background(), j.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Job of a trial that cannot pull its image is deleted: %v", err)
	}
}

func TestUnschedulableGivesSchedulerReason(t *testing.T) {
	b, cs, _ := newFake(t)
	p, j := start(t, b, cs, attempt(t, "r1", trial("t1"), 1))
	addPod(t, cs, j, corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}}})
	e := wait(t, p)
	if e.Err == nil || !strings.Contains(e.Err.Error(), "Insufficient nvidia.com/gpu") || !strings.Contains(e.Err.Error(), "unschedulable for") {
		t.Fatalf("exit %+v", e)
	}
}

func TestStopDeletesTheJob(t *testing.T) {
	b, cs, _ := newFake(t)
	p, j := start(t, b, cs, attempt(t, "r1", trial("t1"), 1))
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if e := wait(t, p); e.Code != 137 {
		t.Errorf("exit %+v", e)
	}
	if _, err := cs.BatchV1().Jobs("default").Get(context.Background(), j.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("job still there: %v", err)
	}
}

func TestLiveAndReattach(t *testing.T) {
	ctx := context.Background()
	old, cs, blob := newFake(t)
	if _, err := old.Start(ctx, attempt(t, "r1", trial("a"), 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Start(ctx, attempt(t, "other-run", trial("a"), 1)); err != nil {
		t.Fatal(err)
	}
	// A new backend, as after a runner crash: kill sees the live Job of this run only.
	killer := NewForClient(cs, old.cfg)
	live, err := killer.Live(ctx, "r1")
	if err != nil || len(live) != 1 || live[0].Trial != "a" || live[0].Attempt != 1 {
		t.Fatalf("Live = %+v, %v", live, err)
	}
	// A resumed runner announces its plan: the live Job is re-attached, not reported or duplicated.
	resumed := NewForClient(cs, Config{Namespace: "default", StoreURL: "s3://b", Store: blob, ExecutorImage: "x"})
	if err := resumed.Check(ctx, []experiment.Trial{trial("a")}); err != nil {
		t.Fatal(err)
	}
	resumed.Plan([]experiment.Trial{trial("a")})
	if live, err := resumed.Live(ctx, "r1"); err != nil || len(live) != 0 {
		t.Fatalf("Live after Plan = %+v, %v", live, err)
	}
	// The core starts the adopted attempt under its own number (runner/core: Adopted).
	p, err := resumed.Start(ctx, attempt(t, "r1", trial("a"), 1))
	if err != nil {
		t.Fatal(err)
	}
	if p.Handle() != "job:default/"+JobName("r1", "a", 1) {
		t.Errorf("re-attached to %s", p.Handle())
	}
	jobs, _ := cs.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{LabelSelector: RunSelector("r1")})
	if len(jobs.Items) != 1 {
		t.Errorf("%d Jobs for run r1, want 1", len(jobs.Items))
	}
	// The fake clientset's watch misses what happens between its list and its watch (the delete
	// below, 1 run in 30 under -race): wait until it delivers a change. The re-attached process
	// is stopped through its own backend here; kill by another process is checked against a real
	// API server in TestClusterKillDeletesOnlyThisRun.
	watchLive(t, cs, resumed.watches["r1"], "r1")
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if e := wait(t, p); e.Code != 137 {
		t.Errorf("exit %+v", e)
	}
	if jobs, _ := cs.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{}); len(jobs.Items) != 1 || jobs.Items[0].Labels[LabelRun] != "other-run" {
		t.Errorf("kill must leave other runs alone: %v", jobs.Items)
	}
}

// TestResumeCollectsJobFinishedWhileNoRunnerWatched: a Job that completed while its runner was
// dead is re-attached and its end collected, not run again (a resumed runner used to see no
// live Job and create a second one, TestClusterResumeReattaches's rare failure); a trial whose
// newest Job is attempt 1 but which the record says must start attempt 2 gets a new Job.
func TestResumeCollectsJobFinishedWhileNoRunnerWatched(t *testing.T) {
	ctx := context.Background()
	old, cs, blob := newFake(t)
	for _, name := range []string{"done", "again"} {
		if _, err := old.Start(ctx, attempt(t, "r1", trial(name), 1)); err != nil {
			t.Fatal(err)
		}
		j, err := cs.BatchV1().Jobs("default").Get(ctx, JobName("r1", name, 1), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setJobCondition(t, cs, j, batchv1.JobComplete, "")
	}
	resumed := NewForClient(cs, Config{Namespace: "default", StoreURL: "s3://b", Store: blob, ExecutorImage: "x"})
	if err := resumed.Check(ctx, []experiment.Trial{trial("done"), trial("again")}); err != nil {
		t.Fatal(err)
	}
	resumed.Plan([]experiment.Trial{trial("done"), trial("again")})
	if live, err := resumed.Live(ctx, "r1"); err != nil || len(live) != 0 {
		t.Fatalf("Live = %+v, %v: finished Jobs are not to be stopped", live, err)
	}
	if got := resumed.Adopted("r1"); got["done"] != 1 || got["again"] != 1 {
		t.Fatalf("Adopted = %v, want both trials' attempt 1", got)
	}
	p, err := resumed.Start(ctx, attempt(t, "r1", trial("done"), 1))
	if err != nil {
		t.Fatal(err)
	}
	if p.Handle() != "job:default/"+JobName("r1", "done", 1) {
		t.Errorf("re-attached to %s", p.Handle())
	}
	if e := wait(t, p); e.Code != 0 || e.Err != nil {
		t.Errorf("the finished Job's end: %+v, want success", e)
	}
	p2, err := resumed.Start(ctx, attempt(t, "r1", trial("again"), 2))
	if err != nil {
		t.Fatal(err)
	}
	if p2.Handle() != "job:default/"+JobName("r1", "again", 2) {
		t.Errorf("attempt 2 runs as %s, want a Job of its own", p2.Handle())
	}
	jobs, _ := cs.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{LabelSelector: RunSelector("r1")})
	if len(jobs.Items) != 3 {
		t.Errorf("%d Jobs for run r1, want 3 (done@1, again@1, again@2)", len(jobs.Items))
	}
}

func TestCheckErrors(t *testing.T) {
	ctx := context.Background()
	b, cs, _ := newFake(t)
	noImage := trial("t")
	noImage.Image = ""
	if err := b.Check(ctx, []experiment.Trial{noImage}); err == nil || !strings.Contains(err.Error(), "no image") {
		t.Errorf("no image: %v", err)
	}
	if err := b.Check(ctx, []experiment.Trial{trial("t")}); err != nil {
		t.Errorf("Check: %v", err)
	}
	missing := NewForClient(cs, Config{Namespace: "nope", StoreURL: "s3://b"})
	if err := missing.Check(ctx, []experiment.Trial{trial("t")}); err == nil || !strings.Contains(err.Error(), "namespace nope does not exist") {
		t.Errorf("missing namespace: %v", err)
	}
	local := NewForClient(cs, Config{Namespace: "default", StoreURL: "/tmp/store"})
	if err := local.Check(ctx, []experiment.Trial{trial("t")}); err == nil || !strings.Contains(err.Error(), "s3://") {
		t.Errorf("local store: %v", err)
	}
	denied := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	denied.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, a.(k8stesting.CreateAction).GetObject(), nil
	})
	db := NewForClient(denied, Config{Namespace: "default", StoreURL: "s3://b"})
	if err := db.Check(ctx, []experiment.Trial{trial("t")}); err == nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), "RBAC") {
		t.Errorf("RBAC: %v", err)
	}
	cs.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "x", errors.New(`exceeded quota: q, requested: count/jobs.batch=1, used: count/jobs.batch=5, limited: count/jobs.batch=5`))
	})
	if _, err := b.Start(ctx, attempt(t, "r1", trial("q"), 1)); err == nil || !strings.Contains(err.Error(), "quota") {
		t.Errorf("quota: %v", err)
	}
}

func TestCodeThatCannotBeRebuiltIsRefused(t *testing.T) {
	for _, snap := range []*ghost.Snapshot{
		{Repo: "/p", Head: "a"}, // no remote
		{Repo: "/p", Origin: "https://example.com/p.git", Head: "a", Base: "a", Dirty: true}, // local edits, no ghost repo
	} {
		if _, err := CodeOf(&store.Manifest{RunID: "r", Code: snap}); err == nil || !strings.Contains(err.Error(), "JIKKEN_K8S_IMAGE_HAS_CODE") {
			t.Errorf("%+v: %v", snap, err)
		}
	}
}

func TestEvictedPodGoneBeforeTheJobFailsIsStillReported(t *testing.T) {
	b, cs, _ := newFake(t)
	p, j := start(t, b, cs, attempt(t, "r1", trial("t1"), 1))
	ctx := context.Background()
	addPod(t, cs, j, corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget,
		Status: corev1.ConditionTrue, Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint"}}})
	podName := j.Name + "-x"
	// The pod is deleted (as KWOK or the pod GC does) before the Job controller's verdict.
	waitFor(t, "the pod in the watch cache", func() bool { return len(p.(*process).w.podsOf(j.Name)) == 1 })
	if err := cs.CoreV1().Pods("default").Delete(ctx, podName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pod to leave the watch cache", func() bool { return len(p.(*process).w.podsOf(j.Name)) == 0 })
	setJobCondition(t, cs, j, batchv1.JobFailureTarget, "BackoffLimitExceeded")
	e := wait(t, p)
	if e.Code != -1 || !strings.Contains(e.Reason, "pod evicted from node") || !strings.Contains(e.Reason, "DeletionByTaintManager") {
		t.Fatalf("exit %+v: the eviction must be the reason", e)
	}
	if e.Interrupted != runner.NodeLost {
		t.Fatalf("exit %+v: the taint manager removes the pods of a lost node", e)
	}
}

func TestDisruptionClasses(t *testing.T) {
	for reason, want := range map[string]runner.Interruption{
		"PreemptionByScheduler": runner.Preempted, "EvictionByEvictionAPI": runner.Preempted, "TerminationByKubelet": runner.Preempted,
		"DeletionByTaintManager": runner.NodeLost, "DeletionByPodGC": runner.NodeLost,
	} {
		pod := &cachedPod{node: "n1", conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason}}}
		if why, got := disruption(pod); got != want || !strings.Contains(why, reason) {
			t.Errorf("%s: %q %q, want %q", reason, why, got, want)
		}
	}
	if why, got := disruption(&cachedPod{}); why != "" || got != runner.NotInterrupted {
		t.Errorf("a pod never disrupted: %q %q", why, got)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waiting for %s", what)
		}
	}
}

func TestServiceTrialsGetNamesInTheRunsService(t *testing.T) {
	b, cs, blob := newFake(t)
	ctx := context.Background()
	run := "20260101-000000-svc-ab12"
	cache, db, train := trial("Redis_Cache"), trial("db"), trial("train")
	cache.Service, db.Service = true, true
	train.Depends = []experiment.Dependency{{Trial: "db", Condition: experiment.Started}}
	m := &store.Manifest{RunID: run, Trials: []experiment.Trial{cache, db, train}}
	if err := (store.Runs{Blob: blob}).WriteManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	_, cacheJob := start(t, b, cs, attempt(t, run, cache, 1))
	_, dbJob := start(t, b, cs, attempt(t, run, db, 1))
	_, trainJob := start(t, b, cs, attempt(t, run, train, 1))

	svc, err := cs.CoreV1().Services("default").Get(ctx, RunServiceName(run), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the run's Service: %v", err)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector[LabelService] != "true" || svc.Spec.Selector[LabelRun] != run {
		t.Errorf("Service spec %+v", svc.Spec)
	}
	owners := map[string]bool{}
	for _, o := range svc.OwnerReferences {
		owners[o.Name] = o.Kind == "Job"
	}
	if !owners[cacheJob.Name] || !owners[dbJob.Name] || len(owners) != 2 {
		t.Errorf("owners %v: each service trial's Job must own the Service", svc.OwnerReferences)
	}
	domain := RunServiceName(run) + ".default.svc.cluster.local"
	for _, c := range []struct {
		job               *batchv1.Job
		hostname, service string
	}{{cacheJob, "redis-cache", "true"}, {dbJob, "db", "true"}, {trainJob, "", ""}} {
		spec := c.job.Spec.Template.Spec
		if spec.Hostname != c.hostname || (c.hostname != "" && spec.Subdomain != RunServiceName(run)) {
			t.Errorf("%s: hostname %q subdomain %q", c.job.Name, spec.Hostname, spec.Subdomain)
		}
		if c.job.Spec.Template.Labels[LabelService] != c.service {
			t.Errorf("%s: labels %v", c.job.Name, c.job.Spec.Template.Labels)
		}
		if spec.DNSConfig == nil || len(spec.DNSConfig.Searches) != 1 || spec.DNSConfig.Searches[0] != domain {
			t.Errorf("%s: dnsConfig %+v, want a search of %s", c.job.Name, spec.DNSConfig, domain)
		}
	}

	// A run without services gets neither the Service nor the search domain.
	plain := "20260101-000000-plain-cd34"
	if err := (store.Runs{Blob: blob}).WriteManifest(ctx, &store.Manifest{RunID: plain, Trials: []experiment.Trial{trial("t")}}); err != nil {
		t.Fatal(err)
	}
	_, j := start(t, b, cs, attempt(t, plain, trial("t"), 1))
	if j.Spec.Template.Spec.DNSConfig != nil || j.Spec.Template.Spec.Hostname != "" {
		t.Errorf("a run without services: %+v", j.Spec.Template.Spec.DNSConfig)
	}
	if _, err := cs.CoreV1().Services("default").Get(ctx, RunServiceName(plain), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a run without services has no Service: %v", err)
	}
}

func TestHostName(t *testing.T) {
	for in, want := range map[string]string{"db": "db", "Redis_Cache": "redis-cache", "1db": "t1db", "-a b-": "a-b", "param-server/0": "param-server-0"} {
		if got := HostName(in); got != want {
			t.Errorf("HostName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := HostName(strings.Repeat("x", 80)); len(got) != 63 {
		t.Errorf("HostName of a long name has %d characters", len(got))
	}
}

func TestServiceTrialWithoutItsServiceIsNotLeftRunning(t *testing.T) {
	b, cs, _ := newFake(t)
	cs.PrependReactor("create", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "", errors.New("RBAC"))
	})
	db := trial("db")
	db.Service = true
	a := attempt(t, "r-svc", db, 1)
	if _, err := b.Start(context.Background(), a); err == nil || !strings.Contains(err.Error(), "Service that names service trial db") {
		t.Fatalf("Start = %v", err)
	}
	if _, err := cs.BatchV1().Jobs("default").Get(context.Background(), JobName("r-svc", "db", 1), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the service's Job was left behind: %v", err)
	}
}

// A share of a GPU and a MIG instance ask for the resources the NVIDIA device plugin offers for
// them (a share used to become 0 GPUs: the request vanished).
func TestSharedAndMIGGPUs(t *testing.T) {
	for _, c := range []struct {
		r    experiment.Resources
		name corev1.ResourceName
	}{
		{experiment.Resources{GPU: 0.5}, SharedGPUResource},
		{experiment.Resources{GPU: 0.25}, SharedGPUResource},
		{experiment.Resources{MIG: "1g.10gb"}, "nvidia.com/mig-1g.10gb"},
		{experiment.Resources{GPU: 3}, GPUResource},
	} {
		req, err := resources(c.r)
		if err != nil {
			t.Fatal(err)
		}
		want := "1"
		if c.r.GPU >= 1 {
			want = "3"
		}
		if q, ok := req.Limits[c.name]; !ok || !qEq(q, want) || len(req.Limits) != 1 {
			t.Errorf("%+v asks for %v, want %s %s", c.r, req.Limits, want, c.name)
		}
	}
}

// TestResumedRunnerContinuesTheAttemptItReattaches: a runner died while attempt 1 of a trial
// ran; the next runner re-attaches to its Job, and the trial's record lists that one attempt,
// not a closed attempt 1 and an attempt 2 for the same pod.
func TestResumedRunnerContinuesTheAttemptItReattaches(t *testing.T) {
	old, cs, blob := newFakeWaiting(t, time.Minute)
	ctx := context.Background()
	runs := store.Runs{Blob: blob}
	m := &store.Manifest{RunID: "r-adopt", Backend: "kubernetes", Options: store.RunOptions{Jobs: 1}, Trials: []experiment.Trial{trial("t1")}}
	if err := runs.WriteManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Start(ctx, attempt(t, "r-adopt", trial("t1"), 1)); err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	rec := &store.TrialRecord{Run: "r-adopt", Name: "t1", Status: store.Running, Backend: "kubernetes",
		Attempts: []store.Attempt{{N: 1, Started: started}}, Started: &started,
		Live: &store.Live{Host: "gone", Attempt: 1, Handle: "job:default/" + JobName("r-adopt", "t1", 1)}}
	if err := runs.WriteTrial(ctx, rec); err != nil {
		t.Fatal(err)
	}
	go func() {
		name := JobName("r-adopt", "t1", 1)
		for range time.Tick(20 * time.Millisecond) {
			// Complete the Job once the new runner has recorded that it runs again.
			r, err := runs.Trial(ctx, "r-adopt", "t1")
			if err != nil || r.Live == nil || r.Live.Host == "gone" {
				continue
			}
			j, err := cs.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})
			_, _ = cs.BatchV1().Jobs("default").UpdateStatus(ctx, j, metav1.UpdateOptions{})
			return
		}
	}()
	resumed := NewForClient(cs, old.cfg)
	r := &runner.Runner{Backend: resumed, Runs: runs, Jobs: 1, WorkRoot: t.TempDir(), Workdir: t.TempDir(), Host: "next"}
	sum, err := r.Execute(ctx, m, false)
	if err != nil || sum.Status != store.Succeeded {
		t.Fatalf("run %v %v", sum, err)
	}
	got, err := runs.Trial(ctx, "r-adopt", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Attempts) != 1 || got.Attempts[0].N != 1 || got.Attempts[0].Reason != "" || !got.Attempts[0].Started.Equal(started) || got.Attempts[0].Finished.IsZero() {
		t.Errorf("attempts %+v: want attempt 1 alone, started by the first runner and ended", got.Attempts)
	}
	if jobs, _ := cs.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{LabelSelector: RunSelector("r-adopt")}); len(jobs.Items) != 1 {
		t.Errorf("%d Jobs, want the one re-attached", len(jobs.Items))
	}
}

func TestJobTTL(t *testing.T) {
	for _, c := range []struct {
		ttl  time.Duration
		want *int32
	}{{0, ptr(int32(600))}, {5 * time.Second, ptr(int32(5))}, {1500 * time.Millisecond, ptr(int32(2))}, {-1, nil}} {
		cfg := Config{Namespace: "default", JobTTL: c.ttl}
		cfg.defaults()
		j, err := cfg.Job(PodSpec{Run: "r", Trial: trial("t"), Attempt: 1})
		if err != nil {
			t.Fatal(err)
		}
		got := j.Spec.TTLSecondsAfterFinished
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("JobTTL %s: ttlSecondsAfterFinished %v, want %v", c.ttl, got, c.want)
		}
	}
	b := NewForClient(nil, Config{Namespace: "ns", JobTTL: -1})
	if s := b.Settings(); s["job-ttl"] != "keep" || s["namespace"] != "ns" {
		t.Errorf("settings %v: a run records its Job TTL for resume", s)
	}
}

// TestJobDeletedByTTLAfterItCompleted: the TTL controller may delete a finished Job before its
// process reads the watch's cache; the attempt still succeeded.
func TestJobDeletedByTTLAfterItCompleted(t *testing.T) {
	b, cs, _ := newFake(t)
	ctx := context.Background()
	a := attempt(t, "r-ttl", trial("t1"), 1)
	p, j := start(t, b, cs, a)
	w := b.watches["r-ttl"]
	// The fake clientset's watch misses what happens between its list and its watch.
	waitFor(t, "the watch to see the Job", func() bool {
		_, ok, _ := w.jobs.GetStore().GetByKey("default/" + j.Name)
		return ok
	})
	setJobCondition(t, cs, j, batchv1.JobComplete, "")
	if err := cs.BatchV1().Jobs("default").Delete(ctx, j.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watch to see the Job deleted", func() bool {
		_, ok, _ := w.jobs.GetStore().GetByKey("default/" + j.Name)
		return !ok
	})
	if e := wait(t, p); e.Code != 0 || e.Err != nil {
		t.Errorf("exit %+v, want success: the Job completed before the cluster deleted it", e)
	}
}

// TestStartRepeatsACreateTheServerDidNotTake: the API server of a busy cluster drops a
// connection, refuses a request for load, or takes the Job and loses the answer; each attempt
// still gets its one Job, and a refusal that says something about the request (quota) is not
// repeated.
func TestStartRepeatsACreateTheServerDidNotTake(t *testing.T) {
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	reset := &url.Error{Op: "Post", URL: "https://api:6443/apis/batch/v1/namespaces/default/jobs",
		Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	for _, tc := range []struct {
		name string
		// fail answers the first create; landed: the Job was created all the same.
		fail   error
		landed bool
	}{
		{"connection reset", reset, false},
		{"answer lost", &url.Error{Op: "Post", URL: reset.URL, Err: io.EOF}, true},
		{"too many requests", apierrors.NewTooManyRequests("the server is busy", 1), false},
		{"etcd timeout", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, cs, _ := newFake(t)
			creates := 0
			cs.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
				creates++
				if creates > 1 {
					return false, nil, nil
				}
				if tc.landed {
					if err := cs.Tracker().Create(jobs, a.(k8stesting.CreateAction).GetObject(), "default"); err != nil {
						t.Fatal(err)
					}
				}
				return true, nil, tc.fail
			})
			p, j := start(t, b, cs, attempt(t, "r1", trial("t1"), 1))
			if creates != 2 {
				t.Errorf("%d creates, want the failed one and one more", creates)
			}
			setJobCondition(t, cs, j, batchv1.JobComplete, "")
			if e := wait(t, p); e.Code != 0 || e.Err != nil {
				t.Errorf("exit %+v, want success", e)
			}
		})
	}
	b, cs, _ := newFake(t)
	creates := 0
	cs.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		creates++
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "x", errors.New("exceeded quota: q"))
	})
	if _, err := b.Start(context.Background(), attempt(t, "r1", trial("q"), 1)); err == nil || creates != 1 {
		t.Errorf("quota: %v after %d creates, want an error after one", err, creates)
	}
}

// manifestReads counts the reads of run manifests.
type manifestReads struct {
	store.Blob
	n atomic.Int64
}

func (m *manifestReads) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if path.Base(key) == "manifest.json" {
		m.n.Add(1)
	}
	return m.Blob.Get(ctx, key)
}

// TestStartsOfARunReadItsManifestOnce: a run of -j N starts N attempts at once, and each needs
// what the run's manifest says (code snapshot, services). They wait for one read of it rather
// than each reading (and, above store.CompactAbove trials, parsing the experiment again): at
// 10,000 trials that took the runner past 10 GB.
func TestStartsOfARunReadItsManifestOnce(t *testing.T) {
	folder, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	blob := &manifestReads{Blob: folder}
	m := &store.Manifest{RunID: "r1", Experiment: "e", Backend: "kubernetes"}
	for i := range 3000 {
		m.Trials = append(m.Trials, trial(fmt.Sprintf("t%d", i)))
		m.Trials[i].Index = i
	}
	ctx := context.Background()
	if err := (store.Runs{Blob: blob}).WriteManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	blob.n.Store(0)
	b, _, _ := newFake(t)
	b.cfg.Store = blob
	var atts []*runner.Attempt
	for i := range 50 {
		atts = append(atts, attempt(t, "r1", m.Trials[i], 1))
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(atts))
	for _, a := range atts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Start(ctx, a); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := blob.n.Load(); n != 1 {
		t.Errorf("50 Starts of one run read its manifest %d times, want once", n)
	}
}

// TestNotifyTellsOfTheEnd: the runner holds no goroutine on a running attempt; the watch's
// dispatcher calls what Notify was given once the Job has ended (at once for an attempt that
// ended before), and Wait then returns how it ended.
func TestNotifyTellsOfTheEnd(t *testing.T) {
	b, cs, _ := newFakeWaiting(t, time.Hour)
	pa, ja := start(t, b, cs, attempt(t, "r1", trial("a"), 1))
	pb, jb := start(t, b, cs, attempt(t, "r1", trial("b"), 1))
	ended := make(chan string, 2)
	pa.(runner.Notifier).Notify(func() { ended <- "a" })
	pb.(runner.Notifier).Notify(func() { ended <- "b" })
	addPod(t, cs, jb, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}})
	setJobCondition(t, cs, jb, batchv1.JobFailed, "BackoffLimitExceeded")
	if got := <-ended; got != "b" {
		t.Fatalf("%s notified, want b: only b's Job ended", got)
	}
	if e := wait(t, pb); e.Code != 3 {
		t.Errorf("b: exit %+v, want code 3", e)
	}
	setJobCondition(t, cs, ja, batchv1.JobComplete, "")
	if got := <-ended; got != "a" {
		t.Fatalf("%s notified, want a", got)
	}
	if e := wait(t, pa); e.Code != 0 || e.Err != nil {
		t.Errorf("a: exit %+v, want success", e)
	}
	late := make(chan struct{})
	pa.(runner.Notifier).Notify(func() { close(late) })
	<-late
}

// TestLiveAtTheRunsEndReadsTheWatch: at the end of a run every Job has usually finished, and the
// watch's cache says so without listing the run's Jobs again (a list of 10,000 whole Jobs was
// the runner's peak of memory); a Job the cache shows unfinished is still found and reported.
func TestLiveAtTheRunsEndReadsTheWatch(t *testing.T) {
	b, cs, _ := newFakeWaiting(t, time.Hour)
	ctx := context.Background()
	pa, ja := start(t, b, cs, attempt(t, "r1", trial("a"), 1))
	pb, jb := start(t, b, cs, attempt(t, "r1", trial("b"), 1))
	lists := func() int {
		n := 0
		for _, a := range cs.Actions() {
			if a.GetVerb() == "list" && a.GetResource().Resource == "jobs" {
				n++
			}
		}
		return n
	}
	setJobCondition(t, cs, ja, batchv1.JobComplete, "")
	wait(t, pa)
	live, err := b.Live(ctx, "r1")
	if err != nil || len(live) != 1 || live[0].Trial != "b" {
		t.Fatalf("Live = %+v, %v; want b, which runs", live, err)
	}
	setJobCondition(t, cs, jb, batchv1.JobComplete, "")
	wait(t, pb)
	before := lists()
	if live, err := b.Live(ctx, "r1"); err != nil || len(live) != 0 {
		t.Fatalf("Live = %+v, %v after every Job finished", live, err)
	}
	if n := lists() - before; n != 0 {
		t.Errorf("%d lists of the run's Jobs once the watch shows them all finished, want none", n)
	}
}

// TestLiveListsAPageAtATime: the run's Jobs are read in pages, never in one response.
func TestLiveListsAPageAtATime(t *testing.T) {
	b, cs, _ := newFake(t)
	var pages []metav1.ListOptions
	cs.PrependReactor("list", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).ListOptions
		pages = append(pages, opts)
		job := func(name string) batchv1.Job {
			return batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
				Labels:      map[string]string{LabelManagedBy: "jikken", LabelRun: "r1", LabelAttempt: "1"},
				Annotations: map[string]string{AnnotationTrial: name}}}
		}
		if opts.Continue == "" {
			return true, &batchv1.JobList{ListMeta: metav1.ListMeta{Continue: "page2"}, Items: []batchv1.Job{job("a")}}, nil
		}
		return true, &batchv1.JobList{Items: []batchv1.Job{job("b")}}, nil
	})
	live, err := b.Live(context.Background(), "r1")
	if err != nil || len(live) != 2 || live[0].Trial != "a" || live[1].Trial != "b" {
		t.Fatalf("Live = %+v, %v; want a and b, one from each page", live, err)
	}
	if len(pages) != 2 || pages[0].Limit == 0 || pages[1].Continue != "page2" {
		t.Errorf("list requests %+v, want two pages of a limited size", pages)
	}
}

// watchLive waits until the fake clientset's watch of run delivers changes (it misses those
// made between its list and its start): it updates a probe Job of the run until the watch's
// cache shows it, then deletes it and waits until the cache has let it go.
func watchLive(t *testing.T, cs *fake.Clientset, w *runWatch, run string) {
	t.Helper()
	ctx := context.Background()
	probe := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default",
		Labels: map[string]string{LabelManagedBy: "jikken", LabelRun: run}}}
	probe, err := cs.BatchV1().Jobs("default").Create(ctx, probe, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	waitFor(t, "the watch to deliver a change", func() bool {
		n++
		probe.Annotations = map[string]string{"probe": strconv.Itoa(n)}
		if _, err := cs.BatchV1().Jobs("default").Update(ctx, probe, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, ok, _ := w.jobs.GetStore().GetByKey("default/probe")
		return ok
	})
	if err := cs.BatchV1().Jobs("default").Delete(ctx, "probe", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watch to see the probe deleted", func() bool {
		_, ok, _ := w.jobs.GetStore().GetByKey("default/probe")
		return !ok
	})
}

// TestCheckpointedPod: a trial that keeps a checkpoint gets a grace period of at least its
// checkpoint's before, and its checkpoint folder is one of the pod's, which trial-exec restores.
func TestCheckpointedPod(t *testing.T) {
	cfg := Config{Namespace: "default", StopGrace: 10 * time.Second}
	cfg.defaults()
	tr := trial("t")
	tr.Checkpoint = &experiment.Checkpoint{Before: experiment.Duration(2 * time.Minute)}
	j, err := cfg.Job(PodSpec{Run: "r", Trial: tr, Attempt: 1, Env: []string{"JIKKEN_CHECKPOINT_DIR=/home/me/.cache/jikken/work/r/t+checkpoint"}})
	if err != nil {
		t.Fatal(err)
	}
	pod := j.Spec.Template.Spec
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g != 120 {
		t.Errorf("grace period %v, want 120", g)
	}
	found := false
	for _, e := range pod.Containers[0].Env {
		found = found || e.Name == "JIKKEN_CHECKPOINT_DIR" && e.Value == ckptDir
	}
	if !found {
		t.Errorf("env %v: JIKKEN_CHECKPOINT_DIR is not the pod's %s", pod.Containers[0].Env, ckptDir)
	}
	j, _ = cfg.Job(PodSpec{Run: "r", Trial: trial("t"), Attempt: 1})
	if g := j.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != 10 {
		t.Errorf("grace period of a trial without a checkpoint %v, want 10", g)
	}
}
