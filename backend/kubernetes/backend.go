package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/version"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// Config configures the backend. Zero fields take the defaults named.
type Config struct {
	// Namespace where Jobs are created (default: the kubeconfig context's, else "default").
	Namespace string
	// Kubeconfig is the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
	Kubeconfig string
	// ExecutorImage is the jikken image (FROM scratch, the static binary at /jikken) whose init
	// container installs the executor into each trial's pod.
	ExecutorImage string
	// GitImage runs the code-snapshot checkout (needs git; default alpine/git).
	GitImage string
	// DefaultImage is used for trials that set no image.
	DefaultImage string
	// StoreURL is the store as pods reach it (s3://bucket/prefix).
	StoreURL string
	// StoreSecret names a Secret whose keys become the executor's environment (the S3
	// credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...). Never inlined in the pod.
	StoreSecret string
	// Store is the run's store as this process reaches it: Wait copies each attempt's outputs
	// from it into the attempt folder, and the code snapshot is read from the run's manifest.
	Store store.Blob
	// AllowLocalStore lets a folder store pass Check (tests with fake nodes, where no executor
	// runs and nothing is uploaded).
	AllowLocalStore bool
	// ImageHasCode skips the code-snapshot checkout: the trial images contain the code.
	ImageHasCode     bool
	ServiceAccount   string
	ImagePullSecrets []string
	Tolerations      []corev1.Toleration
	// PendingTimeout is how long a pod may stay unschedulable, or a Job without pods (quota),
	// before the attempt fails with the scheduler's reason (default 5m).
	PendingTimeout time.Duration
	// NodeLossTolerance is how long a pod stays bound to a node that stopped answering before
	// it is evicted and the Job replaces it (default 60s).
	NodeLossTolerance time.Duration
	// StopGrace is the pods' termination grace period (default 10s).
	StopGrace time.Duration
	// LogFlush is how often the executor uploads the growing logs (default 10s).
	LogFlush time.Duration
	// JobTTL is how long a finished Job and its pods stay before the cluster's TTL controller
	// deletes them (ttlSecondsAfterFinished; default DefaultJobTTL, long enough for a runner
	// that lost its watch to read how the attempt ended). Negative: keep them until `jikken rm`.
	JobTTL time.Duration
	// ClusterDomain is the cluster's DNS domain, for the names of service trials (default
	// cluster.local).
	ClusterDomain string
	// QPS and Burst are client-go's client-side rate limit (default DefaultQPS and
	// DefaultBurst; a QPS set alone gets a burst of twice it; a negative QPS: no limit).
	QPS   float32
	Burst int
	// JobPerAttempt runs every attempt as a Job of its own, never batched into an array Job
	// (see arrays.go).
	JobPerAttempt bool
	Log           *slog.Logger
}

// DefaultJobTTL is how long finished Jobs stay unless Config.JobTTL says otherwise.
const DefaultJobTTL = 10 * time.Minute

// DefaultQPS and DefaultBurst are the client's rate limit unless Config says otherwise: 1,000
// trials are submitted in about two seconds, and a 10,000-trial sweep in under twenty. The
// API server's priority and fairness bounds requests in flight, not their rate, and the
// runner's creates are short: at this rate a nearby API server sees a few at once.
const (
	DefaultQPS   = 500
	DefaultBurst = 1000
)

// DefaultExecutorImage is the published executor image of the running jikken's version, so
// the executor in a pod is the same jikken that launched it (never a moving :latest).
func DefaultExecutorImage() string {
	return "ghcr.io/jikken-dev/jikken:" + version.Get().ImageTag()
}

