package kubernetes_test

// Tests against a real control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler built from source, KWOK faking nodes and pod lifecycles). Skipped unless
// JIKKEN_K8S_BIN is set; run them with 'make test-k8s'.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/yaml"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

type env struct {
	c    *k8stest.Cluster
	runs store.Runs
	work string
}

func setup(t *testing.T, o k8stest.Options, nodes ...k8stest.Node) *env {
	t.Helper()
	c := k8stest.Start(t, o)
	c.AddNodes(t, nodes...)
	blob, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &env{c: c, runs: store.Runs{Blob: blob}, work: t.TempDir()}
}

func (e *env) backend(t *testing.T, mod func(*kubernetes.Config)) *kubernetes.Backend {
	t.Helper()
	cfg := kubernetes.Config{Kubeconfig: e.c.Kubeconfig, Namespace: "default", StoreURL: e.runs.Blob.Location(), Store: e.runs.Blob,
		AllowLocalStore: true, ExecutorImage: "jikken:test", PendingTimeout: 20 * time.Second, QPS: 200, Burst: 400}
	if mod != nil {
		mod(&cfg)
	}
	b, err := kubernetes.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func (e *env) manifest(t *testing.T, run string, trials []experiment.Trial, jobs int) *store.Manifest {
	t.Helper()
	for i := range trials {
		trials[i].Index = i
	}
	m := &store.Manifest{RunID: run, Experiment: "test", Backend: "kubernetes", Options: store.RunOptions{Jobs: jobs}, Trials: trials}
	if err := e.runs.WriteManifest(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (e *env) execute(t *testing.T, b runner.Backend, m *store.Manifest) *runner.Summary {
	t.Helper()
	r := &runner.Runner{Backend: b, Runs: e.runs, Jobs: m.Options.Jobs, WorkRoot: e.work, Workdir: e.work}
	sum, err := r.Execute(context.Background(), m, false)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func fakeTrial(name string, labels map[string]string) experiment.Trial {
	return experiment.Trial{Name: name, Image: "example.com/trainer:1", Cmd: experiment.Command{Argv: []string{"train"}}, Labels: labels}
}

func jobsOf(t *testing.T, e *env, run string) []string {
	t.Helper()
	list, err := e.c.Client.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.RunSelector(run)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range list.Items {
		names = append(names, j.Name)
	}
	return names
}

// attemptsOf counts the attempts the run's Jobs hold (an Indexed Job one per index) whose pod
// exists.
func attemptsOf(t *testing.T, e *env, run string) int {
	t.Helper()
	pods, err := e.c.Client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.RunSelector(run)})
	if err != nil {
		t.Fatal(err)
	}
	return len(pods.Items)
}

func TestClusterGPURunOf50(t *testing.T) {
	gpuTaint := []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
	var nodes []k8stest.Node
	for i := range 4 {
		nodes = append(nodes, k8stest.Node{Name: fmt.Sprintf("gpu-%d", i), GPU: 16, Labels: map[string]string{"pool": "gpu"}, Taints: gpuTaint})
	}
	nodes = append(nodes, k8stest.Node{Name: "cpu-0"})
	e := setup(t, k8stest.Options{DelayMS: 300, JitterMS: 500}, nodes...)
	var trials []experiment.Trial
	for i := range 50 {
		tr := fakeTrial(fmt.Sprintf("train/seed=%d", i), nil)
		tr.Resources = experiment.Resources{CPU: 1, Memory: 1 << 30, GPU: 1}
		tr.NodeSelector = map[string]string{"pool": "gpu"}
		trials = append(trials, tr)
	}
	m := e.manifest(t, "run-gpu", trials, 50)
	sum := e.execute(t, e.backend(t, nil), m)
	if sum.Status != store.Succeeded || sum.Counts.Succeeded != 50 {
		t.Fatalf("run %s: %+v", sum.Status, sum.Counts)
	}
	for _, rec := range sum.Trials {
		if rec == nil || rec.Status != store.Succeeded || len(rec.Attempts) != 1 || rec.ExitCode == nil || *rec.ExitCode != 0 {
			t.Errorf("trial record %+v", rec)
		}
		// The digest the node reported is pinned in the record, for 'jikken reproduce'.
		if want := "example.com/trainer:1@sha256:" + k8stest.FakeDigest; rec != nil && rec.ImageDigest != want {
			t.Errorf("trial %s image digest %q, want %q", rec.Name, rec.ImageDigest, want)
		}
	}
	pods, err := e.c.Client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.RunSelector("run-gpu")})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Spec.NodeName, "gpu-") {
			t.Errorf("pod %s on %s, want a GPU node", p.Name, p.Spec.NodeName)
		}
		if q := p.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; q.Cmp(resource.MustParse("1")) != 0 {
			t.Errorf("pod %s GPU limit %v", p.Name, q)
		}
	}
	// A matrix of seeds started at once runs as Indexed Jobs, not 50 Jobs.
	list, err := e.c.Client.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.RunSelector("run-gpu")})
	if err != nil {
		t.Fatal(err)
	}
	indexes := 0
	for _, j := range list.Items {
		if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
			indexes += int(*j.Spec.Completions)
		}
	}
	if len(list.Items) > 3 || indexes < 48 {
		t.Errorf("%d Jobs holding %d trials as indexes: want the 50 trials in at most 3 Indexed Jobs", len(list.Items), indexes)
	}
}

