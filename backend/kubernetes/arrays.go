package kubernetes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jikken-dev/jikken/executor"
	"github.com/jikken-dev/jikken/runner"
)

// Arrays. The attempts of a sweep's trials that differ only in their command, environment and
// params (a matrix of seeds, a grid of learning rates) run as one Indexed Job per batch, one
// index per trial, instead of one Job each: 10,000 trials are 20 Jobs to create and for the
// Job controller to keep up to date, not 10,000 (one Indexed Job of 1,000 finished its pods
// 28% sooner than 1,000 Jobs, docs/kubernetes.md). What differs between the trials of a batch
// goes into a ConfigMap with one entry per index (executor.IndexedTrial), owned by the Job,
// which the executor of index i reads.
//
// Each index is still its own attempt of its own trial to the runner: the runner's retries,
// timeouts, records and logs are per trial as before. So each index runs once
// (backoffLimitPerIndex 0: an index that fails fails alone, the others go on), and a retry is
// a new attempt, batched with the other attempts started at that moment (or a lone Job).
// Stopping one trial deletes its index's pod; stopping the last one deletes the Job.
//
// Attempts batch together when their pods would be the same but for those per-index values:
// same attempt number, image, working directory, resources, node selector, tolerations,
// labels and timeout (the pod's activeDeadlineSeconds). Services and trials with a health
// check never do: other trials reach them by name, and their readiness is their own.

const (
	// AnnotationTrials lists, on an array's Job, the trial of each index (a JSON array).
	AnnotationTrials = "jikken.dev/trials"
	// MaxArray is the most indexes of one array Job.
	MaxArray = 500
	// maxArrayTable bounds the bytes of an array's index table: a ConfigMap holds at most 1 MiB.
	maxArrayTable = 768 << 10
	// arrayWindow is how long the first attempt of a batch waits for others to join it. The
	// runner starts a sweep's attempts in a burst, so a batch fills in far less; a lone retry
	// waits this long before it runs as a Job of its own.
	arrayWindow = 50 * time.Millisecond
	// arrayDir is where the index table is mounted in an array's pods.
	arrayDir = "/jikken-array"
)

// arrayKey is the key of the batches attempt a may join, or "" when it runs as a Job of its own.
func (b *Backend) arrayKey(a *runner.Attempt) string {
	t := a.Trial
	if b.cfg.JobPerAttempt || b.noArrays.Load() || t.Service || t.Health != nil {
		return ""
	}
	k, err := json.Marshal(struct {
		N            int
		Image        string
		Workdir      string
		Resources    any
		NodeSelector map[string]string
		Tolerations  any
		Labels       map[string]string
		Timeout      int64
	}{a.N, t.Image, t.Workdir, t.Resources, t.NodeSelector, t.Tolerations, t.Labels, int64(t.Timeout)})
	if err != nil {
		return ""
	}
	return a.RunID + "\x00" + string(k)
}

// errNoPerIndexLimit: the API server does not keep backoffLimitPerIndex.
var errNoPerIndexLimit = errors.New("the API server does not support backoffLimitPerIndex")

// arrayBatch is the attempts gathering for one array Job.
type arrayBatch struct {
	members []*arrayMember
	bytes   int
}

// arrayMember is one attempt waiting in a batch, and what its Start returns.
type arrayMember struct {
	a     *runner.Attempt
	spec  PodSpec
	entry []byte // its executor.IndexedTrial
	done  chan struct{}
	proc  runner.Process
	err   error
}

// batcher gathers the attempts that may share an array Job.
type batcher struct {
	mu      sync.Mutex
	batches map[string]*arrayBatch
}

// startInArray adds attempt a to the batch of its key and returns once the batch's Job (or,
// for a batch of one, the attempt's own Job) has been created.
func (b *Backend) startInArray(ctx context.Context, w *runWatch, a *runner.Attempt, key string) (runner.Process, error) {
	spec, err := b.podSpec(ctx, a)
	if err != nil {
		return nil, err
	}
	entry, err := json.Marshal(indexedTrial(spec))
	if err != nil {
		return nil, err
	}
	m := &arrayMember{a: a, spec: spec, entry: entry, done: make(chan struct{})}
	var full *arrayBatch
	bt := &b.batcher
	bt.mu.Lock()
	batch := bt.batches[key]
	if batch != nil && batch.bytes+len(entry) > maxArrayTable {
		full, batch = batch, nil
		delete(bt.batches, key)
	}
	if batch == nil {
		batch = &arrayBatch{}
		bt.batches[key] = batch
		time.AfterFunc(arrayWindow, func() {
			bt.mu.Lock()
			mine := bt.batches[key] == batch
			if mine {
				delete(bt.batches, key)
			}
			bt.mu.Unlock()
			if mine {
				b.flush(w, batch)
			}
		})
	}
	batch.members = append(batch.members, m)
	batch.bytes += len(entry)
	if len(batch.members) == MaxArray {
		delete(bt.batches, key)
		full = batch // its timer finds it gone
	}
	bt.mu.Unlock()
	if full != nil {
		go b.flush(w, full)
	}
	// Not ctx: the batch's Job is created for every member or for none, and a member that
	// left would leave an index nobody watches. A runner that was interrupted stops the
	// attempts it gets back.
	<-m.done
	return m.proc, m.err
}