func (c *Config) defaults() {
	if c.GitImage == "" {
		c.GitImage = "alpine/git:2.47.2"
	}
	if c.ExecutorImage == "" {
		c.ExecutorImage = DefaultExecutorImage()
	}
	if c.PendingTimeout == 0 {
		c.PendingTimeout = 5 * time.Minute
	}
	if c.NodeLossTolerance == 0 {
		c.NodeLossTolerance = time.Minute
	}
	if c.StopGrace == 0 {
		c.StopGrace = 10 * time.Second
	}
	if c.LogFlush == 0 {
		c.LogFlush = 10 * time.Second
	}
	if c.ClusterDomain == "" {
		c.ClusterDomain = "cluster.local"
	}
	if c.JobTTL == 0 {
		c.JobTTL = DefaultJobTTL
	}
	if c.QPS == 0 {
		c.QPS = DefaultQPS
		if c.Burst == 0 {
			c.Burst = DefaultBurst
		}
	}
	if c.Burst == 0 {
		c.Burst = max(1, int(2*c.QPS))
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Backend runs trials as Kubernetes Jobs. Build it with New or NewForClient.
type Backend struct {
	cfg    Config
	client kubernetes.Interface
	host   string

	mu       sync.Mutex
	watches  map[string]*runWatch // by run id
	runs     map[string]*runInfo  // by run id
	planned  map[string]bool      // trials of the plan a runner announced (Plan)
	adoptees map[string]adoptee   // by run/trial: a live Job an earlier runner left, re-attached by Start
	// deletedJobs are the Jobs StopLive has deleted (the trials of an array share one).
	deletedJobs map[string]bool

	// creating holds a seat for each Start building and sending a Job (see MaxCreating).
	creating chan struct{}
	batcher  batcher
	// noArrays: the API server turned out not to support Indexed Jobs with per-index limits.
	noArrays atomic.Bool
}

// MaxCreating is how many Starts build and send their Job at once. A run of -j 10000 calls Start
// 10,000 times at once, and the client's rate limit lets 500 creates a second through: without
// a bound each waiting call holds its Job, its request and a deep stack, and the transport dials
// a connection for many of them at once (3,000 trials had thousands of TLS handshakes in
// flight). With it, the rest wait on a channel before building anything; 128 in flight still
// outpace the rate limit unless a create takes the API server a quarter of a second.
const MaxCreating = 128

// MaxStarts implements runner.StartLimiter: beyond the Starts that may create a Job at once, the
// runner keeps the attempts in its queue rather than a goroutine each waiting here.
// Attempts that may share an array Job wait in their batch, not for a seat: room for two
// batches to fill at once.
func (b *Backend) MaxStarts() int {
	if b.cfg.JobPerAttempt {
		return MaxCreating
	}
	return 2 * MaxArray
}

// adoptee is a live Job of an earlier runner, and the attempt it runs (at index, in an array
// Job; else index is -1).
type adoptee struct {
	job     string
	index   int
	attempt int
}

type codeRef struct {
	snapshot json.RawMessage
	subdir   string
}

// runInfo is what the pods of a run need from its manifest, read once per run.
type runInfo struct {
	// mu is held while the manifest is read: the Starts of a run wait for the first one's read
	// instead of each reading it (see Backend.runInfo).
	mu     sync.Mutex
	loaded bool
	code   *codeRef
	// services: the plan has service trials, which the run's pods reach by name.
	services bool
}

var (
	_ runner.Backend      = (*Backend)(nil)
	_ runner.Checker      = (*Backend)(nil)
	_ runner.Adopter      = (*Backend)(nil)
	_ runner.StartLimiter = (*Backend)(nil)
	_ runner.Notifier     = (*process)(nil)
)

// New connects to the cluster of cfg.Kubeconfig (without a request yet: Check makes the first).
func New(cfg Config) (*Backend, error) {
	cfg.defaults()
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if cfg.Kubeconfig != "" {
		rules.ExplicitPath = cfg.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	rc, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, errors.New("no kubeconfig: set KUBECONFIG or --kubeconfig, or create ~/.kube/config (or run inside a cluster)")
		}
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	if cfg.Namespace == "" {
		if ns, _, err := cc.Namespace(); err == nil && ns != "" {
			cfg.Namespace = ns
		} else {
			cfg.Namespace = "default"
		}
	}
	rc.QPS, rc.Burst = cfg.QPS, cfg.Burst
	rc.UserAgent = "jikken"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	b := NewForClient(client, cfg)
	b.host = rc.Host
	return b, nil
}

// NewForClient uses an existing clientset (tests pass a fake or a counting one).
func NewForClient(client kubernetes.Interface, cfg Config) *Backend {
	cfg.defaults()
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	return &Backend{cfg: cfg, client: client, host: "the cluster", watches: map[string]*runWatch{},
		runs: map[string]*runInfo{}, adoptees: map[string]adoptee{}, deletedJobs: map[string]bool{}, creating: make(chan struct{}, MaxCreating),
		batcher: batcher{batches: map[string]*arrayBatch{}}}
}

// Name implements runner.Backend.
func (b *Backend) Name() string { return "kubernetes" }

// Settings returns what another process needs to go on with this backend's Jobs as this one
// does: the namespace, and how long finished Jobs stay. A run records them so that resume and
// kill use them whatever their environment. The keys are the Settings struct's record tags.
func (b *Backend) Settings() map[string]string {
	ttl := b.cfg.JobTTL.String()
	if b.cfg.JobTTL < 0 {
		ttl = "keep"
	}
	s := map[string]string{"namespace": b.cfg.Namespace, "job-ttl": ttl}
	if b.cfg.JobPerAttempt {
		s["job-per-attempt"] = "true"
	}
	return s
}

// Config returns the backend's configuration after defaults.
func (b *Backend) Config() Config { return b.cfg }

// Check implements runner.Checker: the API server answers, the namespace exists, the account
// may manage Jobs and watch pods, every trial has an image, and pods can reach the store. An
// account that may not manage index tables gets one Job per attempt.
func (b *Backend) Check(ctx context.Context, trials []experiment.Trial) error {
	var errs []error
	for _, t := range trials {
		if t.Image == "" && b.cfg.DefaultImage == "" {
			errs = append(errs, fmt.Errorf("trial %s has no image; the kubernetes backend runs trials in containers", t.Name))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if !b.cfg.AllowLocalStore && !strings.HasPrefix(b.cfg.StoreURL, "s3://") {
		return fmt.Errorf("the kubernetes backend needs a store its pods can reach: pass --store s3://bucket/prefix (got %q)", b.cfg.StoreURL)
	}
	if _, err := b.client.Discovery().ServerVersion(); err != nil {
		return b.explain("contact the API server", err)
	}
	if _, err := b.client.CoreV1().Namespaces().Get(ctx, b.cfg.Namespace, metav1.GetOptions{}); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("namespace %s does not exist; create it (kubectl create namespace %s) or pass --namespace / JIKKEN_K8S_NAMESPACE", b.cfg.Namespace, b.cfg.Namespace)
		case !apierrors.IsForbidden(err): // a namespaced account may not read namespaces
			return b.explain("read namespace "+b.cfg.Namespace, err)
		}
	}
	type access struct{ verb, group, resource string }
	needs := []access{
		{"create", "batch", "jobs"}, {"watch", "batch", "jobs"}, {"delete", "batch", "jobs"}, {"watch", "", "pods"},
	}
	for _, t := range trials {
		if t.Service {
			needs = append(needs, access{"create", "", "services"}, access{"update", "", "services"})
			break
		}
	}
	if !b.cfg.JobPerAttempt && len(trials) > 1 {
		// Array Jobs need their index tables, and stopping one trial deletes its pod. An
		// account without these runs a Job per attempt instead.
		for _, need := range []access{{"create", "", "configmaps"}, {"patch", "", "configmaps"}, {"delete", "", "pods"}} {
			if ok, err := b.allowed(ctx, need.verb, need.group, need.resource); err != nil {
				return err
			} else if !ok {
				b.cfg.Log.Info("one Job per attempt: this account may not "+need.verb+" "+need.resource, "namespace", b.cfg.Namespace)
				b.cfg.JobPerAttempt = true
				break
			}
		}
	}
	for _, need := range needs {
		ok, err := b.allowed(ctx, need.verb, need.group, need.resource)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("forbidden: this account may not %s %s in namespace %s (RBAC); it needs create/get/list/watch/delete on jobs, get/list/watch on pods and pods/log, and create/get/update on services when the experiment has service trials", need.verb, need.resource, b.cfg.Namespace)
		}
	}
	return nil
}

// Plan implements runner.Backend: afterwards Live leaves out the Jobs of the plan's trials that
// are still running, and Start re-attaches to them instead of creating new ones, so a runner
// resumed after a crash neither kills nor duplicates the work in flight. 'jikken kill' never
// calls Plan, so it sees and stops every live Job of the run.
func (b *Backend) Plan(trials []experiment.Trial) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.planned = map[string]bool{}
	for _, t := range trials {
		b.planned[t.Name] = true
	}
}