// TestClusterArrayIndexFailsAlone: in an Indexed Job of six trials, the pod of index 1 fails;
// its trial alone fails that attempt and is retried as a Job of its own, the other five
// succeed in the array, and every record says so. The same experiment with JobPerAttempt runs
// six Jobs.
func TestClusterArrayIndexFailsAlone(t *testing.T) {
	e := setup(t, k8stest.Options{DelayMS: 500}, k8stest.Node{Name: "n0"})
	var trials []experiment.Trial
	for i := range 6 {
		tr := fakeTrial(fmt.Sprintf("train/seed=%d", i), map[string]string{"jikken-test/outcome": "fail-index-1"})
		tr.Cmd = experiment.Command{Argv: []string{"train", "--seed", fmt.Sprint(i)}}
		tr.Retries, tr.Backoff = 1, experiment.Duration(10*time.Millisecond)
		trials = append(trials, tr)
	}
	m := e.manifest(t, "run-array", trials, 6)
	sum := e.execute(t, e.backend(t, nil), m)
	if sum.Status != store.Succeeded || sum.Counts.Succeeded != 6 {
		t.Fatalf("run %s %+v", sum.Status, sum.Counts)
	}
	retried := 0
	for _, rec := range sum.Trials {
		switch {
		case len(rec.Attempts) == 2 && *rec.Attempts[0].ExitCode == 3 && *rec.Attempts[1].ExitCode == 0:
			retried++
		case len(rec.Attempts) != 1 || *rec.ExitCode != 0:
			t.Errorf("trial %s attempts %+v", rec.Name, rec.Attempts)
		}
	}
	if retried != 1 {
		t.Errorf("%d trials retried after a failed first attempt, want the one at index 1", retried)
	}
	list, err := e.c.Client.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.RunSelector("run-array")})
	if err != nil {
		t.Fatal(err)
	}
	var shapes []string
	for _, j := range list.Items {
		shapes = append(shapes, fmt.Sprintf("%s/%d", j.Labels[kubernetes.LabelAttempt], *j.Spec.Completions))
	}
	slices.Sort(shapes)
	if want := []string{"1/6", "2/1"}; !slices.Equal(shapes, want) {
		t.Errorf("Jobs (attempt/completions) %v, want %v: the six first attempts in one array, the retry alone", shapes, want)
	}

	m = e.manifest(t, "run-per-attempt", trials, 6)
	sum = e.execute(t, e.backend(t, func(c *kubernetes.Config) { c.JobPerAttempt = true }), m)
	if sum.Status != store.Succeeded || sum.Counts.Succeeded != 6 {
		t.Fatalf("run with a Job per attempt %s %+v", sum.Status, sum.Counts)
	}
	if n := len(jobsOf(t, e, "run-per-attempt")); n != 6 {
		t.Errorf("%d Jobs with JobPerAttempt, want 6", n)
	}
}

func TestClusterFailuresAndRetries(t *testing.T) {
	e := setup(t, k8stest.Options{DelayMS: 200}, k8stest.Node{Name: "n0"})
	flaky := fakeTrial("flaky", map[string]string{"jikken-test/outcome": "fail-once"})
	flaky.Retries, flaky.Backoff = 1, experiment.Duration(10*time.Millisecond)
	broken := fakeTrial("broken", map[string]string{"jikken-test/outcome": "fail"})
	broken.Retries, broken.Backoff = 1, experiment.Duration(10*time.Millisecond)
	badImage := fakeTrial("bad-image", map[string]string{"jikken-test/outcome": "bad-image"})
	tooBig := fakeTrial("too-big", nil)
	tooBig.Resources.GPU = 64
	m := e.manifest(t, "run-fail", []experiment.Trial{flaky, broken, badImage, tooBig, fakeTrial("fine", nil)}, 5)
	sum := e.execute(t, e.backend(t, func(c *kubernetes.Config) { c.PendingTimeout = 3 * time.Second }), m)
	recs := map[string]*store.TrialRecord{}
	for _, r := range sum.Trials {
		recs[r.Name] = r
	}
	if r := recs["flaky"]; r.Status != store.Succeeded || len(r.Attempts) != 2 || *r.Attempts[0].ExitCode != 3 {
		t.Errorf("flaky: %+v", r)
	}
	if r := recs["broken"]; r.Status != store.Failed || len(r.Attempts) != 2 || *r.ExitCode != 3 {
		t.Errorf("broken: %+v", r)
	}
	if r := recs["bad-image"]; r.Status != store.Failed || !strings.Contains(r.Reason, "image pull failed for example.com/trainer:1") {
		t.Errorf("bad-image: %+v", r)
	}
	if r := recs["too-big"]; r.Status != store.Failed || !strings.Contains(r.Reason, "unschedulable") || !strings.Contains(r.Reason, "nvidia.com/gpu") {
		t.Errorf("too-big: %+v", r)
	}
	if r := recs["fine"]; r.Status != store.Succeeded {
		t.Errorf("fine: %+v (the run continues past failed trials)", r)
	}
}

