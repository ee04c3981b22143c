package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/jikken-dev/jikken/executor"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

func TestParseIndexes(t *testing.T) {
	s, err := parseIndexes("1,3-5,70")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 80 {
		if want := i == 1 || (i >= 3 && i <= 5) || i == 70; s.has(i) != want {
			t.Errorf("has(%d) = %v", i, !want)
		}
	}
	if s.has(-1) || s.has(1000) {
		t.Error("indexes outside the set")
	}
	for _, bad := range []string{"a", "5-3", "1,,2", "-1"} {
		if _, err := parseIndexes(bad); err == nil {
			t.Errorf("parseIndexes(%q) took it", bad)
		}
	}
}

// seedTrial is trial i of a matrix of seeds: the same pod but for its command and params.
func seedTrial(i int) experiment.Trial {
	tr := trial(fmt.Sprintf("train/seed=%d", i))
	seed := int64(i)
	tr.Seed = &seed
	tr.Cmd = experiment.Command{Argv: []string{"python", "train.py", "--seed", fmt.Sprint(i)}}
	return tr
}

// sweep is the first attempts of n trials of a matrix of seeds.
func sweep(t *testing.T, run string, n int) []*runner.Attempt {
	var atts []*runner.Attempt
	for i := range n {
		atts = append(atts, attempt(t, run, seedTrial(i), 1))
	}
	return atts
}