// allowed asks the API server whether this account may do verb on resource in the namespace.
func (b *Backend) allowed(ctx context.Context, verb, group, resource string) (bool, error) {
	ssar := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
		Namespace: b.cfg.Namespace, Verb: verb, Group: group, Resource: resource}}}
	res, err := b.client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar, metav1.CreateOptions{})
	if err != nil {
		return false, b.explain("check permissions", err)
	}
	return res.Status.Allowed, nil
}

// Start implements runner.Backend: it creates the attempt's Job (or re-attaches to the live Job
// an earlier runner of the run left for this trial) and returns once the API server has it.
func (b *Backend) Start(ctx context.Context, a *runner.Attempt) (runner.Process, error) {
	w, err := b.watch(ctx, a.RunID)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	adopted, ok := b.adoptees[a.RunID+"/"+a.Trial.Name]
	delete(b.adoptees, a.RunID+"/"+a.Trial.Name)
	b.mu.Unlock()
	// The runner re-attaches to the attempt it adopted; a later attempt (the adopted one had
	// already ended in the record) is a new Job.
	if ok && adopted.attempt == a.N {
		b.cfg.Log.Info("re-attaching to a Job left by an earlier runner", "trial", a.Trial.Name, "job", adopted.job, "index", adopted.index, "attempt", adopted.attempt)
		return w.attachIndex(adopted.job, adopted.index, a, true).begin(), nil
	}
	if key := b.arrayKey(a); key != "" {
		return b.startInArray(ctx, w, a, key)
	}
	spec, err := b.podSpec(ctx, a)
	if err != nil {
		return nil, err
	}
	return b.startJob(ctx, w, a, spec)
}

