package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jikken-dev/jikken/experiment"
)

// Labels and annotations on everything the backend creates.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelRun       = "jikken.dev/run"
	LabelTrial     = "jikken.dev/trial"
	LabelAttempt   = "jikken.dev/attempt"
	LabelJob       = "jikken.dev/job"
	// LabelService marks the pods of service trials, which the run's headless Service selects.
	LabelService = "jikken.dev/service"
	// AnnotationTrial keeps the trial's full name, which may not be a valid label value.
	AnnotationTrial = "jikken.dev/trial"

	GPUResource = corev1.ResourceName("nvidia.com/gpu")

	// Paths inside the pod.
	binDir    = "/jikken-bin"
	binPath   = binDir + "/jikken"
	workDir   = "/jikken"
	outDir    = workDir + "/out"
	logDir    = workDir + "/logs"
	paramPath = workDir + "/params.json"
	ckptDir   = workDir + "/checkpoint" // restored from the store and uploaded by trial-exec
	codeDir   = "/code"

	mainContainer = "trial"
)

// labelValue returns v when it is a valid label value, else a readable prefix and a hash.
func labelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	return shortName(v, 63)
}

// shortName makes a lower-case DNS-1123 label of at most max characters from s, unique by a hash.
func shortName(s string, max int) string {
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])[:8]
	p := strings.Trim(dnsUnsafe.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(p) > max-len(h)-1 {
		p = strings.Trim(p[:max-len(h)-1], "-")
	}
	if p == "" {
		return "t" + h
	}
	return p + "-" + h
}

var dnsUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// JobName is the name of attempt n of a trial: deterministic, so a second create of the same
// attempt (a runner resumed after a crash) finds the first instead of duplicating it.
func JobName(run, trial string, n int) string {
	sum := sha256.Sum256([]byte(run + "\x00" + trial))
	h := hex.EncodeToString(sum[:])[:10]
	p := strings.Trim(dnsUnsafe.ReplaceAllString(strings.ToLower(trial), "-"), "-")
	suffix := "-" + h + "-" + strconv.Itoa(n)
	if max := 63 - len("jk-") - len(suffix); len(p) > max {
		p = strings.Trim(p[:max], "-")
	}
	if p == "" {
		return "jk" + suffix
	}
	return "jk-" + p + suffix
}

// RunSelector selects everything of one run.
func RunSelector(run string) string {
	return LabelManagedBy + "=jikken," + LabelRun + "=" + labelValue(run)
}

// PodSpec describes the pod of one attempt, shared by Jobs and Argo templates.
type PodSpec struct {
	Run     string
	Trial   experiment.Trial
	Attempt int
	// Env is the trial interface and the trial's env (KEY=VALUE); paths are rewritten for the pod.
	Env    []string
	Params []byte
	// Code is the run's ghost snapshot (JSON) to check out in an init container, or nil.
	Code json.RawMessage
	// CodeSubdir is the experiment's folder inside the repository.
	CodeSubdir string
	// Record makes the executor write trial.json (workflows without a runner).
	Record []byte
	// Services: the run has service trials. Their pods take the trial's name as hostname in
	// the run's headless Service (RunService), and every pod of the run searches that
	// Service's domain, so `redis-cli -h db` reaches the service trial "db" as on Docker.
	Services bool
}

// RunServiceName is the name of the run's headless Service (and DNS subdomain).
func RunServiceName(run string) string {
	sum := sha256.Sum256([]byte(run))
	return "jks-" + hex.EncodeToString(sum[:])[:12]
}

// HostName is the DNS name other pods of the run reach a service trial by: the trial's name,
// lower-cased, with characters a DNS label cannot hold turned into "-".
func HostName(trial string) string {
	h := strings.Trim(dnsUnsafe.ReplaceAllString(strings.ToLower(trial), "-"), "-")
	if len(h) > 63 {
		h = strings.Trim(h[:63], "-")
	}
	if h == "" || h[0] < 'a' {
		h = "t" + h
	}
	return h
}

// runDomain is the DNS domain of the run's Service, which its pods search.
func (c *Config) runDomain(run string) string {
	return RunServiceName(run) + "." + c.Namespace + ".svc." + c.ClusterDomain
}

