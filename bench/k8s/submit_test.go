// Package k8sbench compares submitting trials through the kubernetes backend with a plain
// client-go loop creating the same Jobs, on a real API server (see README.md).
package k8sbench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

// submitWorkers is how many creates each side sends at once (JIKKEN_BENCH_WORKERS, default 50,
// like jikken run -j 50 submitting a backlog; the backend itself sends at most MaxCreating).
func submitWorkers(b *testing.B) int { return envInt(b, "JIKKEN_BENCH_WORKERS", 50) }

// counter counts the HTTP requests a client sends.
type counter struct {
	rt http.RoundTripper
	n  atomic.Int64
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

func counted(cfg *rest.Config) (*rest.Config, *counter) {
	cfg = rest.CopyConfig(cfg)
	// Both sides get the rate limit `jikken run` uses unless --kube-qps/--kube-burst say otherwise.
	cfg.QPS, cfg.Burst = kubernetes.DefaultQPS, kubernetes.DefaultBurst
	c := &counter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { c.rt = rt; return c })
	return cfg, c
}

func attempts(run string, trials int) []*runner.Attempt {
	out := make([]*runner.Attempt, trials)
	for i := range out {
		seed := int64(i)
		t := experiment.Trial{Name: "trial-" + strconv.Itoa(i), Index: i, Image: "example.com/trainer:1",
			Cmd: experiment.Command{Argv: []string{"train", "--seed", strconv.Itoa(i)}}, Seed: &seed,
			Resources: experiment.Resources{CPU: 1, Memory: 1 << 30, GPU: 1}}
		out[i] = &runner.Attempt{RunID: run, Trial: t, N: 1, Dir: "/nonexistent",
			Env: []string{"JIKKEN_RUN_ID=" + run, "JIKKEN_TRIAL=" + t.Name, "JIKKEN_SEED=" + strconv.Itoa(i)}}
	}
	return out
}

// parallelN runs f(0) ... f(n-1) on w goroutines and returns one of their errors.
func parallelN(n, w int, f func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := atomic.Int64{}
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// submit creates the Jobs of n trials of one run, w at a time, and returns the wall time and
// the requests sent: with the backend's Start (jikken), which also starts the run's watch, or
// with a bare clientset creating the same Job objects (plain).
func submit(b *testing.B, cfg *rest.Config, jikken bool, run string, n, w int) (time.Duration, int64) {
	ccfg, count := counted(cfg)
	cs := clientset.NewForConfigOrDie(ccfg)
	jc := kubernetes.Config{Namespace: "default", StoreURL: "s3://bench/runs", ExecutorImage: "jikken:bench"}
	atts := attempts(run, n)
	var f func(i int) error
	if jikken {
		back := kubernetes.NewForClient(cs, jc)
		defer back.Close()
		f = func(i int) error {
			_, err := back.Start(context.Background(), atts[i])
			return err
		}
	} else {
		f = func(i int) error {
			j, err := jc.Job(kubernetes.PodSpec{Run: run, Trial: atts[i].Trial, Attempt: 1, Env: atts[i].Env})
			if err != nil {
				return err
			}
			_, err = cs.BatchV1().Jobs("default").Create(context.Background(), j, metav1.CreateOptions{})
			return err
		}
	}
	t0 := time.Now()
	if err := parallelN(n, w, f); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0), count.n.Load()
}

// BenchmarkSubmit reports, for N trials (JIKKEN_BENCH_TRIALS, default 1000) created
// JIKKEN_BENCH_WORKERS at a time (default 50), the wall time and API requests per trial of the
// backend and of a plain client-go loop, run in the order plain, jikken, jikken, plain so that
// neither side gains from a warmer or emptier API server.
func BenchmarkSubmit(b *testing.B) {
	trials, w := benchTrials(b), submitWorkers(b)
	c := k8stest.Start(b, k8stest.Options{APIOnly: true})
	for iter := range b.N {
		var wall [2]time.Duration
		var reqs [2]int64
		for k, jikken := range []bool{false, true, true, false} {
			d, r := submit(b, c.Config, jikken, fmt.Sprintf("r%d-%d", iter, k), trials, w)
			i := 0
			if jikken {
				i = 1
			}
			wall[i] += d / 2
			reqs[i] += r
		}
		plainS, jikkenS := wall[0].Seconds(), wall[1].Seconds()
		b.ReportMetric(plainS, "plain-s")
		b.ReportMetric(jikkenS, "jikken-s")
		b.ReportMetric(jikkenS/plainS, "ratio")
		b.ReportMetric(float64(reqs[0])/float64(2*trials), "plain-req/trial")
		b.ReportMetric(float64(reqs[1])/float64(2*trials), "jikken-req/trial")
		b.Logf("%d Jobs, %d at a time (mean of 2): plain client-go %.2fs, %.3f req/trial; jikken backend %.2fs, %.3f req/trial (watch included); ratio %.2f",
			trials, w, plainS, float64(reqs[0])/float64(2*trials), jikkenS, float64(reqs[1])/float64(2*trials), jikkenS/plainS)
	}
}