// startJob creates the Job of attempt a alone.
func (b *Backend) startJob(ctx context.Context, w *runWatch, a *runner.Attempt, spec PodSpec) (runner.Process, error) {
	select {
	case b.creating <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-b.creating }()
	job, err := b.cfg.Job(spec)
	if err != nil {
		return nil, err
	}
	p := w.attachIndex(job.Name, -1, a, false)
	created, err := b.createJob(ctx, job)
	if apierrors.IsAlreadyExists(err) {
		// The same attempt of the same run: it is ours, watch it.
		if !a.Trial.Service {
			return p.begin(), nil
		}
		created, err = b.client.BatchV1().Jobs(b.cfg.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
	}
	if err != nil {
		w.detach(job.Name)
		return nil, b.explain("create Job "+job.Name+" for trial "+a.Trial.Name, err)
	}
	if a.Trial.Service {
		if err := b.ensureRunService(ctx, a.RunID, created); err != nil {
			// A service nobody can reach by name is of no use: do not leave it running.
			_ = b.deleteJob(ctx, b.cfg.Namespace, job.Name)
			w.detach(job.Name)
			return nil, b.explain("create the Service that names service trial "+a.Trial.Name, err)
		}
	}
	return p.begin(), nil
}

// createJob creates the Job, again after a short wait while the API server cannot take it: a
// connection it dropped, a request it refused for load or one it gave up on. client-go repeats
// only reads, not creates, and a sweep of thousands of trials on a busy control plane meets
// these often enough that failing each such trial would fail the sweep. A create repeated after
// the first one did land finds the Job there (the name is the attempt's): AlreadyExists, which
// Start takes as its own.
func (b *Backend) createJob(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	var created *batchv1.Job
	err := b.withRetry(func() error {
		var err error
		created, err = b.client.BatchV1().Jobs(b.cfg.Namespace).Create(ctx, job, metav1.CreateOptions{})
		return err
	})
	return created, err
}

// withRetry runs a create again while it fails for a reason that passes (see createJob).
func (b *Backend) withRetry(create func() error) error {
	return retry.OnError(createBackoff, transient, create)
}

// createBackoff spreads the repeated creates of many trials over about half a minute.
var createBackoff = utilwait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 8, Cap: 8 * time.Second}

