package metrics

import (
	"io"
	"iter"
	"strconv"

	"github.com/jikken-dev/jikken/internal/safecsv"
	"github.com/jikken-dev/jikken/sim"
)

// Job is what a user submitted: a gang (the pods of a distributed job) or a pod on its own.
// Its times are those of the job as a whole: it is submitted with its first member, starts
// when its first member does, and ends when its last member does.
type Job struct {
	Name string
	User string
	// Pods are the job's pods in submission order.
	Pods       []*sim.Pod
	Phase      JobPhase
	Submit     sim.Time
	FirstStart sim.Time // -1 before the job started
	End        sim.Time // -1 while a member has not ended
	// Duration is the longest member's run time: the job's length uninterrupted.
	Duration sim.Time
	// Preemptions and Restarts count how often the job was stopped: the most of any member
	// (a gang stops as a whole).
	Preemptions int
	Restarts    int
	// LostGPUSeconds is the GPU time of work lost to failures and preemptions without a
	// checkpoint, summed over the members.
	LostGPUSeconds float64
	Priority       int32
	// Requests sums the members' requests.
	Requests sim.Resources
}

// JobPhase is where a job is: it succeeds when every member did, fails when a member failed
// for good, runs while a member runs, and is pending otherwise.
type JobPhase uint8

// Job phases.
const (
	JobPending JobPhase = iota
	JobRunning
	JobSucceeded
	JobFailed
)

func (p JobPhase) String() string {
	return [...]string{"Pending", "Running", "Succeeded", "Failed"}[p]
}

// Wait returns the time from submission to first start, or -1.
func (j *Job) Wait() sim.Time {
	if j.FirstStart < 0 {
		return -1
	}
	return j.FirstStart - j.Submit
}

// JCT returns the job completion time of a succeeded job, or -1.
func (j *Job) JCT() sim.Time {
	if j.Phase != JobSucceeded {
		return -1
	}
	return j.End - j.Submit
}

// Slowdown returns JCT over duration for a succeeded job of positive duration, or -1.
func (j *Job) Slowdown() float64 {
	if j.Phase != JobSucceeded || j.Duration <= 0 {
		return -1
	}
	return float64(j.JCT()) / float64(j.Duration)
}

// Jobs groups pods into jobs, ordered by their first pod's submission. It sizes its slices
// before filling them (one of jobs, one holding every job's pods): a run of a million jobs
// otherwise spends more memory on growing slices than on the jobs.
func Jobs(pods []*sim.Pod) []Job {
	g := groupGangs(pods)
	jobs := make([]Job, 0, g.jobs)
	members := make([]*sim.Pod, 0, len(pods))
	for j := range g.each(pods) {
		k := len(members)
		members = append(members, j.Pods...)
		jobs = append(jobs, *j)
		// A full slice expression, so appending to one job's pods cannot overwrite the next's.
		jobs[len(jobs)-1].Pods = members[k:len(members):len(members)]
	}
	return jobs
}

// EachJob yields the jobs of Jobs(pods) in the same order, one at a time, in a Job value
// that is reused: it is valid until the next one. Summaries and jobs.csv of a million jobs
// need no slice of them.
func EachJob(pods []*sim.Pod) iter.Seq[*Job] {
	return groupGangs(pods).each(pods)
}

// gangs holds the members of every gang among some pods, and how many jobs the pods form.
type gangs struct {
	members map[*sim.Gang][]*sim.Pod
	jobs    int
}

func groupGangs(pods []*sim.Pod) gangs {
	g := gangs{members: map[*sim.Gang][]*sim.Pod{}}
	for _, p := range pods {
		grp := p.Group()
		if grp == nil {
			g.jobs++
			continue
		}
		if _, ok := g.members[grp]; !ok {
			g.jobs++
		}
		g.members[grp] = append(g.members[grp], p)
	}
	return g
}