func TestClusterNodeLoss(t *testing.T) {
	testNodeLoss(t, 1)
}

// The same for three trials in one Indexed Job: each index's pod is evicted, each trial fails
// that attempt with the eviction's reason (without waiting for the Job's status, which a pod on
// a dead node holds up) and succeeds on retry on the other node.
func TestClusterNodeLossInAnArray(t *testing.T) {
	testNodeLoss(t, 3)
}

// testNodeLoss runs n trials whose first attempts run on a node that is then lost.
func testNodeLoss(t *testing.T, n int) {
	// The first attempt's pod never ends by itself: only the node loss ends it.
	e := setup(t, k8stest.Options{NodeMonitorGrace: 5 * time.Second}, k8stest.Node{Name: "doomed"})
	var trials []experiment.Trial
	for i := range n {
		tr := fakeTrial(fmt.Sprintf("long-%d", i), map[string]string{"jikken-test/outcome": "hang-once"})
		tr.Retries, tr.Backoff = 1, experiment.Duration(10*time.Millisecond)
		trials = append(trials, tr)
	}
	m := e.manifest(t, "run-node", trials, n)
	b := e.backend(t, func(c *kubernetes.Config) { c.NodeLossTolerance = time.Second })
	done := make(chan *runner.Summary, 1)
	go func() { done <- e.execute(t, b, m) }()
	waitUntil(t, "the trials' pods to run on the doomed node", func() bool {
		pods, _ := e.c.Client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.RunSelector("run-node")})
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return len(pods.Items) == n && running == n
	})
	if n > 1 {
		if jobs := jobsOf(t, e, "run-node"); len(jobs) != 1 {
			t.Fatalf("Jobs %v, want one Indexed Job", jobs)
		}
	}
	e.c.AddNodes(t, k8stest.Node{Name: "healthy"})
	e.c.LoseNode(t, "doomed")
	var sum *runner.Summary
	select {
	case sum = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the attempts on the lost node never ended")
	}
	for _, r := range sum.Trials {
		if r.Status != store.Succeeded || len(r.Attempts) != 2 || !strings.Contains(r.Attempts[0].Reason, "doomed") {
			t.Errorf("record %+v", r)
		}
	}
}

// TestClusterServiceTrialIsReachableByName checks the DNS records a cluster's DNS would serve:
// the EndpointSlice of the run's headless Service names the service trial's pod by the trial's
// name, at the pod's address, while its dependant runs; and the Service goes with the run.
func TestClusterServiceTrialIsReachableByName(t *testing.T) {
	e := setup(t, k8stest.Options{}, k8stest.Node{Name: "n0"})
	ctx := context.Background()
	db := fakeTrial("db", map[string]string{"jikken-test/outcome": "hang"})
	db.Service = true
	train := fakeTrial("train", map[string]string{"jikken-test/delay": "6s"})
	train.Depends = []experiment.Dependency{{Trial: "db", Condition: experiment.Started}}
	m := e.manifest(t, "run-svc", []experiment.Trial{db, train}, 1)
	done := make(chan *runner.Summary, 1)
	go func() { done <- e.execute(t, e.backend(t, nil), m) }()

	svcName := kubernetes.RunServiceName("run-svc")
	var podIP string
	waitUntil(t, "an EndpointSlice naming the db pod", func() bool {
		pods, err := e.c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelService + "=true"})
		if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.PodIP == "" {
			return false
		}
		podIP = pods.Items[0].Status.PodIP
		slices, err := e.c.Client.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svcName})
		if err != nil {
			return false
		}
		for _, sl := range slices.Items {
			for _, ep := range sl.Endpoints {
				if ep.Hostname != nil && *ep.Hostname == "db" && len(ep.Addresses) == 1 && ep.Addresses[0] == podIP {
					return true
				}
			}
		}
		return false
	})
	pods, err := e.c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelTrial + "=train"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the dependant's pod: %v %v", pods, err)
	}
	if dns := pods.Items[0].Spec.DNSConfig; dns == nil || len(dns.Searches) != 1 || dns.Searches[0] != svcName+".default.svc.cluster.local" {
		t.Errorf("the dependant does not search the run's domain: %+v", dns)
	}
	var sum *runner.Summary
	select {
	case sum = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the run did not end")
	}
	if sum.Status != store.Succeeded {
		t.Fatalf("run %s %+v", sum.Status, sum.Counts)
	}
	waitUntil(t, "the garbage collector to delete the Service with the service's Job", func() bool {
		_, err := e.c.Client.CoreV1().Services("default").Get(ctx, svcName, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(3 * time.Minute); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waiting for %s", what)
		}
	}
}

