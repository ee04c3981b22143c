package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// backends maps --backend names to constructors.
var backends = map[string]func(ctx context.Context, f *cmdutil.Factory, s backendSettings) (runner.Backend, error){
	"local":      newLocalBackend,
	"docker":     newDockerBackend,
	"kubernetes": newKubernetesBackend,
}

// backendList returns the names of the backends, sorted.
func backendList() []string {
	names := make([]string, 0, len(backends))
	for n := range backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// backendSettings are a backend's settings from the command line (--namespace, --kubeconfig)
// merged over those a run recorded in its manifest. Only the kubernetes backend has any.
type backendSettings struct {
	Namespace  string
	Kubeconfig string
}

// addFlags adds the settings' flags to a command; withNamespace is false for commands that act
// on an existing run, whose namespace is the one it recorded.
func (s *backendSettings) addFlags(cmd *cobra.Command, withNamespace bool) {
	fl := cmd.Flags()
	if withNamespace {
		fl.StringVar(&s.Namespace, "namespace", "", "kubernetes backend: namespace of the Jobs (default $JIKKEN_K8S_NAMESPACE, the kubeconfig context's, or default)")
	}
	fl.StringVar(&s.Kubeconfig, "kubeconfig", "", "kubernetes backend: kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
}

// check refuses settings the chosen backend would ignore, so a typo of --backend does not run
// the sweep somewhere else than the user meant.
func (s backendSettings) check(backend string) error {
	if backend == "kubernetes" {
		return nil
	}
	for flag, v := range map[string]string{"namespace": s.Namespace, "kubeconfig": s.Kubeconfig} {
		if v != "" {
			return cmdutil.UsageError("--%s applies to --backend kubernetes, not %s", flag, backend)
		}
	}
	return nil
}

// over returns s with the recorded settings of a run filling what the command line left empty.
func (s backendSettings) over(recorded map[string]string) backendSettings {
	if s.Namespace == "" {
		s.Namespace = recorded["namespace"]
	}
	return s
}

// recordedSettings are what a run keeps in its manifest so that resume, kill and reproduce
// find its objects again from another shell or machine (the kubeconfig path is not kept: it
// is a file of this machine).
type recordedSettings interface {
	Settings() map[string]string
}

func settingsOf(b runner.Backend) map[string]string {
	if r, ok := b.(recordedSettings); ok {
		return r.Settings()
	}
	return nil
}

// newLocalBackend gives trials the store and the jikken binary that runs them, so a final step
// can read its siblings' results with 'jikken results "$JIKKEN_RUN_ID"'.
func newLocalBackend(ctx context.Context, f *cmdutil.Factory, _ backendSettings) (runner.Backend, error) {
	b := &local.Backend{}
	if blob, err := store.Open(ctx, f.StoreURL); err == nil {
		b.Env = append(b.Env, "JIKKEN_STORE="+blob.Location())
	}
	if f.Executable != "" {
		b.Env = append(b.Env, "JIKKEN_BIN="+f.Executable)
		b.PathPrepend = filepath.Dir(f.Executable)
	}
	return b, nil
}

func openBackend(ctx context.Context, f *cmdutil.Factory, name string, s backendSettings) (runner.Backend, error) {
	mk, ok := backends[name]
	if !ok {
		return nil, cmdutil.UsageError("unknown backend %q; use one of %s", name, strings.Join(backendList(), ", "))
	}
	if err := s.check(name); err != nil {
		return nil, err
	}
	b, err := mk(ctx, f, s)
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", name, err)
	}
	return b, nil
}
