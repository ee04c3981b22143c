package k8stest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Binaries the control plane needs, all in $JIKKEN_K8S_BIN.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

func binDir(t testing.TB, need ...string) string {
	t.Helper()
	dir := os.Getenv("JIKKEN_K8S_BIN")
	if dir == "" {
		t.Skip("JIKKEN_K8S_BIN is not set: skipping the Kubernetes control-plane tests (run 'make test-k8s')")
	}
	for _, b := range need {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			msg := fmt.Sprintf("JIKKEN_K8S_BIN=%s has no %s; build the control plane with scripts/ci/k8s.sh", dir, b)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return dir
}

// FakeDigest is the sha256 the fake kubelet reports for every image it "runs".
const FakeDigest = "5e1f0c0ffee0ddba11c0ffee0ddba11c0ffee0ddba11c0ffee0ddba11c0ffee0"

// Options shape a cluster.
type Options struct {
	// DelayMS and JitterMS are how long a fake pod runs before it ends.
	DelayMS, JitterMS int
	// NodeMonitorGrace is how soon a node whose lease stops is marked NotReady (default 40s).
	NodeMonitorGrace time.Duration
	// APIOnly starts etcd and the API server only (benchmarks of submission).
	APIOnly bool
	// SchedulerArgs are extra kube-scheduler flags, such as --vmodule=schedule_one=10 to log
	// every node's score (scheduler.log in Dir).
	SchedulerArgs []string
	// SchedulerConfig, if set, is a KubeSchedulerConfiguration (YAML) for kube-scheduler's
	// --config, without clientConnection: Start adds the kubeconfig.
	SchedulerConfig string
	// Scheduler is the kube-scheduler binary's name in $JIKKEN_K8S_BIN (default kube-scheduler),
	// such as kube-scheduler-gpuclass, built with an example plugin by scripts/ci/k8s.sh.
	Scheduler string
}

// Cluster is a running control plane.
type Cluster struct {
	Dir        string
	Kubeconfig string
	// LimitedKubeconfig authenticates as a user with no RBAC rights.
	LimitedKubeconfig string
	Config            *rest.Config
	Client            kubernetes.Interface
	procs             []*exec.Cmd
}

// Start brings up etcd, the API server, the controller manager, the scheduler and KWOK, and
// stops them when the test ends.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	if o.Scheduler == "" {
		o.Scheduler = "kube-scheduler"
	}
	need := append(slices.DeleteFunc(slices.Clone(Binaries), func(b string) bool { return b == "kube-scheduler" }), o.Scheduler)
	if o.APIOnly {
		need = []string{"etcd", "kube-apiserver"}
	}
	bin := binDir(t, need...)
	if o.DelayMS == 0 {
		o.DelayMS = 500
	}
	if o.NodeMonitorGrace == 0 {
		o.NodeMonitorGrace = 40 * time.Second
	}
	dir, err := os.MkdirTemp("", "jikken-k8s-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir}
	t.Cleanup(func() {
		c.stop()
		if !t.Failed() {
			os.RemoveAll(dir)
		} else {
			t.Logf("control-plane logs kept in %s", dir)
		}
	})
	ports := freePorts(t, 6)
	etcdPort, peerPort, apiPort, cmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	c.run(t, filepath.Join(bin, "etcd"), "etcd",
		"--name=default", "--data-dir="+filepath.Join(dir, "etcd"), "--unsafe-no-fsync",
		"--listen-client-urls=http://127.0.0.1:"+etcdPort, "--advertise-client-urls=http://127.0.0.1:"+etcdPort,
		"--listen-peer-urls=http://127.0.0.1:"+peerPort, "--initial-advertise-peer-urls=http://127.0.0.1:"+peerPort,
		"--initial-cluster=default=http://127.0.0.1:"+peerPort)

	key := filepath.Join(dir, "sa.key")
	pub := filepath.Join(dir, "sa.pub")
	writeKeys(t, key, pub)
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("admin-token,admin,admin,system:masters\nlimited-token,limited,limited\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.run(t, filepath.Join(bin, "kube-apiserver"), "apiserver",
		"--etcd-servers=http://127.0.0.1:"+etcdPort,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+apiPort,
		"--endpoint-reconciler-type=none", "--cert-dir="+filepath.Join(dir, "certs"),
		"--token-auth-file="+tokens, "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file="+pub,
		"--service-account-signing-key-file="+key, "--service-cluster-ip-range=10.96.0.0/16")

	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	c.LimitedKubeconfig = filepath.Join(dir, "kubeconfig-limited")
	writeKubeconfig(t, c.Kubeconfig, "https://127.0.0.1:"+apiPort, "admin-token")
	writeKubeconfig(t, c.LimitedKubeconfig, "https://127.0.0.1:"+apiPort, "limited-token")
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	c.Config = cfg
	c.Client = kubernetes.NewForConfigOrDie(cfg)
	c.waitReady(t)
	if o.APIOnly {
		return c
	}

	c.run(t, filepath.Join(bin, "kube-controller-manager"), "controller-manager",
		"--kubeconfig="+c.Kubeconfig, "--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+cmPort, "--leader-elect=false",
		"--service-account-private-key-file="+key, "--use-service-account-credentials=false",
		"--node-monitor-period=1s", "--node-monitor-grace-period="+o.NodeMonitorGrace.String(),
		"--concurrent-job-syncs=20", "--kube-api-qps=500", "--kube-api-burst=1000")
	schedArgs := o.SchedulerArgs
	if o.SchedulerConfig != "" {
		path := filepath.Join(dir, "scheduler-config.yaml")
		cfg := strings.TrimRight(o.SchedulerConfig, "\n") + "\nclientConnection:\n  kubeconfig: " + strconv.Quote(c.Kubeconfig) + "\n"
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		schedArgs = append(schedArgs, "--config="+path)
	}
	c.run(t, filepath.Join(bin, o.Scheduler), "scheduler", append([]string{
		"--kubeconfig=" + c.Kubeconfig, "--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + schedPort, "--leader-elect=false"}, schedArgs...)...)

	stages := strings.NewReplacer("{{DELAY}}", strconv.Itoa(o.DelayMS), "{{JITTER}}", strconv.Itoa(o.JitterMS), "{{DIGEST}}", FakeDigest).Replace(stagesTemplate)
	stagesFile := filepath.Join(dir, "kwok.yaml")
	if err := os.WriteFile(stagesFile, []byte(stages), 0o644); err != nil {
		t.Fatal(err)
	}
	c.run(t, filepath.Join(bin, "kwok"), "kwok",
		"--kubeconfig="+c.Kubeconfig, "--config="+stagesFile,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--server-address=127.0.0.1:"+kwokPort, "--node-ip=127.0.0.2", "--cidr=10.244.0.0/16",
		"--node-lease-duration-seconds=5")
	c.waitFor(t, "the default service account", 4*time.Minute, func(ctx context.Context) bool {
		_, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	return c
}

// Node describes a fake node.
type Node struct {
	Name   string
	CPU    string
	Memory string
	GPU    int
	Pods   int
	Labels map[string]string
	Taints []corev1.Taint
}

// AddNodes creates fake nodes managed by KWOK and waits until they are Ready.
func (c *Cluster) AddNodes(t testing.TB, nodes ...Node) {
	t.Helper()
	ctx := context.Background()
	for _, n := range nodes {
		if n.CPU == "" {
			n.CPU = "32"
		}
		if n.Memory == "" {
			n.Memory = "256Gi"
		}
		if n.Pods == 0 {
			n.Pods = 110
		}
		capacity := corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(n.CPU),
			corev1.ResourceMemory: resource.MustParse(n.Memory),
			corev1.ResourcePods:   *resource.NewQuantity(int64(n.Pods), resource.DecimalSI),
		}
		if n.GPU > 0 {
			capacity["nvidia.com/gpu"] = *resource.NewQuantity(int64(n.GPU), resource.DecimalSI)
		}
		labels := map[string]string{"kubernetes.io/hostname": n.Name, "type": "kwok"}
		for k, v := range n.Labels {
			labels[k] = v
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Spec:       corev1.NodeSpec{Taints: n.Taints},
			Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create node %s: %v", n.Name, err)
		}
	}
	for _, n := range nodes {
		c.waitForNode(t, n.Name, "Ready", func(node *corev1.Node) bool {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					return true
				}
			}
			return false
		})
	}
}

// waitForNode waits up to two minutes until the node satisfies cond.
func (c *Cluster) waitForNode(t testing.TB, name, what string, cond func(*corev1.Node) bool) {
	t.Helper()
	c.waitFor(t, "node "+name+" "+what, 2*time.Minute, func(ctx context.Context) bool {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && cond(node)
	})
}

// LoseNode makes a node go NotReady mid-run, as when its container runtime dies (KWOK's stage
// node-lost reports it): the node controller taints it and its pods are evicted once their
// not-ready toleration runs out. LoseNode returns when the node controller has tainted it.
func (c *Cluster) LoseNode(t testing.TB, name string) {
	t.Helper()
	ctx := context.Background()
	node, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Labels["jikken-test/lost"] = "true"
	if _, err := c.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.waitForNode(t, name, "tainted not-ready", func(node *corev1.Node) bool {
		for _, taint := range node.Spec.Taints {
			if taint.Key == corev1.TaintNodeNotReady && taint.Effect == corev1.TaintEffectNoExecute {
				return true
			}
		}
		return false
	})
}

// waitFor checks cond every 200ms until it holds or timeout passes (then the test fails: the
// control plane is broken, which is not what a test asserts).
func (c *Cluster) waitFor(t testing.TB, what string, timeout time.Duration, cond func(context.Context) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for !cond(ctx) {
		select {
		case <-ctx.Done():
			t.Fatalf("control plane: waiting for %s: %v (logs in %s)", what, ctx.Err(), c.Dir)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *Cluster) waitReady(t testing.TB) {
	c.waitFor(t, "the API server", 3*time.Minute, func(ctx context.Context) bool {
		b, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(b) == "ok"
	})
}

func (c *Cluster) run(t testing.TB, path, name string, args ...string) {
	t.Helper()
	c.runEnv(t, nil, path, name, args...)
}

// runEnv starts a component with env added to this process's environment, its output in
// Dir/NAME.log.
func (c *Cluster) runEnv(t testing.TB, env []string, path, name string, args ...string) {
	t.Helper()
	logf, err := os.Create(filepath.Join(c.Dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	c.procs = append(c.procs, cmd)
}

func (c *Cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}
}

// freePorts picks n distinct ports that are free on 127.0.0.1 for the control plane's
// processes. They come from below Linux's ephemeral range (32768-60999), where the kernel
// assigns neither listen(":0") ports nor the source ports of outgoing connections: ports taken
// from that range with listen(":0") and closed were handed out again, once to etcd's peer
// listener and the API server together, whose bind then failed ("address already in use") and
// the test waited three minutes for an API server that had exited. All n stay bound until
// every one is chosen, so they differ.
func freePorts(t testing.TB, n int) []string {
	t.Helper()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	var ports []string
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			t.Fatalf("no %d free ports between 20000 and 32767 on 127.0.0.1", n)
		}
		port := 20000 + mrand.IntN(32768-20000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // taken
		}
		held = append(held, l)
		ports = append(ports, strconv.Itoa(port))
	}
	return ports
}

func writeKeys(t testing.TB, keyPath, pubPath string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeKubeconfig(t testing.TB, path, server, token string) {
	t.Helper()
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: test
  user: {token: %q}
contexts:
- name: test
  context: {cluster: test, user: test, namespace: default}
current-context: test
`, server, token)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
}