func TestClusterKillDeletesOnlyThisRun(t *testing.T) {
	e := setup(t, k8stest.Options{}, k8stest.Node{Name: "n0"})
	b := e.backend(t, nil)
	ctx := context.Background()
	// run-a's trials start at once and share an Indexed Job; run-b's one by one, a Job each.
	for _, run := range []string{"run-a", "run-b"} {
		var wg sync.WaitGroup
		for i := range 3 {
			tr := fakeTrial(fmt.Sprintf("t%d", i), map[string]string{"jikken-test/outcome": "hang"})
			a := &runner.Attempt{RunID: run, Trial: tr, N: 1, Dir: t.TempDir(), Env: []string{"JIKKEN_RUN_ID=" + run}}
			start := func() {
				if _, err := b.Start(ctx, a); err != nil {
					t.Error(err)
				}
			}
			if run == "run-a" {
				wg.Go(start)
			} else {
				start()
			}
		}
		wg.Wait()
	}
	if t.Failed() {
		t.FailNow()
	}
	if n := len(jobsOf(t, e, "run-a")); n != 1 {
		t.Fatalf("run-a has %d Jobs, want one Indexed Job", n)
	}
	waitUntil(t, "six running pods", func() bool {
		pods, _ := e.c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
		return len(pods.Items) == 6
	})
	killer := e.backend(t, nil)
	live, err := killer.Live(ctx, "run-a")
	if err != nil || len(live) != 3 {
		t.Fatalf("Live = %v, %v", live, err)
	}
	for _, lt := range live {
		if err := killer.StopLive(ctx, lt); err != nil {
			t.Fatal(err)
		}
	}
	if jobs := jobsOf(t, e, "run-a"); len(jobs) != 0 {
		t.Errorf("jobs of the killed run left: %v", jobs)
	}
	waitUntil(t, "the killed run's pods to be deleted by propagation", func() bool {
		pods, _ := e.c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kubernetes.RunSelector("run-a")})
		return len(pods.Items) == 0
	})
	if jobs := jobsOf(t, e, "run-b"); len(jobs) != 3 {
		t.Errorf("the other run lost Jobs: %v", jobs)
	}
	pods, _ := e.c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kubernetes.RunSelector("run-b")})
	if len(pods.Items) != 3 {
		t.Errorf("the other run has %d pods, want 3", len(pods.Items))
	}
}

// TestClusterResumeReattaches runs a runner in a child process, SIGKILLs it once every trial's
// Job exists, and resumes the run here: the live Jobs are re-attached, none is created twice,
// and each trial's record lists one attempt.
func TestClusterResumeReattaches(t *testing.T) {
	testResume(t, "8s", false, false)
}

// The same with a Job per attempt.
func TestClusterResumeReattachesJobPerAttempt(t *testing.T) {
	testResume(t, "8s", false, true)
}

// A Job that finished while no runner watched it is collected by the resumed runner, not run
// again (TestClusterResumeReattaches failed about once in 30 runs when the machine was so slow
// that a Job completed before the resumed runner listed the run's Jobs).
func TestClusterResumeCollectsJobsFinishedMeanwhile(t *testing.T) {
	testResume(t, "4s", true, false)
}

