package cli_test

// TestClusterScripts runs testdata/cluster/*.txtar, end-to-end tests of the jikken binary on a
// real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler built from
// source, KWOK faking nodes and pod lifecycles). Skipped unless JIKKEN_K8S_BIN is set; run
// them with 'make test-k8s'.

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
)

func TestClusterScripts(t *testing.T) {
	c := k8stest.Start(t, k8stest.Options{DelayMS: 300})
	c.AddNodes(t, k8stest.Node{Name: "n0"}, k8stest.Node{Name: "n1"})
	for _, ns := range []string{"team-a", "team-b", "team-c", "team-d", "team-e", "team-r"} {
		if _, err := c.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "cluster"),
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("JIKKEN_STORE", filepath.Join(env.WorkDir, ".jikken"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, ".home"))
			env.Setenv("KC", c.Kubeconfig)
			// Fake nodes run no executor: the runner's folder store is the only store.
			env.Setenv("JIKKEN_K8S_ALLOW_LOCAL_STORE", "1")
			env.Setenv("JIKKEN_K8S_PENDING_TIMEOUT", "20s")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// k8s-empty NAMESPACE WITHIN: no Job, pod or ConfigMap (an array Job's index table)
			// of jikken is left in the namespace within WITHIN (the bound for finished
			// Jobs with a short --job-ttl).
			"k8s-empty": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 || neg {
					ts.Fatalf("usage: k8s-empty NAMESPACE WITHIN")
				}
				within, err := time.ParseDuration(args[1])
				ts.Check(err)
				sel := metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=jikken"}
				start := time.Now()
				jobs, pods, cms := -1, -1, -1
				for time.Since(start) < within {
					jl, err := c.Client.BatchV1().Jobs(args[0]).List(context.Background(), sel)
					ts.Check(err)
					pl, err := c.Client.CoreV1().Pods(args[0]).List(context.Background(), sel)
					ts.Check(err)
					cl, err := c.Client.CoreV1().ConfigMaps(args[0]).List(context.Background(), sel)
					ts.Check(err)
					if jobs, pods, cms = len(jl.Items), len(pl.Items), len(cl.Items); jobs+pods+cms == 0 {
						ts.Logf("namespace %s empty after %s", args[0], time.Since(start).Round(100*time.Millisecond))
						return
					}
					time.Sleep(250 * time.Millisecond)
				}
				ts.Fatalf("namespace %s still has %d Jobs, %d pods and %d ConfigMaps of jikken after %s", args[0], jobs, pods, cms, within)
			},
			// k8s-jobs NAMESPACE N [running]: the namespace holds the Jobs of N attempts of
			// jikken (N running ones; an array Job holds one per index), waiting up to a minute
			// for the count to be reached.
			"k8s-jobs": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: k8s-jobs NAMESPACE N [running]")
				}
				want, err := strconv.Atoi(args[1])
				ts.Check(err)
				running := len(args) > 2 && args[2] == "running"
				got := -1
				for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
					list, err := c.Client.BatchV1().Jobs(args[0]).List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=jikken"})
					ts.Check(err)
					got = 0
					for _, j := range list.Items {
						switch {
						case !running && j.Spec.Completions != nil:
							got += int(*j.Spec.Completions)
						case !running:
							got++
						case j.DeletionTimestamp == nil:
							got += int(j.Status.Active)
						}
					}
					if (got == want) != neg {
						return
					}
				}
				ts.Fatalf("namespace %s has %d jikken Jobs%s, want %s%d", args[0], got, map[bool]string{true: " running"}[running], map[bool]string{true: "other than "}[neg], want)
			},
		},
	})
}
