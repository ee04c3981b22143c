//go:build unix

package k8sbench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
	"github.com/jikken-dev/jikken/experiment"
)

// BenchmarkRunNextToPlain runs N trials (JIKKEN_BENCH_TRIALS, default 1000) on one control
// plane with 20 KWOK nodes, JIKKEN_BENCH_ROUNDS rounds (default 3) of three sides in turn:
//
//   - plain: a bare client-go program that creates the N Jobs the backend builds, at jikken's
//     default client rate and as many at once as the backend creates (MaxCreating), and
//     waits on one Job informer until all are Complete;
//   - jikken: `jikken run -j N` on a matrix of N seeds, as BenchmarkJikkenRun (Indexed Jobs);
//   - indexed: the same program creating one Indexed Job of N completions (one pod per index,
//     backoffLimitPerIndex 1): the least a sweep of N pods can ask of the cluster;
//   - baseline: `jikken run` built from the git revision JIKKEN_BENCH_BASELINE.
//
// JIKKEN_BENCH_SIDES lists the sides and their order (default plain,jikken,indexed). Between
// sides every Job and pod is deleted. It reports the median of each side's submission time,
// time to the last Job Complete (the run's end, for jikken) and requests per trial.
func BenchmarkRunNextToPlain(b *testing.B) {
	n := benchTrials(b)
	rounds := envInt(b, "JIKKEN_BENCH_ROUNDS", 3)
	sides := []string{"plain", "jikken", "indexed"}
	if s := os.Getenv("JIKKEN_BENCH_SIDES"); s != "" {
		sides = strings.Split(s, ",")
	}
	c := benchCluster(b, n)
	bin, exp := buildJikken(b, n)
	var base string
	if slices.Contains(sides, "baseline") {
		base = buildAt(b, os.Getenv("JIKKEN_BENCH_BASELINE"))
	}
	k := 0
	for range b.N {
		res := map[string][]runResult{}
		for round := range rounds {
			for _, side := range sides {
				var r runResult
				switch side {
				case "jikken":
					r = runJikken(b, c, bin, exp, n, k)
				case "baseline":
					r = runJikken(b, c, base, exp, n, k)
				case "plain", "indexed":
					r = runPlain(b, c, n, side == "indexed", k)
				default:
					b.Fatalf("unknown side %q in JIKKEN_BENCH_SIDES", side)
				}
				k++
				res[side] = append(res[side], r)
				b.Logf("round %d %s: submitted in %.2fs, all Complete after %.1fs, %.3f requests/trial, peak RSS %.0f MB", round+1, side, r.submit.Seconds(), r.wall.Seconds(), r.reqs, r.rss)
				clean(b, c)
			}
		}
		med := func(side string, f func(runResult) float64) float64 { return median(res[side], f) }
		for _, side := range sides {
			b.ReportMetric(med(side, func(r runResult) float64 { return r.submit.Seconds() }), side+"-submit-s")
			b.ReportMetric(med(side, func(r runResult) float64 { return r.wall.Seconds() }), side+"-run-s")
			b.ReportMetric(med(side, func(r runResult) float64 { return r.reqs }), side+"-req/trial")
		}
		if slices.Contains(sides, "jikken") && slices.Contains(sides, "plain") {
			submit := med("jikken", func(r runResult) float64 { return r.submit.Seconds() }) / med("plain", func(r runResult) float64 { return r.submit.Seconds() })
			ratio := med("jikken", func(r runResult) float64 { return r.wall.Seconds() }) / med("plain", func(r runResult) float64 { return r.wall.Seconds() })
			b.ReportMetric(submit, "submit-jikken/plain")
			b.ReportMetric(ratio, "jikken/plain")
			b.Logf("medians of %d rounds, %d trials: submission jikken/plain %.2f, whole run jikken/plain %.2f; jikken peak RSS %.0f MB (median)", rounds, n, submit, ratio, med("jikken", func(r runResult) float64 { return r.rss }))
		}
	}
}