// testResume runs six trials of delay in a child runner, SIGKILLs it once every Job exists
// (after they have all completed, with finishFirst), resumes the run and checks that the
// resumed runner re-attached to the same Jobs, one attempt each. The six trials share an
// Indexed Job unless jobPerAttempt.
func testResume(t *testing.T, delay string, finishFirst, jobPerAttempt bool) {
	e := setup(t, k8stest.Options{}, k8stest.Node{Name: "n0"})
	var trials []experiment.Trial
	for i := range 6 {
		trials = append(trials, fakeTrial(fmt.Sprintf("t%d", i), map[string]string{"jikken-test/delay": delay}))
	}
	m := e.manifest(t, "run-resume", trials, 6)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRunner$")
	cmd.Env = append(os.Environ(), "JIKKEN_TEST_RUNNER=1", "JIKKEN_TEST_KUBECONFIG="+e.c.Kubeconfig,
		"JIKKEN_TEST_STORE="+e.runs.Blob.Location(), "JIKKEN_TEST_WORK="+e.work, "JIKKEN_TEST_RUN="+m.RunID,
		fmt.Sprintf("JIKKEN_TEST_JOB_PER_ATTEMPT=%v", jobPerAttempt))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Every trial's Job (or index of one) and, for the resumed runner to find, its pod.
	waitUntil(t, "the child runner to create every Job", func() bool { return attemptsOf(t, e, m.RunID) == 6 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if finishFirst {
		waitUntil(t, "every Job to complete", func() bool {
			list, err := e.c.Client.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.RunSelector(m.RunID)})
			if err != nil {
				t.Fatal(err)
			}
			done := 0
			for _, j := range list.Items {
				done += int(j.Status.Succeeded)
			}
			return done == 6
		})
	}
	before := jobsOf(t, e, m.RunID)
	sum := e.execute(t, e.backend(t, nil), m)
	if sum.Status != store.Succeeded || sum.Counts.Succeeded != 6 {
		t.Fatalf("resumed run %s %+v", sum.Status, sum.Counts)
	}
	after := jobsOf(t, e, m.RunID)
	if strings.Join(before, ",") != strings.Join(after, ",") {
		t.Errorf("Jobs before resume %v, after %v: the resumed runner must re-attach, not create", before, after)
	}
	if want := map[bool]int{true: 6, false: 1}[jobPerAttempt]; len(after) != want {
		t.Errorf("%d Jobs, want %d", len(after), want)
	}
	// One pod, one attempt: the re-attached attempt is continued, not closed and counted again.
	recs, err := e.runs.Trials(context.Background(), m.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for name, rec := range recs {
		if len(rec.Attempts) != 1 || rec.Attempts[0].N != 1 {
			t.Errorf("%s lists attempts %+v, want attempt 1 alone", name, rec.Attempts)
		}
	}
}

// TestHelperRunner is the child process of TestClusterResumeReattaches.
func TestHelperRunner(t *testing.T) {
	if os.Getenv("JIKKEN_TEST_RUNNER") != "1" {
		t.Skip("helper process")
	}
	blob, err := store.OpenFolder(os.Getenv("JIKKEN_TEST_STORE"))
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	m, err := runs.Manifest(context.Background(), os.Getenv("JIKKEN_TEST_RUN"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := kubernetes.New(kubernetes.Config{Kubeconfig: os.Getenv("JIKKEN_TEST_KUBECONFIG"), Namespace: "default",
		StoreURL: blob.Location(), Store: blob, AllowLocalStore: true, JobPerAttempt: os.Getenv("JIKKEN_TEST_JOB_PER_ATTEMPT") == "true"})
	if err != nil {
		t.Fatal(err)
	}
	r := &runner.Runner{Backend: b, Runs: runs, Jobs: m.Options.Jobs, WorkRoot: os.Getenv("JIKKEN_TEST_WORK")}
	_, _ = r.Execute(context.Background(), m, false)
}

func TestClusterErrors(t *testing.T) {
	e := setup(t, k8stest.Options{}, k8stest.Node{Name: "n0"})
	ctx := context.Background()
	plan := []experiment.Trial{fakeTrial("t", nil)}
	limited := e.backend(t, func(c *kubernetes.Config) { c.Kubeconfig = e.c.LimitedKubeconfig })
	if err := limited.Check(ctx, plan); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("RBAC: %v", err)
	}
	missing := e.backend(t, func(c *kubernetes.Config) { c.Namespace = "nope" })
	if err := missing.Check(ctx, plan); err == nil || !strings.Contains(err.Error(), "namespace nope does not exist") {
		t.Errorf("namespace: %v", err)
	}
	dead := filepath.Join(t.TempDir(), "kubeconfig")
	kc, _ := os.ReadFile(e.c.Kubeconfig)
	server := e.c.Config.Host
	if err := os.WriteFile(dead, []byte(strings.Replace(string(kc), server, "https://127.0.0.1:1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	unreachable := e.backend(t, func(c *kubernetes.Config) { c.Kubeconfig = dead })
	if err := unreachable.Check(ctx, plan); err == nil || !strings.Contains(err.Error(), "cannot reach the Kubernetes API server") {
		t.Errorf("unreachable: %v", err)
	}
	if _, err := kubernetes.New(kubernetes.Config{Kubeconfig: filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("a missing kubeconfig must be an error")
	}
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "small"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("1"), corev1.ResourceLimitsCPU: resource.MustParse("1")}}}
	if _, err := e.c.Client.CoreV1().ResourceQuotas("default").Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	big := fakeTrial("big", nil)
	big.Resources.CPU = 4
	m := e.manifest(t, "run-quota", []experiment.Trial{big}, 1)
	sum := e.execute(t, e.backend(t, func(c *kubernetes.Config) { c.PendingTimeout = 5 * time.Second }), m)
	if r := sum.Trials[0]; r.Status != store.Failed || !strings.Contains(r.Reason, "exceeded quota") {
		t.Errorf("quota: %+v", r)
	}
}

func TestClusterArgoWorkflowValidates(t *testing.T) {
	e := setup(t, k8stest.Options{APIOnly: true})
	ctx := context.Background()
	crdYAML, err := os.ReadFile(filepath.Join(os.Getenv("JIKKEN_K8S_BIN"), "argo-crds", "argoproj.io_workflows.yaml"))
	if err != nil {
		t.Fatalf("Argo's Workflow CRD (scripts/ci/k8s.sh fetches it): %v", err)
	}
	dyn := dynamic.NewForConfigOrDie(e.c.Config)
	var crd unstructured.Unstructured
	if err := yaml.Unmarshal(crdYAML, &crd.Object); err != nil {
		t.Fatal(err)
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crdGVR).Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the Workflow CRD to be established", func() bool {
		got, err := dyn.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true
			}
		}
		return false
	})
	wfGVR := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflows"}
	cfg := kubernetes.Config{Namespace: "default", StoreURL: "s3://bucket/runs", StoreSecret: "jikken-s3", ExecutorImage: "jikken:test"}
	wf, err := cfg.WorkflowOf(argoPlan())
	if err != nil {
		t.Fatal(err)
	}
	y, err := wf.YAML()
	if err != nil {
		t.Fatal(err)
	}
	create := func(doc []byte) error {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return err
		}
		_, err := dyn.Resource(wfGVR).Namespace("default").Create(ctx, &u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		return err
	}
	// Retry until the CRD's schema is served (Established can precede the first use by a moment).
	var cerr error
	waitUntil(t, "the API server to serve workflows", func() bool {
		cerr = create(y)
		return cerr == nil || !strings.Contains(cerr.Error(), "the server could not find")
	})
	if cerr != nil {
		t.Fatalf("server-side dry-run of the exported workflow: %v\n%s", cerr, y)
	}
	// The schema is really checked: a malformed field is refused.
	bad := strings.Replace(string(y), "entrypoint: main", "entrypoint: {name: main}", 1)
	if err := create([]byte(bad)); err == nil {
		t.Error("a workflow with a malformed entrypoint passed the dry-run: the schema was not checked")
	}
}

