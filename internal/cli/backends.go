package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// backends maps --backend names to constructors.
var backends = map[string]func(ctx context.Context, f *cmdutil.Factory, blob store.Blob, s backendSettings) (runner.Backend, error){
	"local":      newLocalBackend,
	"docker":     newDockerBackend,
	"kubernetes": newKubernetesBackend,
	"slurm":      newSlurmBackend,
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

// backendSettings are a backend's settings from the command line (--namespace, --kubeconfig,
// --partition, --job-ttl, ...) merged over those a run recorded in its manifest. Only the
// kubernetes and slurm backends have any.
type backendSettings struct {
	Namespace  string
	Kubeconfig string
	// JobTTL is how long finished Jobs stay, as given ("": the recorded or default one).
	JobTTL string
	// JobPerAttempt: every attempt a Job of its own, no array Jobs.
	JobPerAttempt bool
	// QPS and Burst are the API client's rate limit (0: $JIKKEN_KUBE_QPS/BURST or the default).
	QPS   float64
	Burst int

	Partition, Account, QOS string
	SbatchArgs              []string
	// Jobs is the run's -j cap where the backend runs trials (0 elsewhere): the slurm backend
	// gives it to each job array as its throttle.
	Jobs int
}

// addFlags adds the settings' flags to a command; withRun is false for commands that act on an
// existing run, whose namespace, Job TTL and partition are the ones it recorded.
func (s *backendSettings) addFlags(cmd *cobra.Command, withRun bool) {
	fl := cmd.Flags()
	if withRun {
		fl.StringVar(&s.Namespace, "namespace", "", "kubernetes backend: namespace of the Jobs (default $JIKKEN_K8S_NAMESPACE, the kubeconfig context's, or default)")
		fl.StringVar(&s.JobTTL, "job-ttl", "", "kubernetes backend: how long finished Jobs and their pods stay, e.g. 30m, or keep (default $JIKKEN_K8S_JOB_TTL or 10m)")
		fl.BoolVar(&s.JobPerAttempt, "job-per-attempt", false, "kubernetes backend: run each attempt as a Job of its own, not the trials of a sweep as Indexed Jobs (default $JIKKEN_K8S_JOB_PER_ATTEMPT=1)")
		fl.StringVar(&s.Partition, "partition", "", "slurm backend: partition of the jobs (default: the cluster's)")
		fl.StringVar(&s.Account, "account", "", "slurm backend: account the jobs are charged to")
		fl.StringVar(&s.QOS, "qos", "", "slurm backend: quality of service of the jobs")
		fl.StringArrayVar(&s.SbatchArgs, "sbatch-arg", nil, "slurm backend: an sbatch option added to every job, as one argument (repeat it: --sbatch-arg=--constraint=a100)")
	}
	fl.StringVar(&s.Kubeconfig, "kubeconfig", "", "kubernetes backend: kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
	fl.Float64Var(&s.QPS, "kube-qps", 0, fmt.Sprintf("kubernetes backend: API requests per second (default $JIKKEN_KUBE_QPS or %d; negative: no limit)", kubernetes.DefaultQPS))
	fl.IntVar(&s.Burst, "kube-burst", 0, fmt.Sprintf("kubernetes backend: API requests allowed in a burst (default $JIKKEN_KUBE_BURST, twice --kube-qps, or %d)", kubernetes.DefaultBurst))
}

// check refuses settings the chosen backend would ignore, so a typo of --backend does not run
// the sweep somewhere else than the user meant, and values that make no sense.
func (s backendSettings) check(backend string) error {
	if s.Burst < 0 {
		return cmdutil.UsageError("--kube-burst must be 1 or more")
	}
	owners := map[string]string{"namespace": "kubernetes", "kubeconfig": "kubernetes", "job-ttl": "kubernetes",
		"job-per-attempt": "kubernetes", "kube-qps": "kubernetes", "kube-burst": "kubernetes",
		"partition": "slurm", "account": "slurm", "qos": "slurm", "sbatch-arg": "slurm"}
	set := map[string]bool{"namespace": s.Namespace != "", "kubeconfig": s.Kubeconfig != "", "job-ttl": s.JobTTL != "",
		"job-per-attempt": s.JobPerAttempt, "kube-qps": s.QPS != 0, "kube-burst": s.Burst != 0,
		"partition": s.Partition != "", "account": s.Account != "", "qos": s.QOS != "", "sbatch-arg": len(s.SbatchArgs) > 0}
	flags := make([]string, 0, len(set))
	for flag := range set {
		flags = append(flags, flag)
	}
	sort.Strings(flags)
	for _, flag := range flags {
		if set[flag] && owners[flag] != backend {
			return cmdutil.UsageError("--%s applies to --backend %s, not %s", flag, owners[flag], backend)
		}
	}
	return nil
}

// over returns s with the recorded settings of a run filling what the command line left empty.
func (s backendSettings) over(recorded map[string]string) backendSettings {
	for _, f := range []struct {
		v   *string
		key string
	}{{&s.Namespace, "namespace"}, {&s.Partition, "partition"}, {&s.Account, "account"}, {&s.QOS, "qos"}} {
		if *f.v == "" {
			*f.v = recorded[f.key]
		}
	}
	if len(s.SbatchArgs) == 0 && recorded["sbatch-args"] != "" {
		s.SbatchArgs = strings.Split(recorded["sbatch-args"], "\n")
	}
	if s.JobTTL == "" {
		s.JobTTL = recorded["job_ttl"]
	}
	s.JobPerAttempt = s.JobPerAttempt || recorded["job_per_attempt"] == "true"
	return s
}

// args are the settings as flags of a child jikken (a detached runner), where the run's
// recorded settings do not already carry them.
func (s backendSettings) args() []string {
	var out []string
	if s.Kubeconfig != "" {
		out = append(out, "--kubeconfig", s.Kubeconfig)
	}
	if s.QPS != 0 {
		out = append(out, "--kube-qps", strconv.FormatFloat(s.QPS, 'g', -1, 64))
	}
	if s.Burst != 0 {
		out = append(out, "--kube-burst", strconv.Itoa(s.Burst))
	}
	return out
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
func newLocalBackend(_ context.Context, f *cmdutil.Factory, blob store.Blob, _ backendSettings) (runner.Backend, error) {
	b := &local.Backend{Env: []string{"JIKKEN_STORE=" + blob.Location()}}
	if f.Executable != "" {
		b.Env = append(b.Env, "JIKKEN_BIN="+f.Executable)
		b.PathPrepend = filepath.Dir(f.Executable)
	}
	return b, nil
}

// openBackend makes the backend name for the run store blob holds, which the command opened.
func openBackend(ctx context.Context, f *cmdutil.Factory, blob store.Blob, name string, s backendSettings) (runner.Backend, error) {
	mk, ok := backends[name]
	if !ok {
		return nil, cmdutil.UsageError("unknown backend %q; use one of %s", name, strings.Join(backendList(), ", "))
	}
	if err := s.check(name); err != nil {
		return nil, err
	}
	b, err := mk(ctx, f, blob, s)
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", name, err)
	}
	return b, nil
}
