package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// runWatch follows the Jobs and pods of one run through two informers (one list and one watch
// each, whatever the number of trials) and has one goroutine, the dispatcher, look again at
// each process an event concerns: no goroutine waits on an attempt (see dispatch).
type runWatch struct {
	b      *Backend
	jobs   cache.SharedIndexInformer
	pods   cache.SharedIndexInformer
	cancel context.CancelFunc

	mu    sync.Mutex
	procs map[string]*process // by procKey
	// arrays are the processes of each array Job's indexes, by Job name.
	arrays map[string][]*process
	// stoppedKeys are the indexes of array Jobs stopped one by one: a pod of theirs that
	// shows up later (the Job controller had not made it yet) is deleted too.
	stoppedKeys map[string]bool
	// stopping are the indexes of each array Job whose Stop is gathering (see Stop).
	stopping map[string][]*process
	// gone are the Jobs the watch saw deleted: one deleted (by 'jikken kill' or a resumed
	// runner) before this runner's first look at it is still a Job that ended.
	gone map[string]bool

	// dirty are the processes to evaluate, each once however often it was poked; kick tells
	// the dispatcher there are some.
	dmu   sync.Mutex
	dirty []*process
	kick  chan struct{}
}

const byJob = "job"

// watch returns the run's watch, starting it on first use.
func (b *Backend) watch(ctx context.Context, run string) (*runWatch, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.watches[run]; w != nil {
		return w, nil
	}
	sel := RunSelector(run)
	f := informers.NewSharedInformerFactoryWithOptions(b.client, 0, informers.WithNamespace(b.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel }))
	w := &runWatch{b: b, jobs: f.Batch().V1().Jobs().Informer(), pods: f.Core().V1().Pods().Informer(),
		procs: map[string]*process{}, arrays: map[string][]*process{}, stoppedKeys: map[string]bool{}, stopping: map[string][]*process{},
		gone: map[string]bool{}, kick: make(chan struct{}, 1)}
	// The caches hold what evaluate, note and failure read, not whole objects (see cachedJob).
	if err := w.jobs.SetTransform(slimJob); err != nil {
		return nil, err
	}
	if err := w.pods.SetTransform(slimPod); err != nil {
		return nil, err
	}
	if err := w.pods.AddIndexers(cache.Indexers{byJob: func(obj any) ([]string, error) {
		if p, ok := obj.(*cachedPod); ok && p.job != "" {
			return []string{procKey(p.job, p.index)}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	// notify pokes, on each event, the processes that key(obj) names to wake.
	notify := func(key func(any) string, wake func(string)) cache.ResourceEventHandlerFuncs {
		return cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { wake(key(obj)) },
			UpdateFunc: func(_, obj any) { wake(key(obj)) },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				wake(key(obj))
			},
		}
	}
	jobName := func(obj any) string {
		j, ok := obj.(*cachedJob)
		if !ok {
			return ""
		}
		// Kept here too: the TTL controller may delete a finished Job before its process reads
		// the cache.
		if j.finished() {
			w.mu.Lock()
			if p := w.procs[j.Name]; p != nil {
				p.final = j
			}
			for _, p := range w.arrays[j.Name] {
				p.final = j
			}
			w.mu.Unlock()
		}
		return j.Name
	}
	podJob := func(obj any) string {
		p, ok := obj.(*cachedPod)
		if !ok {
			return ""
		}
		// Seen here, not only in evaluate: the pod may be gone from the cache by then, or its
		// status already replaced by a later one.
		w.note(p)
		if p.index >= 0 {
			w.deleteIfStopped(p)
		}
		return procKey(p.job, p.index)
	}
	jobHandler := notify(jobName, w.wakeJob)
	jobHandler.DeleteFunc = func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		name := jobName(obj)
		w.mu.Lock()
		w.gone[name] = true
		w.mu.Unlock()
		w.wakeJob(name)
	}
	if _, err := w.jobs.AddEventHandler(jobHandler); err != nil {
		return nil, err
	}
	if _, err := w.pods.AddEventHandler(notify(podJob, w.wake)); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.cancel = cancel
	go w.dispatch(wctx)
	f.Start(wctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return nil, b.explain(fmt.Sprintf("watch %s of run %s", typ, run), errors.New("the watch did not sync; is the API server reachable and may this account list and watch jobs and pods?"))
		}
	}
	b.watches[run] = w
	return w, nil
}