// indexedTrial is what the executor of an attempt's index runs.
func indexedTrial(s PodSpec) executor.IndexedTrial {
	t := executor.IndexedTrial{Argv: argvOf(s.Trial.Cmd)}
	for _, e := range podEnv(s.Env) {
		t.Env = append(t.Env, e.Name+"="+e.Value)
	}
	if s.Params != nil {
		t.Env = append(t.Env, "JIKKEN_PARAMS_JSON="+string(s.Params))
	}
	return t
}

// flush creates the batch's Job and tells its members.
func (b *Backend) flush(w *runWatch, batch *arrayBatch) {
	defer func() {
		for _, m := range batch.members {
			close(m.done)
		}
	}()
	ctx := context.Background()
	if len(batch.members) == 1 {
		m := batch.members[0]
		m.proc, m.err = b.startJob(ctx, w, m.a, m.spec)
		return
	}
	procs, err := b.createArray(ctx, w, batch.members)
	if errors.Is(err, errNoPerIndexLimit) {
		b.cfg.Log.Info("one Job per attempt: the API server dropped backoffLimitPerIndex (Kubernetes before 1.29, or its feature gate off)")
		for _, m := range batch.members {
			m.proc, m.err = b.startJob(ctx, w, m.a, m.spec)
		}
		return
	}
	for i, m := range batch.members {
		if err != nil {
			m.err = err
		} else {
			m.proc = procs[i]
		}
	}
}

// createArray creates the Indexed Job of members and its index table.
func (b *Backend) createArray(ctx context.Context, w *runWatch, members []*arrayMember) ([]*process, error) {
	b.creating <- struct{}{}
	defer func() { <-b.creating }()
	specs := make([]PodSpec, len(members))
	entries := make([][]byte, len(members))
	for i, m := range members {
		specs[i], entries[i] = m.spec, m.entry
	}
	job, err := b.cfg.ArrayJob(specs)
	if err != nil {
		return nil, err
	}
	procs := make([]*process, len(members))
	for i, m := range members {
		procs[i] = w.attachIndex(job.Name, i, m.a, false)
	}
	detach := func() {
		for _, p := range procs {
			w.detach(p.key)
		}
	}
	// The table first: a Job whose pods found no table would wait for it forever, were the
	// runner killed between the two creates.
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name, Namespace: b.cfg.Namespace, Labels: job.Labels},
		Data:       tableOf(entries),
	}
	configMaps := b.client.CoreV1().ConfigMaps(b.cfg.Namespace)
	err = b.withRetry(func() error {
		_, err := configMaps.Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		detach()
		return nil, b.explain("create ConfigMap "+cm.Name+" (the trials of an array Job)", err)
	}
	created, err := b.createJob(ctx, job)
	if apierrors.IsAlreadyExists(err) {
		// The same batch, created by a create that timed out: it is ours.
		created, err = b.client.BatchV1().Jobs(b.cfg.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
	}
	if err == nil && created.Spec.BackoffLimitPerIndex == nil {
		// A server that does not know the field drops it, and its Job controller would retry a
		// failed index up to backoffLimit times behind the runner's back: no arrays there.
		b.noArrays.Store(true)
		_ = b.deleteJob(ctx, b.cfg.Namespace, job.Name)
		err = errNoPerIndexLimit
	}
	if err != nil {
		_ = configMaps.Delete(ctx, cm.Name, metav1.DeleteOptions{})
		detach()
		if errors.Is(err, errNoPerIndexLimit) {
			return nil, err
		}
		return nil, b.explain(fmt.Sprintf("create Job %s for %d trials (%s, ...)", job.Name, len(members), members[0].a.Trial.Name), err)
	}
	// Now the table is the Job's garbage: deleted with it, by its TTL or by `jikken rm`. Should
	// this fail, the trials run all the same and `jikken rm --backend-objects` deletes it.
	owner, _ := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{
		{APIVersion: "batch/v1", Kind: "Job", Name: created.Name, UID: created.UID}}}})
	if err := b.withRetry(func() error {
		_, err := configMaps.Patch(ctx, cm.Name, types.MergePatchType, owner, metav1.PatchOptions{})
		return err
	}); err != nil {
		b.cfg.Log.Warn("the index table of an array Job is not owned by it; jikken rm --backend-objects deletes it", "configmap", cm.Name, "err", err)
	}
	for _, p := range procs {
		p.begin()
	}
	return procs, nil
}

