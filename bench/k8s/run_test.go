//go:build unix

package k8sbench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
)

// apiProxy sits between `jikken run` and the API server: it counts the requests the runner
// sends and notes when it created its first and last Job, without touching the runner.
type apiProxy struct {
	srv         *httptest.Server
	url         string
	requests    atomic.Int64
	mu          sync.Mutex
	first, last time.Time
	jobsCreated int
}

func startProxy(b *testing.B, cfg *rest.Config) *apiProxy {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		b.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport, rp.FlushInterval = rt, -1
	p := &apiProxy{}
	// TLS with HTTP/2, as a real API server speaks: over plain HTTP client-go would fall back
	// to HTTP/1.1, one connection per request in flight, which no user's runner does.
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/jobs") {
			now := time.Now()
			p.mu.Lock()
			if p.first.IsZero() {
				p.first = now
			}
			p.last = now
			p.jobsCreated++
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	p.srv.EnableHTTP2 = true
	p.srv.StartTLS()
	b.Cleanup(p.srv.Close)
	p.url = p.srv.URL
	return p
}

// kubeconfig points jikken at the proxy (which adds the credentials).
func (p *apiProxy) kubeconfig(b *testing.B, dir string) string {
	path := filepath.Join(dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: bench, user: {}}]
contexts: [{name: bench, context: {cluster: bench, user: bench, namespace: default}}]
current-context: bench
`, p.url)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkJikkenRun runs `jikken run` exactly as a user does: the jikken binary, default
// client settings, a matrix of N seeds (JIKKEN_BENCH_TRIALS, default 1000) with -j N, on a real
// control plane with 20 KWOK nodes whose pods run 1 s. It reports the submission time (first
// to last Job created, and from the runner's start to the last Job), when the last trial's pod
// was created (the Job controller makes them), API requests per trial, the runner's peak
// resident memory, and the time from the last pod's end to the run's end.
//
// With JIKKEN_BENCH_BASELINE set to a git revision, each iteration runs the jikken of that
// revision (A) and of the working tree (B) in the order JIKKEN_BENCH_ORDER (default ABBA),
// deleting every Job and pod between runs, so that a change is measured against what came
// before on the same control plane, under the same load; it reports the medians of each.
// JIKKEN_BENCH_BASELINE=job-per-attempt makes A the working tree's jikken with
// --job-per-attempt: one Job per trial against the sweep's Indexed Jobs.
func BenchmarkJikkenRun(b *testing.B) {
	n := benchTrials(b)
	c := benchCluster(b, n)
	bin, exp := buildJikken(b, n)
	base := os.Getenv("JIKKEN_BENCH_BASELINE")
	if base == "" {
		for iter := range b.N {
			r := runJikken(b, c, bin, exp, n, iter)
			b.ReportMetric(r.podsBy.Seconds(), "start-to-last-pod-created-s")
			b.ReportMetric(r.submit.Seconds(), "submit-s")
			b.ReportMetric(r.sinceStart.Seconds(), "start-to-last-create-s")
			b.ReportMetric(r.reqs, "req/trial")
			b.ReportMetric(r.rss, "runner-MB")
			b.ReportMetric(r.tail.Seconds(), "last-pod-to-end-s")
			b.ReportMetric(r.jobTail.Seconds(), "last-job-complete-to-end-s")
			b.ReportMetric(r.wall.Seconds(), "run-s")
			logRun(b, "jikken run", n, r)
		}
		return
	}
	bins, args := map[rune]string{'B': bin}, map[rune][]string{}
	if base == "job-per-attempt" {
		bins['A'], args['A'] = bin, []string{"--job-per-attempt"}
	} else {
		bins['A'] = buildAt(b, base)
	}
	order := os.Getenv("JIKKEN_BENCH_ORDER")
	if order == "" {
		order = "ABBA"
	}
	k := 0
	for range b.N {
		res := map[rune][]runResult{}
		for _, side := range order {
			if k > 0 {
				clean(b, c)
			}
			r := runJikken(b, c, bins[side], exp, n, k, args[side]...)
			k++
			res[side] = append(res[side], r)
			logRun(b, fmt.Sprintf("%c (%s)", side, map[rune]string{'A': base, 'B': "working tree"}[side]), n, r)
		}
		for side, name := range map[rune]string{'A': "base", 'B': "new"} {
			b.ReportMetric(median(res[side], func(r runResult) float64 { return r.submit.Seconds() }), name+"-submit-s")
			b.ReportMetric(median(res[side], func(r runResult) float64 { return r.reqs }), name+"-req/trial")
			b.ReportMetric(median(res[side], func(r runResult) float64 { return r.rss }), name+"-runner-MB")
			b.ReportMetric(median(res[side], func(r runResult) float64 { return r.wall.Seconds() }), name+"-run-s")
			b.ReportMetric(median(res[side], func(r runResult) float64 { return r.podsBy.Seconds() }), name+"-last-pod-created-s")
		}
	}
}

func logRun(b *testing.B, what string, n int, r runResult) {
	jobEnd := "before the Job controller marked every Job Complete"
	if r.jobTail >= 0 {
		jobEnd = fmt.Sprintf("%.2fs after the last Job was marked Complete", r.jobTail.Seconds())
	}
	b.Logf("%s, %d trials: %d Jobs created in %.2fs (%.2fs from the runner's start; every trial's pod by %.0fs), %.3f requests/trial, runner peak RSS %.0f MB, run ended %.2fs after the last pod and %s, whole run %.1fs",
		what, n, r.jobs, r.submit.Seconds(), r.sinceStart.Seconds(), r.podsBy.Seconds(), r.reqs, r.rss, r.tail.Seconds(), jobEnd, r.wall.Seconds())
}

// median is the median of f over rs.
func median(rs []runResult, f func(runResult) float64) float64 {
	v := make([]float64, 0, len(rs))
	for _, r := range rs {
		v = append(v, f(r))
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// buildAt builds the jikken binary of git revision rev (from a copy of its tree).
func buildAt(b *testing.B, rev string) string {
	dir := b.TempDir()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		b.Fatalf("find the repository: %v", err)
	}
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", strings.TrimSpace(string(root)), rev, dir)
	if out, err := archive.CombinedOutput(); err != nil {
		b.Fatalf("export %s: %v\n%s", rev, err, out)
	}
	bin := filepath.Join(dir, "jikken-"+rev)
	if out, err := exec.Command("go", "build", "-C", dir, "-o", bin, "./cmd/jikken").CombinedOutput(); err != nil {
		b.Fatalf("build jikken at %s: %v\n%s", rev, err, out)
	}
	return bin
}

// benchCluster starts the control plane with 20 KWOK nodes with room for n pods, whose pods
// run 1 s.
func benchCluster(b *testing.B, n int) *k8stest.Cluster {
	c := k8stest.Start(b, k8stest.Options{DelayMS: 1000})
	var nodes []k8stest.Node
	for i := range 20 {
		nodes = append(nodes, k8stest.Node{Name: fmt.Sprintf("n%02d", i), Pods: n/20 + 50, CPU: "1000", Memory: "4Ti"})
	}
	c.AddNodes(b, nodes...)
	return c
}

// buildJikken builds the jikken binary and writes a matrix of n seeds.
func buildJikken(b *testing.B, n int) (bin, exp string) {
	dir := b.TempDir()
	bin = filepath.Join(dir, "jikken")
	pkg := "github.com/jikken-dev/jikken/cmd/jikken"
	if os.Getenv("JIKKEN_BENCH_PROFILE") != "" {
		pkg = "github.com/jikken-dev/jikken/bench/k8s/jikkenprof"
	}
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		b.Fatalf("build jikken: %v\n%s", err, out)
	}
	exp = filepath.Join(dir, "bench.jsonnet")
	if err := os.WriteFile(exp, []byte(fmt.Sprintf("{ name: 'bench', defaults: { image: 'example.com/trainer:1' }, matrix: { name: 'train', seeds: %d, cmd: 'train' } }\n", n)), 0o644); err != nil {
		b.Fatal(err)
	}
	return bin, exp
}

// runResult is what one run of n trials measured.
type runResult struct {
	submit, sinceStart, wall time.Duration
	// podsBy is when the last trial's pod was created, from the runner's start (to the
	// second, as the API server stamps creation).
	podsBy        time.Duration
	jobs          int // Jobs created
	reqs, rss     float64
	tail, jobTail time.Duration
}

// runJikken runs `jikken run -j n` on the matrix through a counting proxy.
func runJikken(b *testing.B, c *k8stest.Cluster, bin, exp string, n, iter int, args ...string) runResult {
	p := startProxy(b, c.Config)
	dir := b.TempDir()
	cmd := exec.Command(bin, append([]string{"run", exp, "--backend", "kubernetes", "--kubeconfig", p.kubeconfig(b, dir), "-j", strconv.Itoa(n), "-o", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "JIKKEN_STORE="+filepath.Join(dir, fmt.Sprintf("store-%d", iter)), "JIKKEN_K8S_ALLOW_LOCAL_STORE=1", "JIKKEN_K8S_PENDING_TIMEOUT=10m")
	if prof := os.Getenv("JIKKEN_BENCH_PROFILE"); prof != "" {
		// The profiling build (see buildJikken) records each new peak of its memory there.
		pdir := filepath.Join(prof, fmt.Sprintf("run-%d", iter))
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			b.Fatal(err)
		}
		cmd.Env = append(cmd.Env, "JIKKEN_PROFILE_DIR="+pdir)
	}
	cmd.Stderr = os.Stderr
	var stdout strings.Builder
	cmd.Stdout = &stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	peak := watchPeak(cmd.Process.Pid)
	err := cmd.Wait()
	end := time.Now()
	out := stdout.String()
	if err != nil {
		b.Fatalf("jikken run: %v\n%.2000s", err, out)
	}
	if !strings.Contains(out, `"status": "succeeded"`) {
		b.Fatalf("run did not succeed: %.2000s", out)
	}
	p.mu.Lock()
	r := runResult{submit: p.last.Sub(p.first), sinceStart: p.last.Sub(start), wall: end.Sub(start)}
	r.jobs = p.jobsCreated
	p.mu.Unlock()
	r.rss = float64(<-peak) / 1024
	lastPod, lastJob, lastCreated, trials := lastEnds(b, c, "app.kubernetes.io/managed-by=jikken")
	if trials != n {
		b.Fatalf("the Jobs created hold %d trials, want %d", trials, n)
	}
	r.podsBy = lastCreated.Sub(start.Truncate(time.Second))
	r.tail, r.jobTail = end.Sub(lastPod), tailAfter(end, lastJob)
	r.reqs = float64(p.requests.Load()) / float64(n)
	return r
}

// watchPeak follows the peak resident memory of process pid (VmHWM, in KiB) until it exits,
// and then sends the last it read. Not the rusage of the child: Linux carries the high-water
// mark of the memory a process replaced by exec into its maxrss, and os/exec starts a child on
// the parent's memory, so after a run or two in this process (whose proxy and lists grow it to
// hundreds of megabytes) every child reported the benchmark's own peak instead of its own.
// VmHWM belongs to the program's own memory; read every 50 ms, it misses at most a peak within
// the last 50 ms of the process.
func watchPeak(pid int) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var last int64
		for ; ; time.Sleep(50 * time.Millisecond) {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil {
				break
			}
			kb, ok := statusKB(string(b), "VmHWM:")
			if !ok { // a zombie: the process has exited
				break
			}
			last = kb
		}
		out <- last
	}()
	return out
}

// statusKB reads a "Name:   123 kB" line of /proc/PID/status.
func statusKB(status, name string) (int64, bool) {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb, err == nil
			}
		}
	}
	return 0, false
}

// lastEnds reads, after the run, when the last pod ended (its trial container's finishedAt),
// when the Job controller marked the last Job Complete (completionTime), and when the last pod
// was created: between the two is the
// cluster's own work (the Job controller removes each pod's finalizer and updates each Job).
// Both are to the second.
func lastEnds(b *testing.B, c *k8stest.Cluster, selector string) (pod, job, created time.Time, trials int) {
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: selector}
	pods, err := c.Client.CoreV1().Pods("default").List(ctx, sel)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.CreationTimestamp.After(created) {
			created = p.CreationTimestamp.Time
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.FinishedAt.After(pod) {
				pod = t.FinishedAt.Time
			}
		}
	}
	jobs, err := c.Client.BatchV1().Jobs("default").List(ctx, sel)
	if err != nil {
		b.Fatal(err)
	}
	for _, j := range jobs.Items {
		if t := j.Status.CompletionTime; t != nil && t.After(job) {
			job = t.Time
		}
		trials += int(*j.Spec.Completions) // an Indexed Job holds one trial per index
	}
	for _, j := range jobs.Items {
		if j.Status.CompletionTime == nil {
			// The runner reads each trial's end from its pod: the run may end before the Job
			// controller has marked every (Indexed) Job Complete.
			job = time.Time{}
		}
	}
	return pod, job, created, trials
}

// tailAfter is how long after the last Job was marked Complete the run ended, or -1 when a Job
// was not Complete yet.
func tailAfter(end, lastJob time.Time) time.Duration {
	if lastJob.IsZero() {
		return -1
	}
	return end.Sub(lastJob)
}
