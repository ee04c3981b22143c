package k8stest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// ArgoVersion is the Argo Workflows release scripts/ci/k8s.sh builds the controller of.
const ArgoVersion = "v3.7.9"

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallArgoCRDs creates Argo's CRDs ($JIKKEN_K8S_BIN/argo-crds) and waits until the API
// server serves them.
func (c *Cluster) InstallArgoCRDs(t testing.TB) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(os.Getenv("JIKKEN_K8S_BIN"), "argo-crds", "argoproj.io_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("Argo's CRDs (scripts/ci/k8s.sh fetches them into argo-crds): %v", err)
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd unstructured.Unstructured
		if err := yaml.Unmarshal(b, &crd.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := dyn.Resource(crdGVR).Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create CRD %s: %v", crd.GetName(), err)
		}
		names = append(names, crd.GetName())
	}
	for _, name := range names {
		c.waitFor(t, "CRD "+name+" established", time.Minute, func(ctx context.Context) bool {
			got, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, x := range conds {
				if m, ok := x.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true
				}
			}
			return false
		})
	}
}

// StartArgo installs Argo's CRDs and runs Argo's own workflow-controller
// ($JIKKEN_K8S_BIN/workflow-controller) on the cluster, in single-instance mode, with its
// metrics off. The controller's pods land on KWOK's fake nodes, whose stages end them as they
// end the backend's (a retried Argo step fails its first try, "(0)", when labelled
// jikken-test/outcome=fail-once). No argoexec runs there, so resource steps create nothing.
// Its debug server binds :6060 on every interface (the port is fixed in the controller).
func (c *Cluster) StartArgo(t testing.TB) {
	t.Helper()
	bin := binDir(t, "workflow-controller")
	c.InstallArgoCRDs(t)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "workflow-controller-configmap"},
		// No metrics server: it would listen on every interface.
		Data: map[string]string{"config": "metricsConfig:\n  enabled: false\ntelemetryConfig:\n  enabled: false\n"},
	}
	if _, err := c.Client.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	c.runEnv(t, []string{"LEADER_ELECTION_DISABLE=true"}, filepath.Join(bin, "workflow-controller"), "workflow-controller",
		"--kubeconfig="+c.Kubeconfig, "--executor-image=quay.io/argoproj/argoexec:"+ArgoVersion, "--loglevel=info")
	c.waitFor(t, "Argo's workflow-controller to start", 2*time.Minute, func(ctx context.Context) bool {
		b, err := os.ReadFile(filepath.Join(c.Dir, "workflow-controller.log"))
		return err == nil && strings.Contains(string(b), "Starting Workflow Controller")
	})
}
