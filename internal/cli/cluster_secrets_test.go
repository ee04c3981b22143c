package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// TestClusterSecretsStayOutOfTrials: on Kubernetes the executor gets the store's credentials
// from a Secret (envFrom); the trial it runs must not. A run on a real control plane creates the
// Job and an Argo export renders the workflow; KWOK's nodes run no container, so the test plays
// each pod as the kubelet would: the main container's command with its env and the Secret's
// keys, read back from the API server, the executor being this jikken. The trial prints its
// environment; the secret is in none of its outputs and no object of the store (MinIO).
func TestClusterSecretsStayOutOfTrials(t *testing.T) {
	c := k8stest.Start(t, k8stest.Options{DelayMS: 300})
	c.AddNodes(t, k8stest.Node{Name: "n0"})
	srv := s3test.MinIO(t)
	bucket := srv.NewBucket()
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "jikken-s3"}, StringData: srv.Env()}
	if _, err := c.Client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	exp := `[{ name: "env", image: "busybox:1", cmd: ` + jsonString(printEnv) + ` }]`
	if err := os.WriteFile(filepath.Join(dir, "exp.jsonnet"), []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	jikken := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command("jikken", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "JIKKEN_STORE=", "JIKKEN_K8S_STORE_SECRET=jikken-s3",
			"JIKKEN_K8S_EXECUTOR_IMAGE=jikken:test", "KUBECONFIG="+c.Kubeconfig)
		for k, v := range srv.Env() {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("jikken %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return []byte(stdout.String())
	}

	t.Run("job", func(t *testing.T) {
		jikken("run", "exp.jsonnet", "--backend", "kubernetes", "--store", "s3://"+bucket+"/job")
		jobs, err := c.Client.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=jikken"})
		if err != nil || len(jobs.Items) != 1 {
			t.Fatalf("jobs %v, %v", jobs, err)
		}
		spec := jobs.Items[0].Spec.Template.Spec
		playContainer(t, c, spec.Containers[0])
		checkNoSecret(t, srv, bucket, "job/")
	})
	t.Run("argo", func(t *testing.T) {
		var wf kubernetes.Workflow
		if err := json.Unmarshal(jikken("export", "argo", "exp.jsonnet", "--store", "s3://"+bucket+"/argo", "-o", "json"), &wf); err != nil {
			t.Fatal(err)
		}
		played := 0
		for _, tm := range wf.Spec.Templates {
			if tm.Container != nil {
				playContainer(t, c, *tm.Container)
				played++
			}
		}
		if played != 1 {
			t.Fatalf("%d pod templates, want 1", played)
		}
		checkNoSecret(t, srv, bucket, "argo/")
	})
}

// playContainer runs a pod's main container on this machine as the kubelet would start it: the
// keys of the Secrets it takes envFrom (read from the API server), then its env, its command
// with the in-pod paths moved under a temporary folder. Its console output must not show the
// secret either.
func playContainer(t *testing.T, c *k8stest.Cluster, ctr corev1.Container) {
	t.Helper()
	pod := t.TempDir()
	local := strings.NewReplacer("/jikken/", pod+"/")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + pod}
	for _, from := range ctr.EnvFrom {
		if from.SecretRef == nil {
			continue
		}
		s, err := c.Client.CoreV1().Secrets("default").Get(context.Background(), from.SecretRef.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range s.Data {
			env = append(env, from.Prefix+k+"="+string(v))
		}
	}
	for _, e := range ctr.Env {
		v := local.Replace(e.Value)
		if strings.Contains(v, "{{") { // an Argo expression (the attempt number)
			v = "1"
		}
		env = append(env, e.Name+"="+v)
	}
	self, err := exec.LookPath("jikken")
	if err != nil {
		t.Fatal(err)
	}
	argv := make([]string, len(ctr.Command))
	for i, a := range ctr.Command {
		argv[i] = local.Replace(a)
	}
	if filepath.Base(argv[0]) != "jikken" || argv[1] != "trial-exec" {
		t.Fatalf("main container runs %q, want the executor", ctr.Command)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, argv[1:]...)
	cmd.Env, cmd.Dir = env, pod
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("executor: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "JIKKEN_TRIAL=env") {
		t.Errorf("the container log lacks the trial's environment:\n%s", out)
	}
	if strings.Contains(string(out), s3test.SecretKey) {
		t.Errorf("the container log shows the store's secret:\n%s", out)
	}
}
