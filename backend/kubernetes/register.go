package kubernetes

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/runner"
)

// Settings are the kubernetes backend's settings from the command line; the environment
// (docs/kubernetes.md) gives the rest. The namespace and how Jobs are kept are recorded with
// the run, so resume, kill and rm find its Jobs whatever their environment; the kubeconfig and
// the rate limit are this machine's.
type Settings struct {
	Namespace     string  `flag:"namespace" record:"namespace" help:"namespace of the Jobs (default $JIKKEN_K8S_NAMESPACE, the kubeconfig context's, or default)"`
	JobTTL        string  `flag:"job-ttl" record:"job-ttl" was:"job_ttl" help:"how long finished Jobs and their pods stay, e.g. 30m, or keep (default $JIKKEN_K8S_JOB_TTL or 10m)"`
	JobPerAttempt bool    `flag:"job-per-attempt" record:"job-per-attempt" was:"job_per_attempt" help:"run each attempt as a Job of its own, not the trials of a sweep as Indexed Jobs (default $JIKKEN_K8S_JOB_PER_ATTEMPT=1)"`
	Kubeconfig    string  `flag:"kubeconfig" help:"kubeconfig file (default $KUBECONFIG or ~/.kube/config)"`
	QPS           float64 `flag:"kube-qps" help:"API requests per second (default $JIKKEN_KUBE_QPS or 500; negative: no limit)"`
	Burst         int     `flag:"kube-burst" help:"API requests allowed in a burst (default $JIKKEN_KUBE_BURST, twice --kube-qps, or 1000)"`
}

func init() {
	runner.Register(runner.Descriptor{
		Name:     "kubernetes",
		Settings: func() any { return &Settings{} },
		Caps: runner.Capabilities{Images: true, Adopts: true, Notifies: true, StoresOutputs: true, HealthChecks: true,
			DeletesRuns: true, StartLimit: true, ImageDigests: true},
		Noun:    "Job",
		LostLog: "the executor in its pod did not upload it, and the pod's own log is gone with its Job",
		Open:    open,
		Export:  argoExport,
	})
}

// open configures the backend from the environment (JIKKEN_K8S_NAMESPACE, KUBECONFIG,
// JIKKEN_K8S_EXECUTOR_IMAGE, JIKKEN_K8S_STORE_SECRET, ...), which the settings override.
func open(_ context.Context, env runner.Env, settings any) (runner.Backend, error) {
	s := settings.(*Settings)
	if s.Burst < 0 {
		return nil, &runner.SettingError{Msg: "--kube-burst must be 1 or more"}
	}
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
			return nil, &runner.SettingError{Msg: fmt.Sprintf("--job-ttl %s", err)}
		}
	}
	if s.QPS != 0 {
		cfg.QPS = float32(s.QPS)
	}
	cfg.JobPerAttempt = cfg.JobPerAttempt || s.JobPerAttempt
	if s.Burst != 0 {
		cfg.Burst = s.Burst
	}
	cfg.Store, cfg.StoreURL = env.Store, env.Store.Location()
	return New(cfg)
}

// kubernetesConfig reads the backend's settings from environment variables.
func kubernetesConfig(getenv func(string) string) (Config, error) {
	cfg := Config{
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