// startAll starts the attempts at once, as the runner starts a sweep, and returns their
// processes in order.
func startAll(t *testing.T, b *Backend, atts []*runner.Attempt) []*process {
	t.Helper()
	procs := make([]*process, len(atts))
	var wg sync.WaitGroup
	for i, a := range atts {
		wg.Go(func() {
			p, err := b.Start(context.Background(), a)
			if err != nil {
				t.Error(err)
				return
			}
			procs[i] = p.(*process)
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return procs
}

func listJobs(t *testing.T, cs *fake.Clientset) []batchv1.Job {
	t.Helper()
	list, err := cs.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// indexPod adds the pod the Job controller makes for index i of an array Job.
func indexPod(t *testing.T, cs *fake.Clientset, j *batchv1.Job, i int, status corev1.PodStatus) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-x", j.Name, i), Namespace: j.Namespace,
		Labels:      j.Spec.Template.Labels,
		Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(i)}}, Status: status}
	created, err := cs.CoreV1().Pods(j.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

func TestASweepRunsAsOneIndexedJob(t *testing.T) {
	b, cs, _ := newFake(t)
	atts := sweep(t, "r1", 5)
	procs := startAll(t, b, atts)
	jobs := listJobs(t, cs)
	if len(jobs) != 1 {
		t.Fatalf("%d Jobs for 5 trials of a matrix, want one Indexed Job", len(jobs))
	}
	j := &jobs[0]
	spec := j.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || *spec.Completions != 5 || *spec.Parallelism != 5 {
		t.Errorf("Job spec: mode %v, completions %v, parallelism %v", spec.CompletionMode, spec.Completions, spec.Parallelism)
	}
	// Each index runs once and fails alone; the runner retries it as a new attempt.
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex != 0 || spec.BackoffLimit != nil {
		t.Errorf("backoffLimitPerIndex %v, backoffLimit %v: want 0 and unset", spec.BackoffLimitPerIndex, spec.BackoffLimit)
	}
	if spec.ActiveDeadlineSeconds != nil || spec.Template.Spec.ActiveDeadlineSeconds == nil || *spec.Template.Spec.ActiveDeadlineSeconds != 90 {
		t.Errorf("the trial's 90 s timeout must be each pod's deadline, not the Job's")
	}
	if _, ok := spec.Template.Labels[LabelTrial]; ok || j.Labels[LabelAttempt] != "1" {
		t.Errorf("template labels %v: a trial's label on every index's pod", spec.Template.Labels)
	}
	var trials []string
	if err := json.Unmarshal([]byte(j.Annotations[AnnotationTrials]), &trials); err != nil {
		t.Fatal(err)
	}
	main := spec.Template.Spec.Containers[0]
	if main.Command[len(main.Command)-1] != "--" || !slices.Contains(main.Command, "--index-table") {
		t.Errorf("command %q: the executor takes the command from the index table", main.Command)
	}
	for _, e := range main.Env {
		if strings.HasPrefix(e.Name, "JIKKEN_TRIAL") || e.Name == "JIKKEN_PARAMS_JSON" {
			t.Errorf("a trial's own %s in the shared template", e.Name)
		}
	}
	cm, err := cs.CoreV1().ConfigMaps("default").Get(context.Background(), j.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Name != j.Name {
		t.Errorf("the index table's owners %v: the Job's garbage", cm.OwnerReferences)
	}
	for i, p := range procs {
		name := atts[i].Trial.Name
		if p.name != j.Name || trials[p.index] != name {
			t.Errorf("trial %s at %s index %d, the Job says %q", name, p.name, p.index, trials[p.index])
		}
		var entry executor.IndexedTrial
		if err := json.Unmarshal([]byte(cm.Data[fmt.Sprint(p.index)]), &entry); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(entry.Argv, atts[i].Trial.Cmd.Argv) || !slices.Contains(entry.Env, "JIKKEN_TRIAL="+name) ||
			!slices.Contains(entry.Env, "JIKKEN_OUTPUT_DIR="+outDir) || !slices.Contains(entry.Env, `JIKKEN_PARAMS_JSON={"lr":0.1,"seed":3}`) {
			t.Errorf("index %d runs %+v, want trial %s's command and environment", p.index, entry, name)
		}
		if want := "job:default/" + j.Name + "#" + fmt.Sprint(p.index); p.Handle() != want {
			t.Errorf("handle %s, want %s", p.Handle(), want)
		}
	}

	byIndex := map[int]*process{}
	for _, p := range procs {
		byIndex[p.index] = p
	}
	// Index 0's pod succeeded, index 1's failed with its exit status, index 2 is counted
	// complete by the Job before its pod is seen.
	indexPod(t, cs, j, 0, corev1.PodStatus{Phase: corev1.PodSucceeded})
	indexPod(t, cs, j, 1, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}})
	j.Status.CompletedIndexes = "2"
	if _, err := cs.BatchV1().Jobs("default").UpdateStatus(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 3, 0} {
		if e := wait(t, byIndex[i]); e.Code != want || e.Err != nil {
			t.Errorf("index %d: %+v, want exit %d", i, e, want)
		}
	}
	// Stopping index 3 deletes its pod, not the Job: index 4 goes on.
	pod3 := indexPod(t, cs, j, 3, corev1.PodStatus{Phase: corev1.PodRunning})
	indexPod(t, cs, j, 4, corev1.PodStatus{Phase: corev1.PodRunning})
	waitFor(t, "the watch to see index 3's pod", func() bool { return len(b.watches["r1"].podsOf(procKey(j.Name, 3))) == 1 })
	if err := byIndex[3].Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if e := wait(t, byIndex[3]); e.Code != 137 {
		t.Errorf("stopped index: %+v", e)
	}
	if _, err := cs.CoreV1().Pods("default").Get(context.Background(), pod3.Name, metav1.GetOptions{}); err == nil {
		t.Error("the stopped index's pod is still there")
	}
	if len(listJobs(t, cs)) != 1 {
		t.Fatal("stopping one index deleted the Job")
	}
	// The last index still running: stopping it deletes the Job.
	if err := byIndex[4].Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if e := wait(t, byIndex[4]); e.Code != 137 {
		t.Errorf("stopped last index: %+v", e)
	}
	if n := len(listJobs(t, cs)); n != 0 {
		t.Errorf("%d Jobs left once every index was stopped or ended", n)
	}
}

// TestWhatCannotShareAJobRunsAlone: a lone attempt, attempts that differ in their pod, and
// services run as Jobs of their own; so does every attempt with JobPerAttempt.
func TestWhatCannotShareAJobRunsAlone(t *testing.T) {
	b, cs, _ := newFake(t)
	startAll(t, b, []*runner.Attempt{attempt(t, "r1", seedTrial(0), 1)})
	if _, err := cs.BatchV1().Jobs("default").Get(context.Background(), JobName("r1", seedTrial(0).Name, 1), metav1.GetOptions{}); err != nil {
		t.Errorf("a lone attempt: %v", err)
	}
	other := seedTrial(1)
	other.Image = "python:3.13"
	svc := seedTrial(2)
	svc.Service = true
	retry := seedTrial(3)
	startAll(t, b, []*runner.Attempt{attempt(t, "r2", seedTrial(0), 1), attempt(t, "r2", other, 1), attempt(t, "r2", svc, 1), attempt(t, "r2", retry, 2)})
	for _, j := range listJobs(t, cs) {
		if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
			t.Errorf("Job %s is an array of attempts that differ in image, service or attempt", j.Name)
		}
	}

	b2, cs2, _ := newFake(t)
	b2.cfg.JobPerAttempt = true
	var atts []*runner.Attempt
	for i := range 4 {
		atts = append(atts, attempt(t, "r3", seedTrial(i), 1))
	}
	startAll(t, b2, atts)
	if n := len(listJobs(t, cs2)); n != 4 {
		t.Errorf("JobPerAttempt: %d Jobs for 4 attempts", n)
	}
}