// ArrayName is the name of the array Job of one batch of attempts: the same batch gets the
// same name, so a create repeated after a timeout finds the first.
func ArrayName(run string, attempt int, trials []string) string {
	h := sha256.New()
	h.Write([]byte(run))
	for _, t := range trials {
		h.Write([]byte{0})
		h.Write([]byte(t))
	}
	return "jk-array-" + hex.EncodeToString(h.Sum(nil))[:16] + "-" + strconv.Itoa(attempt)
}

// ArrayJob builds the Indexed Job whose index i runs specs[i], all attempts of one run with
// the same arrayKey. Its index table is the ConfigMap of the same name (see createArray).
func (c *Config) ArrayJob(specs []PodSpec) (*batchv1.Job, error) {
	first := specs[0]
	trials := make([]string, len(specs))
	for i, s := range specs {
		trials[i] = s.Trial.Name
	}
	name := ArrayName(first.Run, first.Attempt, trials)
	tmpl, err := c.pod(first, name, []string{"--flush-every", c.LogFlush.String(), "--index-table", arrayDir})
	if err != nil {
		return nil, err
	}
	// The template is every index's: what is the first trial's alone comes out, and the
	// executor takes each index's command and environment from the table.
	delete(tmpl.Labels, LabelTrial)
	delete(tmpl.Annotations, AnnotationTrial)
	main := &tmpl.Spec.Containers[0]
	main.Command = main.Command[:slices.Index(main.Command, "--")+1]
	main.Env = []corev1.EnvVar{{Name: "JIKKEN_STORE", Value: c.StoreURL}}
	main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: "jikken-array", MountPath: arrayDir, ReadOnly: true})
	tmpl.Spec.Volumes = append(tmpl.Spec.Volumes, corev1.Volume{Name: "jikken-array", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}})
	if first.Trial.Timeout > 0 {
		// Each index's own deadline: the Job's would count from the Job's start.
		tmpl.Spec.ActiveDeadlineSeconds = ptr(int64((first.Trial.Timeout + 999999999) / 1e9))
	}
	names, err := json.Marshal(trials)
	if err != nil {
		return nil, err
	}
	n := int32(len(specs))
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: c.Namespace,
			Labels:      c.labels(first.Run, "", first.Attempt, name),
			Annotations: map[string]string{AnnotationTrials: string(names)},
		},
		Spec: batchv1.JobSpec{
			CompletionMode:       ptr(batchv1.IndexedCompletion),
			Completions:          &n,
			Parallelism:          &n,
			BackoffLimitPerIndex: ptr(int32(0)),
			Template:             tmpl,
		},
	}
	if c.JobTTL >= 0 {
		j.Spec.TTLSecondsAfterFinished = ptr(int32(min((c.JobTTL+time.Second-1)/time.Second, math.MaxInt32)))
	}
	return j, nil
}

// arrayTrials reads the trial of each index of an array Job; nil for a Job of one attempt.
func arrayTrials(j *batchv1.Job) []string {
	v, ok := j.Annotations[AnnotationTrials]
	if !ok {
		return nil
	}
	var trials []string
	if json.Unmarshal([]byte(v), &trials) != nil {
		return nil
	}
	return trials
}

// IndexTable is the index table of the array Job of specs: the ConfigMap's data, whose key i
// is what index i runs (an executor.IndexedTrial).
func IndexTable(specs []PodSpec) (map[string]string, error) {
	entries := make([][]byte, len(specs))
	for i, s := range specs {
		var err error
		if entries[i], err = json.Marshal(indexedTrial(s)); err != nil {
			return nil, err
		}
	}
	return tableOf(entries), nil
}

// tableOf is the ConfigMap data of the entries of an index table: key i is entry i.
func tableOf(entries [][]byte) map[string]string {
	table := make(map[string]string, len(entries))
	for i, e := range entries {
		table[strconv.Itoa(i)] = string(e)
	}
	return table
}