// transient reports whether a request failed for a reason that passes: the connection broke or
// was refused (an API server restarting), or the server answered that it was overloaded, timed
// out, or failed inside (etcd too slow), all of which say nothing about the request itself.
func transient(err error) bool {
	if utilnet.IsConnectionReset(err) || utilnet.IsConnectionRefused(err) || utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err) {
		return true
	}
	var st apierrors.APIStatus
	return errors.As(err, &st) && (st.Status().Code == http.StatusTooManyRequests || st.Status().Code >= http.StatusInternalServerError)
}

// ensureRunService creates the run's headless Service, which gives each service trial's pod the
// DNS name of the trial (see PodSpec.Services), or adds job to its owners: the garbage
// collector deletes the Service with the last Job of a service trial.
func (b *Backend) ensureRunService(ctx context.Context, run string, job *batchv1.Job) error {
	owner := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}
	svc := b.cfg.RunService(run)
	svc.OwnerReferences = []metav1.OwnerReference{owner}
	services := b.client.CoreV1().Services(b.cfg.Namespace)
	_, err := services.Create(ctx, svc, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	// Another service trial's Job owns it already: add this one. (Services are few: a read and
	// an update each, retried when two runners' updates cross.)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := services.Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, o := range cur.OwnerReferences {
			if o.Name == owner.Name && o.UID == owner.UID {
				return nil
			}
		}
		cur.OwnerReferences = append(cur.OwnerReferences, owner)
		_, err = services.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// podSpec gathers what the pod of attempt a needs.
func (b *Backend) podSpec(ctx context.Context, a *runner.Attempt) (PodSpec, error) {
	s := PodSpec{Run: a.RunID, Trial: a.Trial, Attempt: a.N, Env: a.Env}
	if p, err := os.ReadFile(filepath.Join(a.Dir, "params.json")); err == nil {
		s.Params = p
	}
	info, err := b.runInfo(ctx, a.RunID)
	if err != nil {
		return s, err
	}
	if info.code != nil {
		s.Code, s.CodeSubdir = info.code.snapshot, info.code.subdir
	}
	s.Services = info.services || a.Trial.Service
	return s, nil
}

// runInfo reads the run's code snapshot and whether it has services from its manifest, once
// per run. The first Start of a run reads it and the others wait for that read: a run of
// -j 10000 starts 10,000 attempts at once, and a manifest of more than store.CompactAbove trials
// is the experiment, parsed again on every read; read by each Start, 10,000 trials took the
// runner past 10 GB. A read that fails is tried again by the next Start.
func (b *Backend) runInfo(ctx context.Context, run string) (*runInfo, error) {
	if b.cfg.Store == nil {
		return &runInfo{}, nil
	}
	b.mu.Lock()
	info, ok := b.runs[run]
	if !ok {
		info = &runInfo{}
		b.runs[run] = info
	}
	b.mu.Unlock()
	info.mu.Lock()
	defer info.mu.Unlock()
	if info.loaded {
		return info, nil
	}
	m, err := store.Runs{Blob: b.cfg.Store}.Manifest(ctx, run)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Trials started outside a recorded run (benchmarks, tests) have no snapshot.
	case err != nil:
		return nil, fmt.Errorf("read the manifest of run %s: %w", run, err)
	default:
		if !b.cfg.ImageHasCode {
			if info.code, err = CodeOf(m); err != nil {
				return nil, err
			}
		}
		for _, t := range m.Trials {
			info.services = info.services || t.Service
		}
	}
	info.loaded = true
	return info, nil
}

// CodeOf returns the code snapshot a run's pods check out, nil when the run has none, or an
// error when the snapshot cannot be rebuilt away from the machine that took it.
func CodeOf(m *store.Manifest) (*codeRef, error) {
	if m.Code == nil {
		return nil, nil
	}
	snap := m.Code
	switch {
	case snap.Origin == "":
		return nil, fmt.Errorf("the code of run %s (repository %s) has no remote a pod could clone; push it, set a ghost repository, or build images that contain the code and set JIKKEN_K8S_IMAGE_HAS_CODE=1", m.RunID, snap.Repo)
	case (snap.Dirty || (snap.Base != "" && snap.Base != snap.Head)) && snap.GhostRepo == "":
		return nil, fmt.Errorf("the code of run %s has changes that are not pushed (%d files); run with a ghost repository so pods can apply them, or set JIKKEN_K8S_IMAGE_HAS_CODE=1 if the images contain the code", m.RunID, len(snap.Files))
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		return nil, err
	}
	sub, err := filepath.Rel(snap.Repo, filepath.Dir(m.File))
	if err != nil || strings.HasPrefix(sub, "..") || sub == "." {
		sub = ""
	}
	return &codeRef{snapshot: raw, subdir: filepath.ToSlash(sub)}, nil
}

