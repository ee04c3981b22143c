package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// newKubernetesBackend configures the kubernetes backend from the environment, documented in
// docs/kubernetes.md: JIKKEN_K8S_NAMESPACE, KUBECONFIG, JIKKEN_K8S_EXECUTOR_IMAGE,
// JIKKEN_K8S_STORE_SECRET, ...; --namespace and --kubeconfig override theirs.
func newKubernetesBackend(_ context.Context, _ *cmdutil.Factory, blob store.Blob, s backendSettings) (runner.Backend, error) {
	cfg, err := kubernetesConfig(os.Getenv)
	if err != nil {
		return nil, err
	}
	if s.Namespace != "" {
		cfg.Namespace = s.Namespace
	}
	if s.Kubeconfig != "" {
		cfg.Kubeconfig = s.Kubeconfig
	}
	if s.JobTTL != "" {
		if cfg.JobTTL, err = parseJobTTL(s.JobTTL); err != nil {
			return nil, cmdutil.UsageError("--job-ttl %s", err)
		}
	}
	if s.QPS != 0 {
		cfg.QPS = float32(s.QPS)
	}
	cfg.JobPerAttempt = cfg.JobPerAttempt || s.JobPerAttempt
	if s.Burst != 0 {
		cfg.Burst = s.Burst
	}
	cfg.Store, cfg.StoreURL = blob, blob.Location()
	return kubernetes.New(cfg)
}

// routeClientGoLogs sends what client-go logs (through klog, process-wide) to a warn-level
// logger on w. Left to klog, it prints "Waited before sending request" on stderr every ten
// seconds while the client's rate limit holds a request back a second or more, which a large
// sweep does by design (10,000 creates at 500 a second); its errors (a watch the API server
// broke) still show.
func routeClientGoLogs(w io.Writer) {
	klog.SetSlogLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// kubernetesConfig reads the backend's settings from environment variables.
func kubernetesConfig(getenv func(string) string) (kubernetes.Config, error) {
	cfg := kubernetes.Config{
		Namespace:      getenv("JIKKEN_K8S_NAMESPACE"),
		Kubeconfig:     getenv("JIKKEN_K8S_KUBECONFIG"),
		ExecutorImage:  getenv("JIKKEN_K8S_EXECUTOR_IMAGE"),
		GitImage:       getenv("JIKKEN_K8S_GIT_IMAGE"),
		DefaultImage:   getenv("JIKKEN_K8S_DEFAULT_IMAGE"),
		StoreSecret:    getenv("JIKKEN_K8S_STORE_SECRET"),
		ServiceAccount: getenv("JIKKEN_K8S_SERVICE_ACCOUNT"),
		ClusterDomain:  getenv("JIKKEN_K8S_CLUSTER_DOMAIN"),
	}
	if s := getenv("JIKKEN_K8S_IMAGE_PULL_SECRETS"); s != "" {
		cfg.ImagePullSecrets = strings.Split(s, ",")
	}
	cfg.ImageHasCode = getenv("JIKKEN_K8S_IMAGE_HAS_CODE") == "1"
	cfg.AllowLocalStore = getenv("JIKKEN_K8S_ALLOW_LOCAL_STORE") == "1"
	cfg.JobPerAttempt = getenv("JIKKEN_K8S_JOB_PER_ATTEMPT") == "1"
	if v := getenv("JIKKEN_K8S_JOB_TTL"); v != "" {
		d, err := parseJobTTL(v)
		if err != nil {
			return cfg, fmt.Errorf("JIKKEN_K8S_JOB_TTL %s", err)
		}
		cfg.JobTTL = d
	}
	if v := getenv("JIKKEN_KUBE_QPS"); v != "" {
		q, err := strconv.ParseFloat(v, 32)
		if err != nil || q == 0 {
			return cfg, fmt.Errorf("JIKKEN_KUBE_QPS=%q: want requests per second, like 200 (negative: no limit)", v)
		}
		cfg.QPS = float32(q)
	}
	if v := getenv("JIKKEN_KUBE_BURST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return cfg, fmt.Errorf("JIKKEN_KUBE_BURST=%q: want a whole number of requests, 1 or more", v)
		}
		cfg.Burst = n
	}
	for name, d := range map[string]*time.Duration{
		"JIKKEN_K8S_PENDING_TIMEOUT":     &cfg.PendingTimeout,
		"JIKKEN_K8S_NODE_LOSS_TOLERANCE": &cfg.NodeLossTolerance,
	} {
		if v := getenv(name); v != "" {
			p, err := time.ParseDuration(v)
			if err != nil {
				return cfg, fmt.Errorf("%s=%q: want a duration like 5m", name, v)
			}
			*d = p
		}
	}
	return cfg, nil
}

// parseJobTTL reads how long finished Jobs stay: a duration of at least a second, or "keep".
// Zero is refused: the Job could be gone before its runner reads how it ended.
func parseJobTTL(v string) (time.Duration, error) {
	if v == "keep" {
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q: want a duration like 10m, or keep to leave finished Jobs until 'jikken rm'", v)
	case d < 0:
		return -1, nil
	case d < time.Second:
		return 0, fmt.Errorf("%q: at least 1s, so the runner reads how each Job ended before the cluster deletes it (or keep)", v)
	}
	return d, nil
}