func argoPlan() *store.Manifest {
	seed := int64(1)
	svc := experiment.Trial{Name: "db", Image: "redis:7", Cmd: experiment.Command{Shell: "redis-server"}, Service: true,
		Health: &experiment.Health{TCP: "localhost:6379"}}
	a := experiment.Trial{Name: "train/a", Index: 1, Image: "python:3.12", Cmd: experiment.Command{Argv: []string{"python", "t.py"}},
		Seed: &seed, Params: map[string]any{"lr": 0.1}, Retries: 2, Timeout: experiment.Duration(time.Hour),
		Resources: experiment.Resources{CPU: 2, Memory: 1 << 30, GPU: 1}, NodeSelector: map[string]string{"pool": "gpu"},
		Depends: []experiment.Dependency{{Trial: "db", Condition: experiment.Healthy}}}
	final := experiment.Trial{Name: "report", Index: 2, Image: "alpine", Cmd: experiment.Command{Shell: "echo ok"}, After: []string{"train/a"}}
	return &store.Manifest{RunID: "20260101-000000-sweep-ab12", Experiment: "sweep", Options: store.RunOptions{Jobs: 2},
		Trials: []experiment.Trial{svc, a, final}}
}

// TestClusterArgoRunsTheExport submits an export to Argo's own workflow-controller (v3.7.9,
// built from source) on the test cluster: a service, `after` edges, a retried trial and -j 2.
// Watching the pods, it checks the workflow reaches Succeeded with no trial's pod created before
// its `after` trials succeeded, the retried trial failing once and then succeeding, and at most 2
// trials at once, and exactly 2 at some point although the service runs beside them: the
// service does not take a seat of -j, as in jikken run.
func TestClusterArgoRunsTheExport(t *testing.T) {
	e := setup(t, k8stest.Options{DelayMS: 1500}, k8stest.Node{Name: "n0"}, k8stest.Node{Name: "n1"})
	e.c.StartArgo(t)
	ctx := context.Background()
	m := argoRun()
	cfg := kubernetes.Config{Namespace: "default", StoreURL: "s3://bucket/runs", ExecutorImage: "jikken:test"}
	wf, err := cfg.WorkflowOf(m)
	if err != nil {
		t.Fatal(err)
	}
	// On a real cluster the workflow's first step applies this ConfigMap; KWOK's nodes run no
	// argoexec, so the test creates what that step would.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: kubernetes.LimitConfigMapName(m.RunID)}, Data: map[string]string{"trials": "2"}}
	if _, err := e.c.Client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Every change of the workflow's pods, in the API server's order (a RetryWatcher resumes
	// from the last one if the server closes the watch).
	sel := "workflows.argoproj.io/workflow=" + wf.Metadata.Name
	pods := e.c.Client.CoreV1().Pods("default")
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	podWatch, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return pods.Watch(ctx, o)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer podWatch.Stop()

	y, err := wf.YAML()
	if err != nil {
		t.Fatal(err)
	}
	var u unstructured.Unstructured
	if err := yaml.Unmarshal(y, &u.Object); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(e.c.Config)
	workflows := dyn.Resource(kubernetes.WorkflowGVR).Namespace("default")
	if _, err := workflows.Create(ctx, &u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("submit: %v", err)
	}
	ended := waitWorkflowEnd(t, e, workflows, wf.Metadata.Name)
	if phase, _, _ := unstructured.NestedString(ended.Object, "status", "phase"); phase != "Succeeded" {
		msg, _, _ := unstructured.NestedString(ended.Object, "status", "message")
		t.Fatalf("workflow %s: %s (controller log in %s)", phase, msg, e.c.Dir)
	}
	// jikken status reads the same.
	if st, err := kubernetes.ReadWorkflow(ctx, e.c.Kubeconfig, "default", wf.Metadata.Name, 10*time.Second); err != nil || st.Phase != "Succeeded" {
		t.Errorf("ReadWorkflow: %+v, %v", st, err)
	}
	// The controller ended the workflow on what its own watch showed; this test's watch may lag
	// behind it. It has seen everything once it has seen each of the workflow's pods deleted by
	// the pod GC that follows success.
	events := podEventsUntilDeleted(t, e, podWatch.ResultChan(), podNodes(ended))
	checkArgoEvents(t, m, events, 2)
}

// waitWorkflowEnd watches the workflow until its controller ends it (5 minutes at most).
func waitWorkflowEnd(t *testing.T, e *env, workflows dynamic.ResourceInterface, name string) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	one := fields.OneTermEqualSelector("metadata.name", name).String()
	ev, err := watchtools.UntilWithSync(ctx, &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = one
			return workflows.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = one
			return workflows.Watch(ctx, o)
		},
	}, &unstructured.Unstructured{}, nil, func(ev watch.Event) (bool, error) {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			return false, nil
		}
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return phase == "Succeeded" || phase == "Failed" || phase == "Error", nil
	})
	if err != nil {
		t.Fatalf("workflow %s did not end within 5 minutes: %v (controller log in %s)", name, err, e.c.Dir)
	}
	return ev.Object.(*unstructured.Unstructured)
}