// RunService is the headless Service that publishes the DNS names of a run's service trials:
// <trial>.<service>.<namespace>.svc.<cluster domain>. Addresses are published as soon as a pod
// has one, not when it is Ready, as on a Docker network; trials that need the service ready
// wait for it with depends: healthy.
func (c *Config) RunService(run string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: RunServiceName(run), Namespace: c.Namespace,
			Labels:      c.labels(run, "", 0, ""),
			Annotations: map[string]string{"jikken.dev/run": run},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{LabelManagedBy: "jikken", LabelRun: labelValue(run), LabelService: "true"},
			PublishNotReadyAddresses: true,
		},
	}
}

// labels are the pod's and the Job's labels.
func (c *Config) labels(run, trial string, attempt int, name string) map[string]string {
	l := map[string]string{
		LabelManagedBy: "jikken",
		LabelRun:       labelValue(run),
	}
	if trial != "" {
		l[LabelTrial] = labelValue(trial)
	}
	if attempt > 0 {
		l[LabelAttempt] = strconv.Itoa(attempt)
	}
	if name != "" {
		l[LabelJob] = name
	}
	return l
}

// pod builds the pod template of an attempt: an init container installs the executor from the
// jikken image into a shared volume, another checks out the code snapshot when there is one,
// and the trial's own image runs `jikken trial-exec -- CMD`.
func (c *Config) pod(s PodSpec, name string, executorArgs []string) (corev1.PodTemplateSpec, error) {
	t := s.Trial
	image := t.Image
	if image == "" {
		image = c.DefaultImage
	}
	if image == "" {
		return corev1.PodTemplateSpec{}, fmt.Errorf("trial %s has no image; the kubernetes backend runs trials in containers: set image in the experiment", t.Name)
	}
	if t.Cmd.IsZero() {
		return corev1.PodTemplateSpec{}, fmt.Errorf("trial %s has no cmd", t.Name)
	}
	argv := argvOf(t.Cmd)
	wd := t.Workdir
	mounts := []corev1.VolumeMount{{Name: "jikken-bin", MountPath: binDir}, {Name: "jikken-work", MountPath: workDir}}
	volumes := []corev1.Volume{
		{Name: "jikken-bin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "jikken-work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	inits := []corev1.Container{{
		Name:         "jikken-install",
		Image:        c.ExecutorImage,
		Command:      []string{"/jikken", "trial-exec", "install", binPath},
		VolumeMounts: []corev1.VolumeMount{{Name: "jikken-bin", MountPath: binDir}},
	}}
	if s.Code != nil {
		volumes = append(volumes, corev1.Volume{Name: "jikken-code", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		codeMount := corev1.VolumeMount{Name: "jikken-code", MountPath: codeDir}
		mounts = append(mounts, codeMount)
		inits = append(inits, corev1.Container{
			Name:         "jikken-code",
			Image:        c.GitImage,
			Command:      []string{binPath, "trial-exec", "code", codeDir},
			Env:          []corev1.EnvVar{{Name: "JIKKEN_CODE_SNAPSHOT", Value: string(s.Code)}},
			VolumeMounts: []corev1.VolumeMount{{Name: "jikken-bin", MountPath: binDir}, codeMount},
		})
		if !path.IsAbs(wd) {
			wd = path.Join(codeDir, s.CodeSubdir, wd)
		}
	}
	args := append([]string{binPath, "trial-exec", "--store", c.StoreURL, "--log-dir", logDir}, executorArgs...)
	if wd != "" {
		args = append(args, "--workdir", wd)
	}
	args = append(append(args, "--"), argv...)

	env := podEnv(s.Env)
	if s.Params != nil {
		env = append(env, corev1.EnvVar{Name: "JIKKEN_PARAMS_JSON", Value: string(s.Params)})
	}
	if s.Record != nil {
		env = append(env, corev1.EnvVar{Name: "JIKKEN_RECORD_JSON", Value: string(s.Record)})
	}
	env = append(env, corev1.EnvVar{Name: "JIKKEN_STORE", Value: c.StoreURL})
	var envFrom []corev1.EnvFromSource
	if c.StoreSecret != "" {
		// Store credentials come from a Secret, never from the pod spec itself.
		envFrom = append(envFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: c.StoreSecret}}})
	}
	res, err := resources(t.Resources)
	if err != nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("trial %s: %w", t.Name, err)
	}
	// Init containers take the trial's CPU and memory (not its GPUs): a namespace quota on CPU
	// or memory refuses pods with a container that sets none, and a pod's request is the larger
	// of its init containers' and the sum of its containers', so this asks for nothing more.
	initRes := corev1.ResourceRequirements{}
	for k, v := range res.Limits {
		if k == corev1.ResourceCPU || k == corev1.ResourceMemory {
			if initRes.Limits == nil {
				initRes.Limits, initRes.Requests = corev1.ResourceList{}, corev1.ResourceList{}
			}
			initRes.Limits[k], initRes.Requests[k] = v, v
		}
	}
	for i := range inits {
		inits[i].Resources = initRes
	}
	main := corev1.Container{
		Name: mainContainer, Image: image, Command: args, Env: env, EnvFrom: envFrom,
		Resources: res, VolumeMounts: mounts,
	}
	if t.Health != nil {
		main.ReadinessProbe = probe(t.Health)
	}
	labels := c.labels(s.Run, t.Name, s.Attempt, name)
	for k, v := range t.Labels {
		if _, ours := labels[k]; !ours {
			labels[k] = v
		}
	}
	grace := int64(c.StopGrace.Seconds())
	if t.Checkpoint != nil {
		// The trial's warning: SIGTERM, then its checkpoint's before to save it (and
		// trial-exec to upload it) before SIGKILL.
		grace = max(grace, int64(time.Duration(t.CheckpointSettings().Before).Seconds()))
	}
	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		InitContainers:                inits,
		Containers:                    []corev1.Container{main},
		Volumes:                       volumes,
		NodeSelector:                  t.NodeSelector,
		Tolerations:                   c.tolerations(t),
		ServiceAccountName:            c.ServiceAccount,
		TerminationGracePeriodSeconds: &grace,
		AutomountServiceAccountToken:  ptr(false),
	}
	for _, ps := range c.ImagePullSecrets {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: ps})
	}
	if s.Services {
		svc := RunServiceName(s.Run)
		spec.DNSConfig = &corev1.PodDNSConfig{Searches: []string{c.runDomain(s.Run)}}
		if t.Service {
			spec.Hostname, spec.Subdomain = HostName(t.Name), svc
			labels[LabelService] = "true"
		}
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{AnnotationTrial: t.Name}},
		Spec:       spec,
	}, nil
}

