package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// newKubernetesBackend configures the kubernetes backend from the environment, documented in
// docs/kubernetes.md: JIKKEN_K8S_NAMESPACE, KUBECONFIG, JIKKEN_K8S_EXECUTOR_IMAGE,
// JIKKEN_K8S_STORE_SECRET, ...; --namespace and --kubeconfig override theirs.
func newKubernetesBackend(ctx context.Context, f *cmdutil.Factory, s backendSettings) (runner.Backend, error) {
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
	blob, err := store.Open(ctx, f.StoreURL)
	if err != nil {
		return nil, err
	}
	cfg.Store, cfg.StoreURL = blob, blob.Location()
	return kubernetes.New(cfg)
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