// TestResumeAdoptsIndexes: a resumed runner re-attaches to the indexes of an array Job an
// earlier runner left, finished or not, and a stray index of a trial whose newest attempt is
// elsewhere is stopped alone.
func TestResumeAdoptsIndexes(t *testing.T) {
	b, cs, _ := newFake(t)
	var specs []PodSpec
	for i := range 3 {
		specs = append(specs, PodSpec{Run: "r1", Trial: seedTrial(i), Attempt: 1})
	}
	j, err := b.cfg.ArrayJob(specs)
	if err != nil {
		t.Fatal(err)
	}
	j.Status.CompletedIndexes = "0"
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Trial 2's newest attempt is its own Job, attempt 2.
	retried, err := b.cfg.Job(PodSpec{Run: "r1", Trial: seedTrial(2), Attempt: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), retried, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Check(context.Background(), []experiment.Trial{seedTrial(0), seedTrial(1), seedTrial(2)}); err != nil {
		t.Fatal(err)
	}
	b.Plan([]experiment.Trial{seedTrial(0), seedTrial(1), seedTrial(2)})
	live, err := b.Live(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].Trial != seedTrial(2).Name || live[0].Handle != "job:default/"+j.Name+"#2" {
		t.Fatalf("live %+v, want trial 2's stray index alone", live)
	}
	adopted := b.Adopted("r1")
	if adopted[seedTrial(0).Name] != 1 || adopted[seedTrial(1).Name] != 1 || adopted[seedTrial(2).Name] != 2 {
		t.Errorf("adopted %v", adopted)
	}
	p0 := startAll(t, b, []*runner.Attempt{attempt(t, "r1", seedTrial(0), 1)})[0]
	if p0.name != j.Name || p0.index != 0 {
		t.Errorf("trial 0 re-attached to %s index %d", p0.name, p0.index)
	}
	if e := wait(t, p0); e.Code != 0 {
		t.Errorf("index 0 completed while no runner watched: %+v", e)
	}
	if n := len(listJobs(t, cs)); n != 2 {
		t.Errorf("%d Jobs after re-attaching, want the 2 there were", n)
	}
}

// TestAnIndexThatCannotRunFailsAlone: an index whose pod cannot be scheduled fails its trial
// after the pending time and is removed by deleting its pod; its array Job, and the other
// index's pod, stay.
func TestAnIndexThatCannotRunFailsAlone(t *testing.T) {
	b, cs, _ := newFakeWaiting(t, 300*time.Millisecond)
	procs := startAll(t, b, []*runner.Attempt{attempt(t, "r1", seedTrial(0), 1), attempt(t, "r1", seedTrial(1), 1)})
	jobs := listJobs(t, cs)
	if len(jobs) != 1 {
		t.Fatalf("%d Jobs", len(jobs))
	}
	j := &jobs[0]
	stuck := indexPod(t, cs, j, procs[0].index, corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", LastTransitionTime: metav1.Now()}}})
	running := indexPod(t, cs, j, procs[1].index, corev1.PodStatus{Phase: corev1.PodRunning})
	e := wait(t, procs[0])
	if e.Err == nil || !strings.Contains(e.Err.Error(), "unschedulable") {
		t.Errorf("stuck index: %+v", e)
	}
	if _, err := cs.CoreV1().Pods("default").Get(context.Background(), stuck.Name, metav1.GetOptions{}); err == nil {
		t.Error("the stuck index's pod is still there")
	}
	if _, err := cs.CoreV1().Pods("default").Get(context.Background(), running.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the other index's pod: %v", err)
	}
	if len(listJobs(t, cs)) != 1 {
		t.Error("the array Job was deleted with one index that could not run")
	}
}

// TestStoppingAWholeArrayDeletesItsJobOnce: a runner stopping a run stops every attempt at
// once; an array's indexes are then removed with one delete of its Job, not a delete per pod.
func TestStoppingAWholeArrayDeletesItsJobOnce(t *testing.T) {
	b, cs, _ := newFake(t)
	atts := sweep(t, "r1", 20)
	procs := startAll(t, b, atts)
	j := listJobs(t, cs)[0]
	for _, p := range procs {
		indexPod(t, cs, &j, p.index, corev1.PodStatus{Phase: corev1.PodRunning})
	}
	waitFor(t, "the watch to see the pods", func() bool { return len(b.watches["r1"].podsOf(procKey(j.Name, 19))) == 1 })
	cs.ClearActions()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() {
			if err := p.Stop(time.Second); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, p := range procs {
		if e := wait(t, p); e.Code != 137 {
			t.Errorf("index %d: %+v", p.index, e)
		}
	}
	deletes := map[string]int{}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "delete" {
			deletes[a.GetResource().Resource]++
		}
	}
	if deletes["jobs"] != 1 || deletes["pods"] != 0 {
		t.Errorf("deletes %v, want the Job's alone", deletes)
	}
}

// TestTheIndexTableComesFirst: the index table is created before its Job (pods that found no
// table would wait for it forever, were the runner killed between the two creates), and a Job
// the API server refuses leaves no table behind.
func TestTheIndexTableComesFirst(t *testing.T) {
	b, cs, _ := newFake(t)
	startAll(t, b, []*runner.Attempt{attempt(t, "r1", seedTrial(0), 1), attempt(t, "r1", seedTrial(1), 1)})
	var order []string
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" && (a.GetResource().Resource == "jobs" || a.GetResource().Resource == "configmaps") {
			order = append(order, a.GetResource().Resource)
		}
	}
	if !slices.Equal(order, []string{"configmaps", "jobs"}) {
		t.Errorf("creates %v, want the table before the Job", order)
	}

	b2, cs2, _ := newFake(t)
	cs2.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(batchv1.Resource("jobs"), "", fmt.Errorf("exceeded quota"))
	})
	var wg sync.WaitGroup
	for _, a := range []*runner.Attempt{attempt(t, "r2", seedTrial(0), 1), attempt(t, "r2", seedTrial(1), 1)} {
		wg.Go(func() {
			if _, err := b2.Start(context.Background(), a); err == nil || !strings.Contains(err.Error(), "exceeded quota") {
				t.Errorf("Start: %v, want the API server's refusal", err)
			}
		})
	}
	wg.Wait()
	if list, _ := cs2.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{}); len(list.Items) != 0 {
		t.Errorf("%d tables left by a refused Job", len(list.Items))
	}
}