// podNodes counts the workflow's nodes that ran a pod: the pods there are, each a trial's try,
// a service or a resource step.
func podNodes(wf *unstructured.Unstructured) int {
	nodes, _, _ := unstructured.NestedMap(wf.Object, "status", "nodes")
	n := 0
	for _, node := range nodes {
		if m, ok := node.(map[string]any); ok && m["type"] == "Pod" {
			n++
		}
	}
	return n
}

// podEventsUntilDeleted reads the pod watch until it has seen n pods deleted (2 minutes at
// most) and returns every event it read.
func podEventsUntilDeleted(t *testing.T, e *env, ch <-chan watch.Event, n int) []podEvent {
	t.Helper()
	var events []podEvent
	deleted := map[string]bool{}
	timeout := time.After(2 * time.Minute)
	for len(deleted) < n {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the pod watch ended after %d of %d pods were deleted", len(deleted), n)
			}
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			events = append(events, podEvent{pod: pod.Name, trial: pod.Annotations[kubernetes.AnnotationTrial],
				service: pod.Labels[kubernetes.LabelService] == "true", phase: pod.Status.Phase, deleted: ev.Type == watch.Deleted})
			if ev.Type == watch.Deleted {
				deleted[pod.Name] = true
			}
		case <-timeout:
			t.Fatalf("%d of the workflow's %d pods deleted after it succeeded (Argo's pod GC; logs in %s)", len(deleted), n, e.c.Dir)
		}
	}
	return events
}