// podEnv turns the runner's KEY=VALUE list into container env, pointing the trial-interface
// paths at the pod's folders.
func podEnv(kvs []string) []corev1.EnvVar {
	env := make([]corev1.EnvVar, 0, len(kvs))
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "JIKKEN_OUTPUT_DIR":
			v = outDir
		case "JIKKEN_PARAMS":
			v = paramPath
		case "JIKKEN_CHECKPOINT_DIR":
			v = ckptDir
		}
		env = append(env, corev1.EnvVar{Name: k, Value: v})
	}
	return env
}

// SharedGPUResource is the resource a share of a GPU (gpu: 0.5) asks for: the name the NVIDIA
// device plugin gives the replicas of a time-sliced or MPS-shared GPU when it renames them
// (renameByDefault). The cluster's sharing configuration sets how big a replica is.
const SharedGPUResource = corev1.ResourceName("nvidia.com/gpu.shared")

// MIGResource is the resource a MIG instance of a profile asks for under the device plugin's
// mixed strategy: nvidia.com/mig-1g.10gb.
func MIGResource(profile string) corev1.ResourceName {
	return corev1.ResourceName("nvidia.com/mig-" + profile)
}

// resources are requests equal to limits (the Guaranteed class: a trial's measurements are not
// disturbed by neighbours bursting); whole GPUs as nvidia.com/gpu, a share of one as one
// shared replica (SharedGPUResource), a MIG instance as nvidia.com/mig-<profile>.
func resources(r experiment.Resources) (corev1.ResourceRequirements, error) {
	l := corev1.ResourceList{}
	if r.CPU > 0 {
		l[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(r.CPU*1000+0.5), resource.DecimalSI)
	}
	if r.Memory > 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(r.Memory, resource.BinarySI)
	}
	switch {
	case r.GPU >= 1:
		l[GPUResource] = *resource.NewQuantity(int64(r.GPU), resource.DecimalSI)
	case r.GPU > 0:
		l[SharedGPUResource] = *resource.NewQuantity(1, resource.DecimalSI)
	case r.MIG != "":
		l[MIGResource(r.MIG)] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	if r.CPU < 0 || r.Memory < 0 || r.GPU < 0 {
		return corev1.ResourceRequirements{}, fmt.Errorf("negative resources %+v", r)
	}
	if len(l) == 0 {
		return corev1.ResourceRequirements{}, nil
	}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}, nil
}