// TestAnAccountWithoutConfigMapsRunsAJobPerAttempt: Check finds the account may not create
// ConfigMaps, and the sweep runs a Job per attempt instead of failing.
func TestAnAccountWithoutConfigMapsRunsAJobPerAttempt(t *testing.T) {
	b, cs, _ := newFake(t)
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
		r.Status.Allowed = r.Spec.ResourceAttributes.Resource != "configmaps"
		return true, r, nil
	})
	if err := b.Check(context.Background(), []experiment.Trial{seedTrial(0), seedTrial(1)}); err != nil {
		t.Fatal(err)
	}
	startAll(t, b, []*runner.Attempt{attempt(t, "r1", seedTrial(0), 1), attempt(t, "r1", seedTrial(1), 1)})
	if n := len(listJobs(t, cs)); n != 2 {
		t.Errorf("%d Jobs, want one per attempt", n)
	}
	if b.Settings()["job-per-attempt"] != "true" {
		t.Error("the run does not record that it runs a Job per attempt")
	}
}

// TestAServerWithoutPerIndexLimitsGetsAJobPerAttempt: an API server before Kubernetes 1.29
// drops backoffLimitPerIndex, and its Job controller would then retry a failed index behind the
// runner's back; the array is deleted and its attempts run as Jobs of their own, as do later
// ones.
func TestAServerWithoutPerIndexLimitsGetsAJobPerAttempt(t *testing.T) {
	b, cs, _ := newFake(t)
	cs.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		a.(k8stesting.CreateAction).GetObject().(*batchv1.Job).Spec.BackoffLimitPerIndex = nil
		return false, nil, nil
	})
	startAll(t, b, sweep(t, "r1", 3))
	startAll(t, b, sweep(t, "r2", 2))
	jobs := listJobs(t, cs)
	for _, j := range jobs {
		if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
			t.Errorf("Indexed Job %s left on a server that drops backoffLimitPerIndex", j.Name)
		}
	}
	if len(jobs) != 5 {
		t.Errorf("%d Jobs, want one per attempt", len(jobs))
	}
	if list, _ := cs.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{}); len(list.Items) != 0 {
		t.Errorf("%d index tables left", len(list.Items))
	}
}

// TestTheRunsEndLeavesAnAdoptedArrayAlone: a resumed runner adopted the indexes of an array Job
// and started only some of its trials again (the others had ended in the record). At the run's
// end, with the Job's status lagging behind its pods, the indexes it never started are still
// adopted, not trials left running: the Job is not deleted under them (it was, once: `Live`
// handed the whole Job to StopLive).
func TestTheRunsEndLeavesAnAdoptedArrayAlone(t *testing.T) {
	b, cs, _ := newFake(t)
	var specs []PodSpec
	var plan []experiment.Trial
	for i := range 3 {
		specs = append(specs, PodSpec{Run: "r1", Trial: seedTrial(i), Attempt: 1})
		plan = append(plan, seedTrial(i))
	}
	j, err := b.cfg.ArrayJob(specs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Check(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	b.Plan(plan)
	if live, err := b.Live(context.Background(), "r1"); err != nil || len(live) != 0 {
		t.Fatalf("Live at the start: %v, %v", live, err)
	}
	startAll(t, b, []*runner.Attempt{attempt(t, "r1", seedTrial(0), 1)})
	live, err := b.Live(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 0 {
		t.Errorf("Live at the end: %+v, want nothing to stop", live)
	}
}