type podEvent struct {
	pod, trial string
	service    bool
	phase      corev1.PodPhase
	deleted    bool
}

// checkArgoEvents replays the pod events of a workflow: no pod of a trial before its `after`
// trials succeeded, at most jobs trial pods alive at once (and jobs at some point), and the
// retried trial's pods.
func checkArgoEvents(t *testing.T, m *store.Manifest, events []podEvent, jobs int) {
	t.Helper()
	alive := map[string]bool{}     // trial pods pending or running
	succeeded := map[string]bool{} // trials with a succeeded pod
	podsOf := map[string]map[string]bool{}
	failed := map[string]int{}
	seen := map[string]corev1.PodPhase{}
	peak, serviceUp, besideService := 0, false, false
	after := map[string][]string{}
	for _, tr := range m.Trials {
		after[tr.Name] = tr.After
	}
	for _, ev := range events {
		if ev.trial == "" {
			continue // a resource step's pod
		}
		if podsOf[ev.trial] == nil {
			podsOf[ev.trial] = map[string]bool{}
		}
		if !podsOf[ev.trial][ev.pod] {
			podsOf[ev.trial][ev.pod] = true
			for _, a := range after[ev.trial] {
				if !succeeded[a] {
					t.Errorf("a pod of %s was created before %s (after) succeeded", ev.trial, a)
				}
			}
		}
		if seen[ev.pod] != ev.phase && ev.phase == corev1.PodFailed {
			failed[ev.trial]++
		}
		seen[ev.pod] = ev.phase
		live := !ev.deleted && (ev.phase == corev1.PodPending || ev.phase == corev1.PodRunning)
		if ev.service {
			serviceUp = ev.phase == corev1.PodRunning && !ev.deleted
		} else {
			alive[ev.pod] = live
		}
		if ev.phase == corev1.PodSucceeded {
			succeeded[ev.trial] = true
		}
		n := 0
		for _, a := range alive {
			if a {
				n++
			}
		}
		if n > jobs {
			t.Errorf("%d trials at once with -j %d", n, jobs)
		}
		peak = max(peak, n)
		besideService = besideService || n == jobs && serviceUp
	}
	if peak != jobs || !besideService {
		t.Errorf("at most %d trials ran at once with -j %d (%d beside the running service): the service took a seat", peak, jobs, map[bool]int{true: jobs}[besideService])
	}
	for _, tr := range m.Trials {
		if !succeeded[tr.Name] && !tr.Service {
			t.Errorf("%s never succeeded", tr.Name)
		}
	}
	if len(podsOf["flaky"]) != 2 || failed["flaky"] != 1 {
		t.Errorf("the retried trial had pods %v, %d failed; want 2, the first failed", podsOf["flaky"], failed["flaky"])
	}
	if t.Failed() {
		for _, ev := range events {
			t.Logf("%s %s service=%v deleted=%v", ev.pod, ev.phase, ev.service, ev.deleted)
		}
	}
}

// argoRun is an experiment for Argo's controller: a service running beside the trials, a
// first step, four trials after it (one failing once and retried) that need the service, and
// a report after them, with -j 2.
func argoRun() *store.Manifest {
	// The service runs until Argo stops it at the end (a daemon pod that ends on its own fails).
	svc := experiment.Trial{Name: "db", Image: "redis:7", Cmd: experiment.Command{Shell: "redis-server"}, Service: true,
		Labels: map[string]string{"jikken-test/outcome": "hang"}}
	trials := []experiment.Trial{svc, {Name: "prep", Image: "alpine", Cmd: experiment.Command{Shell: "prep"}}}
	for _, name := range []string{"train-a", "train-b", "train-c", "flaky"} {
		tr := experiment.Trial{Name: name, Image: "alpine", Cmd: experiment.Command{Shell: "train"}, After: []string{"prep"},
			Depends: []experiment.Dependency{{Trial: "db", Condition: experiment.Started}}}
		if name == "flaky" {
			tr.Retries, tr.Backoff = 1, experiment.Duration(time.Second)
			tr.Labels = map[string]string{"jikken-test/outcome": "fail-once"}
		}
		trials = append(trials, tr)
	}
	trials = append(trials, experiment.Trial{Name: "report", Image: "alpine", Cmd: experiment.Command{Shell: "report"},
		After: []string{"train-a", "train-b", "train-c", "flaky"}})
	for i := range trials {
		trials[i].Index = i
	}
	return &store.Manifest{RunID: "20260101-000000-argo-ab12", Experiment: "argo", Options: store.RunOptions{Jobs: 2}, Trials: trials}
}