func (w *runWatch) close() { w.cancel() }

// dispatch evaluates the processes that were poked, in turn, until ctx is done. Evaluating
// reads only the watch's caches, so one goroutine keeps up with every attempt of a run; what
// needs the API server (deleting a Job that cannot run, reading a failed pod's log) is left to
// Wait, which the runner calls from a goroutine of the attempt's once it has ended. A goroutine
// per running attempt, blocked until its Job ends, held about 8 KB of stack each: 80 MB at
// -j 10000.
func (w *runWatch) dispatch(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		}
		for {
			w.dmu.Lock()
			batch := w.dirty
			w.dirty = nil
			for _, p := range batch {
				p.dirty = false
			}
			w.dmu.Unlock()
			if len(batch) == 0 {
				break
			}
			for _, p := range batch {
				p.step()
			}
		}
	}
}

// procKey names the process of a Job (index -1) or of one index of an array Job.
func procKey(job string, index int) string {
	if index < 0 {
		return job
	}
	return job + "#" + strconv.Itoa(index)
}

// wake pokes the process of key.
func (w *runWatch) wake(key string) {
	w.mu.Lock()
	p := w.procs[key]
	w.mu.Unlock()
	if p != nil {
		p.poke()
	}
}

// wakeJob pokes the processes of Job name: its own, or those of its indexes.
func (w *runWatch) wakeJob(name string) {
	w.mu.Lock()
	p := w.procs[name]
	members := w.arrays[name]
	w.mu.Unlock()
	if p != nil {
		p.poke()
	}
	for _, p := range members {
		p.poke()
	}
}

// deleteIfStopped deletes a pod of an index stopped before the Job controller made the pod.
func (w *runWatch) deleteIfStopped(pod *cachedPod) {
	key := procKey(pod.job, pod.index)
	w.mu.Lock()
	stopped := w.stoppedKeys[key]
	w.mu.Unlock()
	if !stopped || pod.DeletionTimestamp != nil || pod.phase == corev1.PodSucceeded || pod.phase == corev1.PodFailed {
		return
	}
	go func() {
		err := w.b.client.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			w.b.cfg.Log.Warn("could not delete the pod of a stopped trial", "pod", pod.Name, "err", err)
		}
	}()
}

// note records on the pod's process why the pod was evicted, if it was, and the digest of the
// image its trial container runs, once the node reports it.
func (w *runWatch) note(pod *cachedPod) {
	why, class := disruption(pod)
	digest := ""
	for _, cs := range pod.containers {
		if cs.name == mainContainer {
			digest = cs.imageID
		}
	}
	if why == "" && digest == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.procs[procKey(pod.job, pod.index)]
	if p == nil {
		return
	}
	if p.lost == "" {
		p.lost, p.lostClass = why, class
	}
	if digest != "" {
		p.digest = digest
	}
}

// attachIndex makes the process of the attempt whose Job is name (at index of an array Job,
// or index -1), which the watch follows from now on and evaluates once begin is called. seen:
// the Job was listed live, so its disappearance is an end, not a lag of the cache (a
// re-attached attempt).
func (w *runWatch) attachIndex(name string, index int, a *runner.Attempt, seen bool) *process {
	p := &process{w: w, name: name, index: index, key: procKey(name, index), a: a, seen: seen,
		done: make(chan struct{}), started: time.Now()}
	w.mu.Lock()
	w.procs[p.key] = p
	if index >= 0 {
		w.arrays[name] = append(w.arrays[name], p)
	}
	w.mu.Unlock()
	return p
}

// begin lets the dispatcher evaluate p: its Job exists (Start has returned it), so a Job
// missing from the cache or without pods is no longer a create still on its way.
func (p *process) begin() *process {
	p.begun.Store(true)
	p.poke()
	return p
}