// runPlain creates the Jobs of n trials with a bare clientset (or one Indexed Job of n
// completions) and waits on a Job informer until they are Complete.
func runPlain(b *testing.B, c *k8stest.Cluster, n int, indexed bool, round int) runResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, count := counted(c.Config)
	cs := clientset.NewForConfigOrDie(cfg)
	run := fmt.Sprintf("plain-%d-%v", round, indexed)
	jc := kubernetes.Config{Namespace: "default", StoreURL: "s3://bench/runs", ExecutorImage: "jikken:bench"}
	jobs := make([]*batchv1.Job, 0, n)
	for i := range n {
		seed := int64(i)
		t := experiment.Trial{Name: "train/s" + strconv.Itoa(i), Index: i, Image: "example.com/trainer:1", Seed: &seed,
			Cmd: experiment.Command{Shell: "train"}}
		j, err := jc.Job(kubernetes.PodSpec{Run: run, Trial: t, Attempt: 1, Env: []string{"JIKKEN_RUN_ID=" + run, "JIKKEN_TRIAL=" + t.Name, "JIKKEN_SEED=" + strconv.Itoa(i)}})
		if err != nil {
			b.Fatal(err)
		}
		jobs = append(jobs, j)
		if indexed {
			j.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
			j.Spec.Completions, j.Spec.Parallelism = ptr(int32(n)), ptr(int32(n))
			j.Spec.BackoffLimit, j.Spec.BackoffLimitPerIndex = nil, ptr(int32(1))
			break
		}
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = kubernetes.RunSelector(run) }))
	inf := f.Batch().V1().Jobs().Informer()
	var complete atomic.Int64
	done := make(chan struct{})
	seen := map[string]bool{}
	check := func(obj any) {
		j, ok := obj.(*batchv1.Job)
		if !ok || seen[j.Name] {
			return
		}
		for _, cond := range j.Status.Conditions {
			if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
				seen[j.Name] = true
				if complete.Add(1) == int64(len(jobs)) {
					close(done)
				}
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: check, UpdateFunc: func(_, obj any) { check(obj) }}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	var first, last atomic.Int64
	if err := parallelN(len(jobs), min(len(jobs), kubernetes.MaxCreating), func(i int) error {
		first.CompareAndSwap(0, time.Now().UnixNano())
		_, err := cs.BatchV1().Jobs("default").Create(ctx, jobs[i], metav1.CreateOptions{})
		for now := time.Now().UnixNano(); ; {
			if old := last.Load(); now <= old || last.CompareAndSwap(old, now) {
				break
			}
		}
		return err
	}); err != nil {
		b.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Minute):
		b.Fatalf("%d of %d Jobs Complete after 30 minutes", complete.Load(), len(jobs))
	}
	end := time.Now()
	r := runResult{submit: time.Duration(last.Load() - first.Load()), sinceStart: time.Unix(0, last.Load()).Sub(start), wall: end.Sub(start)}
	r.reqs = float64(count.n.Load()) / float64(n)
	lastPod, lastJob, _, _ := lastEnds(b, c, kubernetes.RunSelector(run))
	r.tail, r.jobTail = end.Sub(lastPod), tailAfter(end, lastJob)
	return r
}

// clean deletes every Job and pod in the namespace and waits until the pods are gone, so
// that the next side starts on an empty cluster.
func clean(b *testing.B, c *k8stest.Cluster) {
	ctx := context.Background()
	bg := metav1.DeletePropagationBackground
	if err := c.Client.BatchV1().Jobs("default").DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, metav1.ListOptions{}); err != nil {
		b.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Minute); ; time.Sleep(time.Second) {
		pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		jobs, err := c.Client.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(pods.Items)+len(jobs.Items) == 0 {
			return
		}
		if time.Now().After(end) {
			b.Fatal("Jobs or pods left 10 minutes after the cleanup")
		}
	}
}

func ptr[T any](v T) *T { return &v }