// Live implements runner.Backend: the run's Jobs that have not finished, found by label.
// Those of trials in the plan are not listed but kept for Start to re-attach to, the newest
// attempt of each trial; so is a trial's newest Job that finished while no runner watched it,
// whose end and outputs (the executor stored them) Start then collects instead of running the
// trial again.
//
// When this backend watches the run (its runner asks at the run's end), the watch's cache
// answers first: at the end of a sweep every Job has usually finished, and listing them all
// again (10,000 whole Jobs, 60 MB of response) was the runner's peak of memory and kept it
// 15 s past its last trial. Only when the cache holds a Job that has not finished are they
// listed.
func (b *Backend) Live(ctx context.Context, runID string) ([]runner.LiveTrial, error) {
	b.mu.Lock()
	w := b.watches[runID]
	b.mu.Unlock()
	if w != nil && !w.anyLive() {
		return nil, nil
	}
	type jobRef struct {
		name, ns, trial string
		index, attempt  int
		live            bool
	}
	var jobs []jobRef
	err := b.eachJob(ctx, runID, func(j *batchv1.Job) {
		if j.DeletionTimestamp != nil {
			return
		}
		trials := arrayTrials(j)
		if trials == nil {
			jobs = append(jobs, jobRef{j.Name, j.Namespace, j.Annotations[AnnotationTrial], -1, jobAttempt(j), !finished(j)})
			return
		}
		// An array Job: each index is a trial's attempt, live until its index has ended.
		done, _ := parseIndexes(j.Status.CompletedIndexes)
		failed := indexSet(nil)
		if j.Status.FailedIndexes != nil {
			failed, _ = parseIndexes(*j.Status.FailedIndexes)
		}
		for i, t := range trials {
			live := !finished(j) && !done.has(i) && !failed.has(i)
			jobs = append(jobs, jobRef{j.Name, j.Namespace, t, i, jobAttempt(j), live})
		}
	})
	if err != nil {
		return nil, b.explain("list the Jobs of run "+runID, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	newest := map[string]int{} // trial -> index in jobs
	kept := map[string]bool{}  // array Jobs with an index adopted
	for i, j := range jobs {
		if a, taken := b.adoptees[runID+"/"+j.trial]; taken {
			// Adopted by an earlier Live and not started since (the record says the trial
			// ended): still its newest attempt, not to be stopped, nor its array Job.
			if a.job == j.name && a.index == j.index {
				newest[j.trial] = i
			}
			continue
		}
		if !b.planned[j.trial] {
			continue
		}
		if k, ok := newest[j.trial]; !ok || j.attempt > jobs[k].attempt {
			newest[j.trial] = i
		}
	}
	for trial, i := range newest {
		j := jobs[i]
		b.adoptees[runID+"/"+trial] = adoptee{job: j.name, index: j.index, attempt: j.attempt}
		kept[j.name] = true
	}
	var out []runner.LiveTrial
	for i, j := range jobs {
		if k, ok := newest[j.trial]; !j.live || ok && k == i {
			continue
		}
		handle := "job:" + j.ns + "/" + j.name
		if j.index >= 0 && kept[j.name] {
			// Other indexes of its Job go on: stop this one alone.
			handle += "#" + strconv.Itoa(j.index)
		}
		out = append(out, runner.LiveTrial{RunID: runID, Trial: j.trial, Attempt: j.attempt, Handle: handle})
	}
	return out, nil
}

// jobAttempt is the attempt a Job of jikken's runs.
func jobAttempt(j *batchv1.Job) int {
	n, _ := strconv.Atoi(j.Labels[LabelAttempt])
	return n
}

// listPage is how many Jobs a list request asks for at once: a run's Jobs are read a page at
// a time rather than all in one response (tens of megabytes for a large sweep).
const listPage = 500

// eachJob calls f with each Job of the run, read a page at a time.
func (b *Backend) eachJob(ctx context.Context, runID string, f func(*batchv1.Job)) error {
	opts := metav1.ListOptions{LabelSelector: RunSelector(runID), Limit: listPage}
	for {
		list, err := b.client.BatchV1().Jobs(b.cfg.Namespace).List(ctx, opts)
		if err != nil {
			return err
		}
		for i := range list.Items {
			f(&list.Items[i])
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

// Adopted implements runner.Adopter: the attempts of the run's live Jobs that Live left out,
// which Start re-attaches to.
func (b *Backend) Adopted(runID string) map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for key, a := range b.adoptees {
		if trial, ok := strings.CutPrefix(key, runID+"/"); ok {
			out[trial] = a.attempt
		}
	}
	return out
}

// StopLive implements runner.Backend: it deletes the Job, and with it its pods.
// The trials of an array Job share its handle (`jikken kill` stops them all): it is deleted
// once. A handle ending in #INDEX stops that index alone, by deleting its pod.
func (b *Backend) StopLive(ctx context.Context, lt runner.LiveTrial) error {
	ns, name, ok := strings.Cut(strings.TrimPrefix(lt.Handle, "job:"), "/")
	if !ok || !strings.HasPrefix(lt.Handle, "job:") {
		return fmt.Errorf("bad kubernetes handle %q", lt.Handle)
	}
	if name, index, ok := strings.Cut(name, "#"); ok {
		return b.deleteIndexPods(ctx, ns, name, index)
	}
	b.mu.Lock()
	if b.deletedJobs[ns+"/"+name] {
		b.mu.Unlock()
		return nil
	}
	b.mu.Unlock()
	if err := b.deleteJob(ctx, ns, name); err != nil {
		return err
	}
	b.mu.Lock()
	b.deletedJobs[ns+"/"+name] = true
	b.mu.Unlock()
	return nil
}

// deleteIndexPods deletes the pods of one index of an array Job: its Job counts the index as
// failed (backoffLimitPerIndex 0) and goes on with the others.
func (b *Backend) deleteIndexPods(ctx context.Context, ns, job, index string) error {
	pods := b.client.CoreV1().Pods(ns)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: LabelJob + "=" + job + "," + batchv1.JobCompletionIndexAnnotation + "=" + index})
	if err != nil {
		return b.explain("list the pods of Job "+job+" index "+index, err)
	}
	for _, p := range list.Items {
		if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return b.explain("delete pod "+p.Name, err)
		}
	}
	return nil
}

// DeleteRun deletes every Job of a run, finished or not, with their pods.
func (b *Backend) DeleteRun(ctx context.Context, runID string) (int, error) {
	var names []string
	if err := b.eachJob(ctx, runID, func(j *batchv1.Job) { names = append(names, j.Name) }); err != nil {
		return 0, b.explain("list the Jobs of run "+runID, err)
	}
	for _, name := range names {
		if err := b.deleteJob(ctx, b.cfg.Namespace, name); err != nil {
			return 0, err
		}
	}
	// The index tables of array Jobs go with their Jobs, but for one a runner killed between
	// its creates left without an owner. An account that may not list them made none.
	configMaps := b.client.CoreV1().ConfigMaps(b.cfg.Namespace)
	list, err := configMaps.List(ctx, metav1.ListOptions{LabelSelector: RunSelector(runID)})
	if err != nil && !apierrors.IsForbidden(err) {
		return 0, b.explain("list the ConfigMaps of run "+runID, err)
	}
	if err == nil {
		for _, cm := range list.Items {
			if err := configMaps.Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return 0, b.explain("delete ConfigMap "+cm.Name, err)
			}
		}
	}
	return len(names), nil
}

func (b *Backend) deleteJob(ctx context.Context, ns, name string) error {
	bg := metav1.DeletePropagationBackground
	err := b.client.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		return b.explain("delete Job "+name, err)
	}
	return nil
}

// finished reports whether a Job has ended, and how.
func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// Close stops the watches.
func (b *Backend) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, w := range b.watches {
		w.close()
		delete(b.watches, id)
	}
}