// detach forgets the process of key, whose Start failed: it is not evaluated again.
func (w *runWatch) detach(key string) {
	w.mu.Lock()
	if p := w.procs[key]; p != nil {
		p.over = true
		delete(w.procs, key)
		w.forgetMember(p)
	}
	w.mu.Unlock()
}

// forgetMember drops an array Job's list of processes once all have ended. w.mu is held.
func (w *runWatch) forgetMember(p *process) {
	if p.index < 0 {
		return
	}
	for _, m := range w.arrays[p.name] {
		if !m.over {
			return
		}
	}
	delete(w.arrays, p.name)
}

// anyLive reports whether the cache holds a Job of the run that has not finished and is not
// being deleted.
func (w *runWatch) anyLive() bool {
	for _, obj := range w.jobs.GetStore().List() {
		if j, ok := obj.(*cachedJob); ok && !j.finished() && j.DeletionTimestamp == nil {
			return true
		}
	}
	return false
}

func (w *runWatch) job(name string) *cachedJob {
	obj, ok, err := w.jobs.GetStore().GetByKey(w.b.cfg.Namespace + "/" + name)
	if err != nil || !ok {
		return nil
	}
	return obj.(*cachedJob)
}

// podsOf returns the pods of a process's key (a Job, or an index of an array Job), newest
// first.
func (w *runWatch) podsOf(key string) []*cachedPod {
	objs, _ := w.pods.GetIndexer().ByIndex(byJob, key)
	pods := make([]*cachedPod, 0, len(objs))
	for _, o := range objs {
		pods = append(pods, o.(*cachedPod))
	}
	sort.Slice(pods, func(i, j int) bool { return pods[j].CreationTimestamp.Before(&pods[i].CreationTimestamp) })
	return pods
}

// process is one attempt's Job, or its index of an array Job.
type process struct {
	w       *runWatch
	name    string // the Job's
	index   int    // in an array Job, else -1
	key     string // procKey(name, index)
	a       *runner.Attempt
	done    chan struct{} // closed once exit is set
	started time.Time

	begun   atomic.Bool // see begin
	stopped atomic.Bool
	deleted atomic.Bool // our delete has returned

	// Read and written by the dispatcher alone (and by Wait once done is closed).
	seen      bool // the Job has been in the informer's cache
	noPodSeen time.Time
	failSeen  time.Time
	timer     *time.Timer
	exit      runner.Exit
	// abandoned, when set, is why a Job that cannot run is given up: Wait deletes the Job and
	// calls it for the attempt's error (it may read the Job's events).
	abandoned func() error

	// dirty: queued for the dispatcher. Guarded by w.dmu.
	dirty bool
	// over: the attempt has ended (or its Start failed); notify is called once it has. Guarded
	// by w.mu.
	over   bool
	notify func()
	// lost is why a pod of this Job was evicted (its DisruptionTarget condition), kept
	// because the pod may be gone from the cache when the Job fails. Guarded by w.mu.
	lost      string
	lostClass runner.Interruption
	// digest is the image the trial container ran, as its node reported it. Guarded by w.mu.
	digest string
	// final is the Job as the watch last saw it finished. Guarded by w.mu.
	final *cachedJob
}