// tolerations let GPU trials onto GPU nodes (commonly tainted nvidia.com/gpu), bound how long a
// pod stays on a node that stopped answering before it is evicted and replaced, and add the
// trial's own and the configuration's.
func (c *Config) tolerations(t experiment.Trial) []corev1.Toleration {
	secs := int64(c.NodeLossTolerance.Seconds())
	tol := []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
	}
	if t.Resources.UsesGPU() {
		tol = append(tol, corev1.Toleration{Key: string(GPUResource), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	for _, x := range t.Tolerations {
		tol = append(tol, corev1.Toleration{Key: x.Key, Operator: corev1.TolerationOperator(x.Operator), Value: x.Value,
			Effect: corev1.TaintEffect(x.Effect), TolerationSeconds: x.Seconds})
	}
	return append(tol, c.Tolerations...)
}

func probe(h *experiment.Health) *corev1.Probe {
	p := &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 3}
	if h.Interval > 0 {
		p.PeriodSeconds = int32(max(1, int64(h.Interval)/1e9))
	}
	if h.TCP != "" {
		_, port, ok := strings.Cut(h.TCP[strings.LastIndex(h.TCP, ":")+1:], ":")
		if !ok {
			port = h.TCP[strings.LastIndex(h.TCP, ":")+1:]
		}
		n, _ := strconv.Atoi(port)
		p.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(n))}
		return p
	}
	if h.HTTP != "" {
		if u, err := url.Parse(h.HTTP); err == nil {
			n, _ := strconv.Atoi(u.Port())
			if n == 0 {
				n = map[string]int{"http": 80, "https": 443}[u.Scheme]
			}
			path := u.RequestURI()
			p.HTTPGet = &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(int32(n)), Scheme: corev1.URIScheme(strings.ToUpper(u.Scheme))}
			return p
		}
	}
	p.Exec = &corev1.ExecAction{Command: argvOf(h.Cmd)}
	return p
}

// Job builds the Job of one attempt. The runner owns retries (each attempt is its own Job, so
// the trial's record lists every attempt and its reason), so backoffLimit is 0 and a pod lost
// with its node fails the attempt, which the runner retries as any other failure.
// (A pod failure policy that ignores disruptions would make the Job wait for the lost pod to
// reach phase Failed, which a pod on a dead node never does.) activeDeadlineSeconds is the
// trial's timeout.
func (c *Config) Job(s PodSpec) (*batchv1.Job, error) {
	name := JobName(s.Run, s.Trial.Name, s.Attempt)
	tmpl, err := c.pod(s, name, []string{"--flush-every", c.LogFlush.String()})
	if err != nil {
		return nil, err
	}
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: c.Namespace,
			Labels:      c.labels(s.Run, s.Trial.Name, s.Attempt, name),
			Annotations: map[string]string{AnnotationTrial: s.Trial.Name},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr(int32(0)),
			Template:     tmpl,
		},
	}
	if c.JobTTL >= 0 {
		// Rounded up: a TTL below a second must not become "delete at once".
		j.Spec.TTLSecondsAfterFinished = ptr(int32(min((c.JobTTL+time.Second-1)/time.Second, math.MaxInt32)))
	}
	if s.Trial.Timeout > 0 {
		j.Spec.ActiveDeadlineSeconds = ptr(int64((s.Trial.Timeout + 999999999) / 1e9))
	}
	return j, nil
}

func ptr[T any](v T) *T { return &v }

// argvOf is the command a container runs for c: its argv, or a string cmd through /bin/sh -c.
func argvOf(c experiment.Command) []string {
	if c.Argv != nil {
		return c.Argv
	}
	return []string{"/bin/sh", "-c", c.Shell}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
