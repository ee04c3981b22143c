package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

// The subset of Argo Workflows' v1alpha1 types an export uses, with Argo's JSON names. Argo is
// not a dependency: its module pulls in far more than these few fields are worth.

// Workflow is an Argo Workflow.
type Workflow struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   ObjectMeta   `json:"metadata"`
	Spec       WorkflowSpec `json:"spec"`
}

// ObjectMeta is the part of metadata an export sets.
type ObjectMeta struct {
	Name         string            `json:"name,omitempty"`
	GenerateName string            `json:"generateName,omitempty"`
	Namespace    string            `json:"namespace,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// WorkflowSpec is the part of an Argo WorkflowSpec an export sets.
type WorkflowSpec struct {
	Entrypoint         string                        `json:"entrypoint"`
	Parallelism        *int64                        `json:"parallelism,omitempty"`
	ServiceAccountName string                        `json:"serviceAccountName,omitempty"`
	ImagePullSecrets   []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	PodGC              *PodGC                        `json:"podGC,omitempty"`
	DNSConfig          *corev1.PodDNSConfig          `json:"dnsConfig,omitempty"`
	Templates          []Template                    `json:"templates"`
}

// ResourceTemplate is a template that creates a Kubernetes object (the run's Service).
type ResourceTemplate struct {
	Action            string `json:"action"`
	Manifest          string `json:"manifest"`
	SetOwnerReference bool   `json:"setOwnerReference,omitempty"`
}

// PodGC says when Argo deletes the workflow's pods.
type PodGC struct {
	Strategy string `json:"strategy"`
}

// Template is an Argo template: the DAG, or one trial.
type Template struct {
	Name                  string              `json:"name"`
	Metadata              *ObjectMeta         `json:"metadata,omitempty"`
	DAG                   *DAG                `json:"dag,omitempty"`
	InitContainers        []corev1.Container  `json:"initContainers,omitempty"`
	Container             *corev1.Container   `json:"container,omitempty"`
	Volumes               []corev1.Volume     `json:"volumes,omitempty"`
	Daemon                *bool               `json:"daemon,omitempty"`
	RetryStrategy         *RetryStrategy      `json:"retryStrategy,omitempty"`
	ActiveDeadlineSeconds *intstr.IntOrString `json:"activeDeadlineSeconds,omitempty"`
	NodeSelector          map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations           []corev1.Toleration `json:"tolerations,omitempty"`
	// PodSpecPatch is merged into the pod: a service trial's hostname and subdomain.
	PodSpecPatch string            `json:"podSpecPatch,omitempty"`
	Resource     *ResourceTemplate `json:"resource,omitempty"`
	// Synchronization holds a trial's seat of the run's -j (see WorkflowOf).
	Synchronization *Synchronization `json:"synchronization,omitempty"`
}

// Synchronization is a template's share of Argo semaphores.
type Synchronization struct {
	Semaphores []Semaphore `json:"semaphores"`
}

// Semaphore is an Argo semaphore whose size is a key of a ConfigMap.
type Semaphore struct {
	ConfigMapKeyRef *corev1.ConfigMapKeySelector `json:"configMapKeyRef"`
}

// DAG is a template of tasks with dependencies.
type DAG struct {
	Tasks    []DAGTask `json:"tasks"`
	FailFast *bool     `json:"failFast,omitempty"`
}

// DAGTask is one node of a DAG.
type DAGTask struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	Depends  string `json:"depends,omitempty"`
}

// RetryStrategy is Argo's retry of a failed step.
type RetryStrategy struct {
	Limit       *intstr.IntOrString `json:"limit,omitempty"`
	RetryPolicy string              `json:"retryPolicy,omitempty"`
	Backoff     *Backoff            `json:"backoff,omitempty"`
}

// Backoff is the wait between retries.
type Backoff struct {
	Duration    string              `json:"duration,omitempty"`
	Factor      *intstr.IntOrString `json:"factor,omitempty"`
	MaxDuration string              `json:"maxDuration,omitempty"`
}

// WorkflowOf renders a run as an Argo Workflow: a DAG of one task per trial, `after` and
// `depends` edges as Argo depends expressions, services as daemon steps (ready when their
// health check passes), retries as retryStrategy with the trial's backoff, the run's -j as the
// cap on trials running at once, and in every pod the jikken executor uploading outputs and the
// trial's record to the store, where `jikken results RUN` reads them.
//
// The cap counts trials, not services, as `jikken run -j` does. Argo's parallelism counts every
// pod, the services' and the one that creates the run's Service too; so a run without services
// gets parallelism -j, and a run with services gets a semaphore of -j seats instead (a ConfigMap
// the workflow creates first and owns), which every trial but the services holds while it runs.
func (c *Config) WorkflowOf(m *store.Manifest) (*Workflow, error) {
	c.defaults()
	names := make(map[string]string, len(m.Trials))
	taken := map[string]bool{"main": true, servicesTask: true, limitTask: true}
	services := false
	for _, t := range m.Trials {
		services = services || t.Service
	}
	for _, t := range m.Trials {
		n := shortName(t.Name, 60)
		if len(validLabelName(t.Name)) == 0 && !taken[t.Name] {
			n = t.Name
		}
		names[t.Name], taken[n] = n, true
	}
	var code *codeRef
	if !c.ImageHasCode {
		var err error
		if code, err = CodeOf(m); err != nil {
			return nil, err
		}
	}
	w := &Workflow{
		APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow",
		Metadata: ObjectMeta{
			Name: WorkflowName(m.RunID), Namespace: c.Namespace,
			Labels:      map[string]string{LabelManagedBy: "jikken", LabelRun: labelValue(m.RunID)},
			Annotations: map[string]string{"jikken.dev/run-id": m.RunID, "jikken.dev/store": c.StoreURL},
		},
		Spec: WorkflowSpec{Entrypoint: "main", ServiceAccountName: c.ServiceAccount, PodGC: &PodGC{Strategy: "OnWorkflowSuccess"}},
	}
	limited := m.Options.Jobs > 0 && services
	if m.Options.Jobs > 0 && !services {
		w.Spec.Parallelism = ptr(int64(m.Options.Jobs))
	}
	for _, ps := range c.ImagePullSecrets {
		w.Spec.ImagePullSecrets = append(w.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: ps})
	}
	dag := &DAG{}
	if m.Options.FailFast {
		dag.FailFast = ptr(true)
	}
	w.Spec.Templates = append(w.Spec.Templates, Template{Name: "main", DAG: dag})
	if services {
		if c.Namespace == "" {
			return nil, errors.New("the experiment has service trials, which the other trials reach by name through a Service in the workflow's namespace: pass --namespace (or set JIKKEN_K8S_NAMESPACE)")
		}
		// Service trials keep their names (see PodSpec.Services): the run's headless Service is
		// created first, owned by the workflow, and every pod searches its domain.
		svc, err := c.serviceTemplate(m.RunID)
		if err != nil {
			return nil, err
		}
		w.Spec.Templates = append(w.Spec.Templates, svc)
		dag.Tasks = append(dag.Tasks, DAGTask{Name: servicesTask, Template: servicesTask})
		w.Spec.DNSConfig = &corev1.PodDNSConfig{Searches: []string{c.runDomain(m.RunID)}}
	}
	var seat *Synchronization
	if limited {
		lim, err := limitTemplate(m.RunID, m.Options.Jobs)
		if err != nil {
			return nil, err
		}
		w.Spec.Templates = append(w.Spec.Templates, lim)
		dag.Tasks = append(dag.Tasks, DAGTask{Name: limitTask, Template: limitTask})
		seat = &Synchronization{Semaphores: []Semaphore{{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: LimitConfigMapName(m.RunID)}, Key: limitKey}}}}
	}
	for _, t := range m.Trials {
		tmpl, err := c.argoTemplate(m, t, names[t.Name], code, services)
		if err != nil {
			return nil, err
		}
		dep := depends(t, names)
		switch {
		case t.Service:
			dep = strings.Trim(dep+" && "+servicesTask+".Succeeded", " &")
		case seat != nil:
			tmpl.Synchronization = seat
			if !afterTrial(t, m.Trials) {
				dep = strings.Trim(dep+" && "+limitTask+".Succeeded", " &")
			}
		}
		dag.Tasks = append(dag.Tasks, DAGTask{Name: names[t.Name], Template: names[t.Name], Depends: dep})
		w.Spec.Templates = append(w.Spec.Templates, tmpl)
	}
	return w, nil
}

// servicesTask is the DAG task that creates the run's Service.
const servicesTask = "jikken-services"

// serviceTemplate creates the run's headless Service, owned by the workflow so that it goes
// with it; "apply" makes a second submission of the same export succeed.
func (c *Config) serviceTemplate(run string) (Template, error) {
	svc := c.RunService(run)
	svc.Namespace = "" // the workflow's namespace
	svc.APIVersion, svc.Kind = "v1", "Service"
	b, err := yaml.Marshal(svc)
	if err != nil {
		return Template{}, fmt.Errorf("render the run's Service: %w", err)
	}
	return Template{Name: servicesTask, Resource: &ResourceTemplate{Action: "apply", Manifest: string(b), SetOwnerReference: true}}, nil
}

// afterTrial reports whether t waits for a trial that is not a service, and so for whatever
// that trial waits for.
func afterTrial(t experiment.Trial, trials []experiment.Trial) bool {
	service := make(map[string]bool, len(trials))
	for _, u := range trials {
		service[u.Name] = u.Service
	}
	for _, a := range t.After {
		if !service[a] {
			return true
		}
	}
	for _, d := range t.Depends {
		if !service[d.Trial] {
			return true
		}
	}
	return false
}

// limitTask is the DAG task that creates the ConfigMap of the run's semaphore, and limitKey its
// key holding -j.
const (
	limitTask = "jikken-limit"
	limitKey  = "trials"
)

// LimitConfigMapName is the name of the ConfigMap whose key "trials" is the size of an exported
// run's semaphore (-j).
func LimitConfigMapName(run string) string {
	sum := sha256.Sum256([]byte(run))
	return "jkl-" + hex.EncodeToString(sum[:])[:12]
}

// limitTemplate creates the ConfigMap of the run's semaphore, owned by the workflow.
func limitTemplate(run string, jobs int) (Template, error) {
	cm := corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: LimitConfigMapName(run), Labels: map[string]string{LabelManagedBy: "jikken", LabelRun: labelValue(run)}},
		Data:       map[string]string{limitKey: strconv.Itoa(jobs)},
	}
	b, err := yaml.Marshal(cm)
	if err != nil {
		return Template{}, fmt.Errorf("render the run's semaphore: %w", err)
	}
	return Template{Name: limitTask, Resource: &ResourceTemplate{Action: "apply", Manifest: string(b), SetOwnerReference: true}}, nil
}

// WorkflowName is the name of the Workflow an exported run becomes: the run id, so `argo get`
// and `jikken status` name the same thing, and submitting one export twice (two workflows
// writing one run's records) is refused by the API server.
func WorkflowName(run string) string {
	if len(validation.IsDNS1123Label(run)) == 0 && len(run) <= 50 {
		return run
	}
	return shortName(run, 50)
}

func validLabelName(s string) []string {
	if len(s) > 60 || s == "" || s[0] < 'a' || s[0] > 'z' {
		return []string{"not a DNS label"}
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return []string{"not a DNS label"}
		}
	}
	return nil
}

// depends turns a trial's edges into an Argo depends expression.
func depends(t experiment.Trial, names map[string]string) string {
	var parts []string
	for _, a := range t.After {
		parts = append(parts, names[a]+".Succeeded")
	}
	for _, d := range t.Depends {
		n := names[d.Trial]
		switch d.Condition {
		case experiment.Completed:
			parts = append(parts, "("+n+".Succeeded || "+n+".Failed)")
		case experiment.Started, experiment.Healthy:
			// A daemon step counts as done once it is running (and ready, with a probe).
			parts = append(parts, "("+n+".Daemoned || "+n+".Succeeded)")
		default:
			parts = append(parts, n+".Succeeded")
		}
	}
	return strings.Join(parts, " && ")
}

// argoTemplate is the template of one trial.
func (c *Config) argoTemplate(m *store.Manifest, t experiment.Trial, name string, code *codeRef, services bool) (Template, error) {
	params, err := paramsJSON(t)
	if err != nil {
		return Template{}, err
	}
	rec, err := json.Marshal(store.TrialRecord{Run: m.RunID, Name: t.Name, Index: t.Index, Group: t.Group, Service: t.Service,
		Params: t.Params, Seed: t.Seed, Backend: "argo", Image: t.Image, Attempts: []store.Attempt{}})
	if err != nil {
		return Template{}, err
	}
	s := PodSpec{Run: m.RunID, Trial: t, Env: argoEnv(m.RunID, t), Params: params, Record: rec, Services: services}
	if code != nil {
		s.Code, s.CodeSubdir = code.snapshot, code.subdir
	}
	pod, err := c.pod(s, "", []string{"--record", "--flush-every", c.LogFlush.String()})
	if err != nil {
		return Template{}, err
	}
	main := pod.Spec.Containers[0]
	tmpl := Template{
		Name:           name,
		Metadata:       &ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations},
		InitContainers: pod.Spec.InitContainers,
		Container:      &main,
		Volumes:        pod.Spec.Volumes,
		NodeSelector:   pod.Spec.NodeSelector,
		Tolerations:    pod.Spec.Tolerations,
	}
	if t.Service {
		tmpl.Daemon = ptr(true)
		patch, err := json.Marshal(map[string]string{"hostname": pod.Spec.Hostname, "subdomain": pod.Spec.Subdomain})
		if err != nil {
			return Template{}, err
		}
		tmpl.PodSpecPatch = string(patch)
	}
	if t.Retries > 0 {
		limit := intstr.FromInt32(int32(t.Retries))
		factor := intstr.FromInt32(2)
		base := time.Duration(t.Backoff)
		if base <= 0 {
			base = time.Second
		}
		tmpl.RetryStrategy = &RetryStrategy{Limit: &limit, RetryPolicy: "Always",
			Backoff: &Backoff{Duration: base.String(), Factor: &factor, MaxDuration: "10m"}}
	}
	if t.Timeout > 0 {
		secs := intstr.FromInt32(int32((t.Timeout + 999999999) / 1e9))
		tmpl.ActiveDeadlineSeconds = &secs
	}
	return tmpl, nil
}

// argoEnv is the trial interface for a pod with no runner: attempt numbers come from Argo.
func argoEnv(run string, t experiment.Trial) []string {
	// {{retries}} exists only in templates with a retryStrategy.
	attempt := "1"
	if t.Retries > 0 {
		attempt = "{{=asInt(retries) + 1}}"
	}
	env := []string{
		"JIKKEN_RUN_ID=" + run,
		"JIKKEN_TRIAL=" + t.Name,
		"JIKKEN_TRIAL_INDEX=" + strconv.Itoa(t.Index),
		"JIKKEN_ATTEMPT=" + attempt,
		"JIKKEN_PARAMS=" + paramPath,
		"JIKKEN_OUTPUT_DIR=" + outDir,
	}
	if t.Seed != nil {
		env = append(env, "JIKKEN_SEED="+strconv.FormatInt(*t.Seed, 10))
	}
	for _, k := range sortedKeys(t.Params) {
		env = append(env, experiment.ParamEnv(k)+"="+experiment.ParamString(t.Params[k]))
	}
	for _, k := range sortedKeys(t.Env) {
		env = append(env, k+"="+t.Env[k])
	}
	return env
}

// paramsJSON is params.json as the runner writes it: the params, and the seed unless a param
// is called seed.
func paramsJSON(t experiment.Trial) ([]byte, error) {
	out := make(map[string]any, len(t.Params)+1)
	for k, v := range t.Params {
		out[k] = v
	}
	if t.Seed != nil {
		if _, taken := out["seed"]; !taken {
			out["seed"] = *t.Seed
		}
	}
	return json.Marshal(out)
}

// YAML renders the workflow for `argo submit` / `kubectl create`.
func (w *Workflow) YAML() ([]byte, error) {
	b, err := yaml.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("render workflow: %w", err)
	}
	return b, nil
}