// poke asks the dispatcher to evaluate p again.
func (p *process) poke() {
	w := p.w
	w.dmu.Lock()
	if !p.dirty {
		p.dirty = true
		w.dirty = append(w.dirty, p)
	}
	w.dmu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// step evaluates p for the dispatcher and, once the attempt has ended, records how, forgets
// the process and tells whoever waits.
func (p *process) step() {
	w := p.w
	w.mu.Lock()
	over := p.over
	w.mu.Unlock()
	if over || !p.begun.Load() {
		return
	}
	exit, ended := p.evaluate()
	if !ended {
		return
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	p.exit = exit
	w.mu.Lock()
	p.over = true
	if w.procs[p.key] == p {
		delete(w.procs, p.key)
	}
	w.forgetMember(p)
	notify := p.notify
	w.mu.Unlock()
	close(p.done)
	if notify != nil {
		notify()
	}
}

// Notify implements runner.Notifier: f is called once the watch has seen the attempt end.
func (p *process) Notify(f func()) {
	w := p.w
	w.mu.Lock()
	over := p.over
	if !over {
		p.notify = f
	}
	w.mu.Unlock()
	if over {
		f()
	}
}

// Handle implements runner.Process.
func (p *process) Handle() string { return "job:" + p.w.b.cfg.Namespace + "/" + p.key }

// Stop implements runner.Process: it deletes the Job; its pods get grace to end. An index of
// an array Job whose other indexes go on is stopped by deleting its pod.
//
// The indexes of an array Job are stopped together: a runner stopping a run (interrupted,
// fail-fast) stops every attempt at once, and deleting the array's Job once beats deleting
// its pods one by one (a request each). So an index's Stop waits arrayWindow for the others'
// before it deletes anything.
func (p *process) Stop(grace time.Duration) error {
	p.stopped.Store(true)
	if p.index >= 0 {
		p.w.stopSoon(p)
		return nil
	}
	err := p.remove(context.Background())
	p.deleted.Store(true)
	p.poke()
	return err
}

// stopSoon gathers the Stops of an array's indexes for arrayWindow and then removes them.
func (w *runWatch) stopSoon(p *process) {
	w.mu.Lock()
	w.stopping[p.name] = append(w.stopping[p.name], p)
	first := len(w.stopping[p.name]) == 1
	w.mu.Unlock()
	if !first {
		return
	}
	time.AfterFunc(arrayWindow, func() {
		w.mu.Lock()
		stops := w.stopping[p.name]
		delete(w.stopping, p.name)
		w.mu.Unlock()
		ctx := context.Background()
		if w.lastOfArray(nil, p.name) {
			if err := w.b.deleteJob(ctx, w.b.cfg.Namespace, p.name); err != nil {
				w.b.cfg.Log.Warn("could not delete a stopped array Job", "job", p.name, "err", err)
			}
		} else {
			for _, s := range stops {
				if err := s.remove(ctx); err != nil {
					w.b.cfg.Log.Warn("could not stop a trial of an array Job", "trial", s.a.Trial.Name, "err", err)
				}
			}
		}
		for _, s := range stops {
			s.deleted.Store(true)
			s.poke()
		}
	})
}

// remove deletes the attempt's Job, or, for an index of an array Job whose other indexes go
// on, the index's pod: the Job counts the index failed (backoffLimitPerIndex 0) and does not
// replace it.
func (p *process) remove(ctx context.Context) error {
	w := p.w
	var err error
	if p.index >= 0 && !w.lastOfArray(p, p.name) {
		w.mu.Lock()
		w.stoppedKeys[p.key] = true
		w.mu.Unlock()
		// The pods the watch knows of; one the Job controller makes later is deleted as it
		// shows (deleteIfStopped).
		for _, pod := range w.podsOf(p.key) {
			if e := w.b.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); e != nil && !apierrors.IsNotFound(e) {
				err = w.b.explain("delete pod "+pod.Name, e)
			}
		}
	} else {
		err = w.b.deleteJob(ctx, w.b.cfg.Namespace, p.name)
	}
	return err
}

// lastOfArray reports whether every index of array Job name but p has ended or been stopped.
func (w *runWatch) lastOfArray(p *process, name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.arrays[name] {
		if m != p && !m.over && !m.stopped.Load() {
			return false
		}
	}
	return true
}

// Wait implements runner.Process: it returns once the dispatcher has seen the Job end, after
// deleting a Job (or an array's index) that could not run and, for a failed attempt whose executor stored no stderr,
// keeping the tail of the container's log.
func (p *process) Wait() runner.Exit {
	<-p.done
	exit := p.exit
	if p.abandoned != nil {
		exit.Err = p.abandoned()
		_ = p.remove(context.Background())
	}
	if exit.Err != nil || exit.Code != 0 {
		p.fallbackLog(context.Background())
	}
	return exit
}

// ImageDigest implements runner.ImageDigester: the image ID the node reported for the trial's
// container (IMAGE@sha256:..., or sha256:... for an image that was never pulled), "" until a
// node has run it; the runner asks again when the attempt ends.
func (p *process) ImageDigest() string {
	p.w.mu.Lock()
	defer p.w.mu.Unlock()
	return digestRef(p.digest)
}

// digestRef turns a kubelet's image ID into a reference a pod can run: container runtimes
// prefix it with a scheme (docker-pullable://) that is not part of an image reference.
func digestRef(id string) string {
	if _, rest, ok := strings.Cut(id, "://"); ok {
		return rest
	}
	return id
}

// OutputsStored implements runner.OutputStorer: the executor in the pod uploads the trial's
// outputs and logs to the store itself.
func (p *process) OutputsStored() bool { return true }

// wakeAt arranges a wake-up after d (a pending deadline), without any request to the server.
func (p *process) wakeAt(d time.Duration) {
	if p.timer != nil {
		p.timer.Stop()
	}
	p.timer = time.AfterFunc(d, p.poke)
}

// evaluate reads the Job and its pods from the watch's cache and decides whether the attempt
// has ended.
func (p *process) evaluate() (runner.Exit, bool) {
	j := p.w.job(p.name)
	if j == nil && !p.stopped.Load() {
		p.w.mu.Lock()
		j = p.final
		p.w.mu.Unlock()
	}
	if j == nil {
		p.w.mu.Lock()
		p.seen = p.seen || p.w.gone[p.name]
		p.w.mu.Unlock()
		switch {
		case p.stopped.Load() && (p.seen || p.deleted.Load()):
			return runner.Exit{Code: 137, Reason: "stopped: Job deleted"}, true
		case p.seen:
			return runner.Exit{Code: -1, Err: fmt.Errorf("Job %s was deleted outside jikken", p.name)}, true
		}
		return runner.Exit{}, false
	}
	p.seen = true
	if p.index >= 0 {
		if exit, ended := p.indexEnded(j); ended || p.stopped.Load() {
			return exit, ended
		}
		return p.pending(j)
	}
	if p.stopped.Load() {
		return runner.Exit{}, false // wait for the delete to show
	}
	for _, c := range j.conditions {
		switch c.Type {
		case batchv1.JobComplete:
			return runner.Exit{Code: 0}, true
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			// FailureTarget is final too: the controller adds Failed only once every pod has
			// terminated, which a pod on a lost node never does.
			e := p.failure(j, c)
			if e.Code == -1 && e.Err == nil && c.Reason != batchv1.JobReasonDeadlineExceeded && p.awaitPodStatus() {
				return runner.Exit{}, false
			}
			return e, true
		}
	}
	return p.pending(j)
}

// indexEnded decides whether the index of an array Job's process has ended: its Job counts it
// completed or failed, or its pod has ended (the Job's status lags its pods, by seconds when
// the Job controller is busy), was evicted, or, once stopped, is gone.
func (p *process) indexEnded(j *cachedJob) (runner.Exit, bool) {
	pods := p.w.podsOf(p.key)
	if p.stopped.Load() {
		if !p.deleted.Load() {
			return runner.Exit{}, false
		}
		for _, pod := range pods {
			if pod.phase != corev1.PodSucceeded && pod.phase != corev1.PodFailed && !j.completed.has(p.index) && !j.failed.has(p.index) {
				return runner.Exit{}, false // wait for the delete to show
			}
		}
		return runner.Exit{Code: 137, Reason: "stopped: pod deleted"}, true
	}
	if j.completed.has(p.index) || len(pods) > 0 && pods[0].phase == corev1.PodSucceeded {
		return runner.Exit{Code: 0}, true
	}
	p.w.mu.Lock()
	lost := p.lost
	p.w.mu.Unlock()
	failedPod := len(pods) > 0 && pods[0].phase == corev1.PodFailed
	if !j.failed.has(p.index) && !failedPod && lost == "" {
		return runner.Exit{}, false
	}
	e := p.failure(j, batchv1.JobCondition{Reason: "FailedIndexes", Message: fmt.Sprintf("index %d failed", p.index)})
	if e.Code == -1 && !failedPod && lost == "" && p.awaitPodStatus() {
		return runner.Exit{}, false
	}
	return e, true
}

// awaitPodStatus reports whether to wait a moment longer before reporting a failure without
// an exit code: the pod's final status travels on the other watch and may arrive after the
// Job's. It waits up to 5 s from the first failure seen, and not at all once the attempt is
// older than the pending time.
func (p *process) awaitPodStatus() bool {
	if time.Since(p.started) >= p.w.b.cfg.PendingTimeout {
		return false
	}
	if p.failSeen.IsZero() {
		p.failSeen = time.Now()
	}
	if wait := 5*time.Second - time.Since(p.failSeen); wait > 0 {
		p.wakeAt(wait)
		return true
	}
	return false
}

// pending waits for the pod of a Job (or index) that has not ended, and gives it up when it
// cannot run: no pod, an image that cannot be pulled, a pod nobody can schedule.
func (p *process) pending(j *cachedJob) (runner.Exit, bool) {
	b := p.w.b
	pods := p.w.podsOf(p.key)
	if len(pods) == 0 {
		// No pod yet: the Job controller may be refused (quota). Look at its events once the
		// pending time is up, not before.
		if p.noPodSeen.IsZero() {
			p.noPodSeen = time.Now()
		}
		if wait := b.cfg.PendingTimeout - time.Since(p.noPodSeen); wait > 0 {
			p.wakeAt(wait)
			return runner.Exit{}, false
		}
		return p.abandon(func() error {
			return fmt.Errorf("no pod created for %s: %s", b.cfg.PendingTimeout, p.jobEvents(j))
		})
	}
	p.noPodSeen = time.Time{}
	pod := pods[0]
	if err := imageFailure(pod); err != nil {
		return p.abandon(func() error { return err })
	}
	if msg, since, ok := unschedulable(pod); ok {
		if wait := b.cfg.PendingTimeout - time.Since(since); wait > 0 {
			p.wakeAt(wait)
			return runner.Exit{}, false
		}
		return p.abandon(func() error { return fmt.Errorf("unschedulable for %s: %s", b.cfg.PendingTimeout, msg) })
	}
	return runner.Exit{}, false
}

// abandon ends an attempt whose Job cannot run; Wait deletes the Job and reports why.
func (p *process) abandon(why func() error) (runner.Exit, bool) {
	p.abandoned = why
	return runner.Exit{Code: -1}, true
}

// failure explains a failed Job from its condition and its last pod.
func (p *process) failure(j *cachedJob, c batchv1.JobCondition) runner.Exit {
	if c.Reason == batchv1.JobReasonDeadlineExceeded {
		d := time.Duration(0)
		if j.deadline != nil {
			d = time.Duration(*j.deadline) * time.Second
		}
		return runner.Exit{Code: -1, Reason: fmt.Sprintf("timed out after %s (activeDeadlineSeconds)", d), Interrupted: runner.TimeLimit}
	}
	p.w.mu.Lock()
	lost, class := p.lost, p.lostClass
	p.w.mu.Unlock()
	if lost != "" {
		return runner.Exit{Code: -1, Reason: lost, Interrupted: class}
	}
	for _, pod := range p.w.podsOf(p.key) {
		if why, class := disruption(pod); why != "" {
			return runner.Exit{Code: -1, Reason: why, Interrupted: class}
		}
		for _, cs := range pod.statuses() {
			t := cs.terminated
			if t == nil || t.code == 0 {
				continue
			}
			e := runner.Exit{Code: int(t.code)}
			if cs.name != mainContainer {
				e.Reason = fmt.Sprintf("init container %s failed with exit status %d", cs.name, t.code)
			}
			if t.reason == "OOMKilled" {
				e.Reason = "out of memory (OOMKilled)"
			} else if t.reason != "" && t.reason != "Error" && t.reason != "Completed" {
				e.Reason = strings.TrimSpace(t.reason + " " + t.message)
			}
			return e
		}
		if pod.reason != "" {
			return runner.Exit{Code: -1, Reason: strings.TrimSpace(pod.reason + ": " + pod.message)}
		}
	}
	return runner.Exit{Code: -1, Reason: strings.TrimSpace("Job failed: " + c.Reason + " " + c.Message)}
}

// disruption says why a pod was evicted (its node went NotReady or unreachable, it was
// preempted), or "" when it was not, and the kind of interruption that is: the taint manager
// and the pod garbage collector remove pods of a lost node; the scheduler, an eviction and the
// kubelet take a node's resources for other work.
func disruption(pod *cachedPod) (string, runner.Interruption) {
	for _, pc := range pod.conditions {
		if pc.Type == corev1.DisruptionTarget && pc.Status == corev1.ConditionTrue {
			class := runner.Preempted
			if pc.Reason == "DeletionByTaintManager" || pc.Reason == "DeletionByPodGC" {
				class = runner.NodeLost
			}
			return fmt.Sprintf("pod evicted from node %s (%s: %s)", pod.node, pc.Reason, pc.Message), class
		}
	}
	return "", runner.NotInterrupted
}

// imageFailure reports a pod whose image cannot be pulled.
func imageFailure(pod *cachedPod) error {
	for _, cs := range pod.statuses() {
		w := cs.waiting
		if w == nil {
			continue
		}
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull":
			return fmt.Errorf("image pull failed for %s (container %s): %s: %s", cs.image, cs.name, w.Reason, w.Message)
		case "CreateContainerConfigError", "CreateContainerError":
			return fmt.Errorf("container %s cannot be created: %s: %s", cs.name, w.Reason, w.Message)
		}
	}
	return nil
}

