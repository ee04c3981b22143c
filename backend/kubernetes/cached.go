package kubernetes

import (
	"strconv"
	"unique"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The watch's caches keep, of each Job and pod of a run, what evaluate, note and failure read,
// in types of their own. A batchv1.Job or a corev1.Pod takes over 1.2 KB before a field is set
// (its spec's structs are inline), a pod's status holds five conditions and two container
// statuses of which the backend reads one or two fields, and a 10,000-trial run keeps 10,000
// Jobs and 10,000 pods until their TTL: whole objects, even emptied, were a third of the
// runner's memory. Strings that repeat across pods (namespace, images, reasons) are kept once.

// cachedJob is a watched Job.
type cachedJob struct {
	// Name, namespace and resource version (the informer keys and compares by them),
	// creation and deletion times.
	metav1.ObjectMeta
	deadline *int64 // spec.activeDeadlineSeconds
	// conditions are the Job's true conditions that end it: Complete, Failed, FailureTarget.
	conditions []batchv1.JobCondition
	// indexed: an Indexed Job, one index per trial (see arrays.go); completed and failed are
	// its indexes that have ended.
	indexed           bool
	completed, failed indexSet
}

// cachedPod is a watched pod.
type cachedPod struct {
	// Name, namespace, resource version, creation and deletion times.
	metav1.ObjectMeta
	job             string // its Job (the LabelJob label)
	index           int    // its completion index in an Indexed Job, else -1
	phase           corev1.PodPhase
	node            string
	reason, message string // status.reason and status.message
	// conditions are the ones the backend reads: PodScheduled false, DisruptionTarget and
	// Ready true.
	conditions []corev1.PodCondition
	// inits and containers are the statuses of the init containers and the containers.
	inits, containers []containerState
}

// containerState is what the backend reads of a container's status.
type containerState struct {
	name, image, imageID string
	waiting              *corev1.ContainerStateWaiting
	terminated           *containerExit
}

// containerExit is how a container ended.
type containerExit struct {
	code            int32
	reason, message string
}

func intern(s string) string { return unique.Make(s).Value() }

func cachedMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: intern(m.Namespace), ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp}
}

// slimJob is the jobs informer's transform: a Job becomes a cachedJob.
func slimJob(obj any) (any, error) {
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return obj, nil
	}
	c := &cachedJob{ObjectMeta: cachedMeta(&j.ObjectMeta), deadline: j.Spec.ActiveDeadlineSeconds,
		indexed: j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion}
	if c.indexed {
		// A set the API server wrote is well formed; were it not, the indexes' pods still tell.
		c.completed, _ = parseIndexes(j.Status.CompletedIndexes)
		if j.Status.FailedIndexes != nil {
			c.failed, _ = parseIndexes(*j.Status.FailedIndexes)
		}
	}
	for _, cond := range j.Status.Conditions {
		switch cond.Type {
		case batchv1.JobComplete, batchv1.JobFailed, batchv1.JobFailureTarget:
			if cond.Status == corev1.ConditionTrue {
				c.conditions = append(c.conditions, batchv1.JobCondition{Type: cond.Type, Status: corev1.ConditionTrue,
					Reason: intern(cond.Reason), Message: cond.Message})
			}
		}
	}
	return c, nil
}

// finished reports whether the Job has ended.
func (j *cachedJob) finished() bool {
	for _, c := range j.conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			return true
		}
	}
	return false
}

// slimPod is the pods informer's transform: a pod becomes a cachedPod.
func slimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	c := &cachedPod{ObjectMeta: cachedMeta(&p.ObjectMeta), job: p.Labels[LabelJob], index: podIndex(p), phase: p.Status.Phase,
		node:   intern(p.Spec.NodeName),
		reason: intern(p.Status.Reason), message: p.Status.Message,
		inits: containerStates(p.Status.InitContainerStatuses), containers: containerStates(p.Status.ContainerStatuses)}
	for _, cond := range p.Status.Conditions {
		keep := (cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse) ||
			((cond.Type == corev1.DisruptionTarget || cond.Type == corev1.PodReady) && cond.Status == corev1.ConditionTrue)
		if keep {
			c.conditions = append(c.conditions, corev1.PodCondition{Type: cond.Type, Status: cond.Status,
				Reason: intern(cond.Reason), Message: cond.Message, LastTransitionTime: cond.LastTransitionTime})
		}
	}
	return c, nil
}

func containerStates(statuses []corev1.ContainerStatus) []containerState {
	if len(statuses) == 0 {
		return nil
	}
	out := make([]containerState, len(statuses))
	for i, cs := range statuses {
		out[i] = containerState{name: intern(cs.Name), image: intern(cs.Image), imageID: intern(cs.ImageID)}
		if w := cs.State.Waiting; w != nil {
			out[i].waiting = &corev1.ContainerStateWaiting{Reason: intern(w.Reason), Message: w.Message}
		}
		if t := cs.State.Terminated; t != nil {
			out[i].terminated = &containerExit{code: t.ExitCode, reason: intern(t.Reason), message: t.Message}
		}
	}
	return out
}

// statuses returns the pod's init containers' statuses, then its containers'.
func (p *cachedPod) statuses() []containerState {
	return append(append(make([]containerState, 0, len(p.inits)+len(p.containers)), p.inits...), p.containers...)
}

// podIndex is the completion index of a pod of an Indexed Job, or -1.
func podIndex(p *corev1.Pod) int {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return -1
	}
	return i
}