// each yields one job per pod on its own and one per gang, at its first member.
func (g gangs) each(pods []*sim.Pod) iter.Seq[*Job] {
	return func(yield func(*Job) bool) {
		var j Job
		var one [1]*sim.Pod
		for _, p := range pods {
			members := one[:]
			if grp := p.Group(); grp != nil {
				members = g.members[grp]
				if members[0] != p {
					continue
				}
			} else {
				one[0] = p
			}
			j.fill(members)
			if !yield(&j) {
				return
			}
		}
	}
}

// fill makes j the job of members (in submission order), reusing j's storage.
func (j *Job) fill(members []*sim.Pod) {
	p := members[0]
	name := p.Name
	if g := p.Group(); g != nil {
		name = g.Name()
	}
	*j = Job{Name: name, User: p.User, Pods: members, Submit: p.Submit, FirstStart: -1, Priority: p.Priority}
	for _, p := range members {
		j.Submit = min(j.Submit, p.Submit)
		if p.FirstStart >= 0 && (j.FirstStart < 0 || p.FirstStart < j.FirstStart) {
			j.FirstStart = p.FirstStart
		}
		j.Duration = max(j.Duration, p.Duration)
		j.Preemptions = max(j.Preemptions, p.Preemptions)
		j.Restarts = max(j.Restarts, p.Restarts)
		j.LostGPUSeconds += float64(p.Requests[sim.GPUIndex]) / sim.Milli * p.LostWork.Seconds()
		j.Requests.Add(&p.Requests)
	}
	j.settle()
}

// settle derives the job's phase and end from its members.
func (j *Job) settle() {
	done, failed, running := 0, false, false
	var end sim.Time
	for _, p := range j.Pods {
		switch p.Phase {
		case sim.Succeeded:
			done++
		case sim.Failed:
			done++
			failed = true
		case sim.Running:
			running = true
		}
		end = max(end, p.End)
	}
	j.End = -1
	switch {
	case failed && done == len(j.Pods):
		j.Phase, j.End = JobFailed, end
	case failed:
		j.Phase = JobFailed
	case done == len(j.Pods) && len(j.Pods) > 0 && (j.Pods[0].Group() == nil || len(j.Pods) == j.Pods[0].Group().Size()):
		j.Phase, j.End = JobSucceeded, end
	case running || done > 0:
		j.Phase = JobRunning
	default:
		j.Phase = JobPending
	}
}

// JobHeader is the header of jobs.csv. Times are seconds; wait, jct and slowdown are empty
// for jobs that never started or did not succeed.
var JobHeader = []string{"name", "user", "pods", "phase", "submit_s", "start_s", "end_s", "wait_s", "jct_s",
	"duration_s", "slowdown", "preemptions", "restarts", "lost_gpu_s", "priority", "cpu", "memory", "gpu"}

// WriteJobs writes one CSV row per job.
func WriteJobs(w io.Writer, jobs []Job) error {
	return WriteJobSeq(w, func(yield func(*Job) bool) {
		for i := range jobs {
			if !yield(&jobs[i]) {
				return
			}
		}
	})
}

// WriteJobSeq writes one CSV row per job of jobs, such as EachJob(pods).
func WriteJobSeq(w io.Writer, jobs iter.Seq[*Job]) error {
	cw := safecsv.NewWriter(w)
	if err := cw.Write(JobHeader); err != nil {
		return err
	}
	row := make([]string, len(JobHeader))
	var c cells
	for j := range jobs {
		c.reset()
		c.secs(j.Submit)
		c.secs(j.FirstStart)
		c.secs(j.End)
		c.secs(j.Wait())
		c.secs(j.JCT())
		c.secs(j.Duration)
		slow := j.Slowdown()
		c.float(slow, 4, slow >= 0)
		c.int(j.Preemptions)
		c.int(j.Restarts)
		c.float(j.LostGPUSeconds, 3, true)
		c.int(int(j.Priority))
		c.quantity(j.Requests[sim.CPUIndex])
		c.quantity(j.Requests[sim.MemoryIndex])
		c.quantity(j.Requests[sim.GPUIndex])
		row = c.strings(append(row[:0], j.Name, j.User, strconv.Itoa(len(j.Pods)), j.Phase.String()))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