// unschedulable reports the scheduler's reason for a pod it cannot place, and since when.
func unschedulable(pod *cachedPod) (string, time.Time, bool) {
	for _, c := range pod.conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			since := c.LastTransitionTime.Time
			if since.IsZero() {
				since = pod.CreationTimestamp.Time
			}
			return c.Message, since, true
		}
	}
	return "", time.Time{}, false
}

// jobEvents reads the Job's warning events (one request, only when a Job is stuck).
func (p *process) jobEvents(j *cachedJob) string {
	b := p.w.b
	list, err := b.client.CoreV1().Events(j.Namespace).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Job,involvedObject.name=" + j.Name})
	if err != nil {
		return "its events could not be read: " + err.Error()
	}
	var msgs []string
	for _, e := range list.Items {
		if e.Type == corev1.EventTypeWarning {
			msgs = append(msgs, e.Reason+": "+e.Message)
		}
	}
	if len(msgs) == 0 {
		return "the Job controller reported nothing (is kube-controller-manager running?)"
	}
	return strings.Join(msgs, "; ")
}

// WaitHealthy implements runner.Healthier: a service is healthy when its pod is Ready (its
// readiness probe is the trial's health check).
func (p *process) WaitHealthy(ctx context.Context) error {
	for {
		for _, pod := range p.w.podsOf(p.key) {
			for _, c := range pod.conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return fmt.Errorf("%s: %w", p.a.Trial.Name, runner.ErrAttemptEnded)
		case <-time.After(time.Second):
			// The cache is local: re-reading it costs no request.
		}
	}
}

// fallbackLog puts the tail of the failed container's log where the runner stores stderr,
// when the executor uploaded no stderr.log (it never ran: an init container, the image or the
// node failed first). The store is asked only for a failed attempt.
func (p *process) fallbackLog(ctx context.Context) {
	a, blob := p.a, p.w.b.cfg.Store
	if p.stopped.Load() || a.StderrPath == "" {
		return
	}
	if blob != nil {
		if _, err := blob.Stat(ctx, store.TrialKey(a.RunID, a.Trial.Name, "stderr.log")); err == nil {
			return
		}
	}
	p.podLog(ctx, a.StderrPath)
}

// podLog appends the last lines of the failed container's log to dest.
func (p *process) podLog(ctx context.Context, dest string) {
	pods := p.w.podsOf(p.key)
	if len(pods) == 0 || dest == "" {
		return
	}
	pod := pods[0]
	container := mainContainer
	for _, cs := range pod.inits {
		if t := cs.terminated; t != nil && t.code != 0 {
			container = cs.name
		}
	}
	tail := int64(200)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rc, err := p.w.b.client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container, TailLines: &tail}).Stream(ctx)
	if err != nil {
		return
	}
	defer rc.Close()
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, rc)
}
