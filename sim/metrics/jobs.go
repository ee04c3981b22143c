package metrics

import (
	"io"
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

// Jobs groups pods into jobs, ordered by their first pod's submission. It sizes everything
// before filling it (one slice of jobs, one slice holding every job's pods), because a run of
// a million jobs otherwise spends more memory on growing slices than on the jobs.
func Jobs(pods []*sim.Pod) []Job {
	// First pass: which job each pod belongs to, and how many pods each job has.
	of := make([]int32, len(pods))
	var size []int32
	gang := map[*sim.Gang]int32{}
	for k, p := range pods {
		g := p.Group()
		i, ok := gang[g]
		if g == nil || !ok {
			i = int32(len(size))
			size = append(size, 0)
			if g != nil {
				gang[g] = i
			}
		}
		of[k] = i
		size[i]++
	}
	jobs := make([]Job, len(size))
	members := make([]*sim.Pod, len(pods))
	off := 0
	for i, n := range size {
		// A full slice expression, so appending to one job's pods cannot overwrite the next's.
		jobs[i].Pods = members[off : off : off+int(n)]
		off += int(n)
	}
	for k, p := range pods {
		j := &jobs[of[k]]
		if len(j.Pods) == 0 {
			name := p.Name
			if g := p.Group(); g != nil {
				name = g.Name()
			}
			j.Name, j.User, j.Submit, j.FirstStart, j.Priority = name, p.User, p.Submit, -1, p.Priority
		}
		j.Pods = append(j.Pods, p)
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
	for i := range jobs {
		jobs[i].settle()
	}
	return jobs
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
	cw := safecsv.NewWriter(w)
	if err := cw.Write(JobHeader); err != nil {
		return err
	}
	row := make([]string, len(JobHeader))
	for i := range jobs {
		j := &jobs[i]
		slow := ""
		if s := j.Slowdown(); s >= 0 {
			slow = strconv.FormatFloat(s, 'f', 4, 64)
		}
		row = append(row[:0], j.Name, j.User, strconv.Itoa(len(j.Pods)), j.Phase.String(), secs(j.Submit),
			secs(j.FirstStart), secs(j.End), secs(j.Wait()), secs(j.JCT()), secs(j.Duration), slow,
			strconv.Itoa(j.Preemptions), strconv.Itoa(j.Restarts), f3(j.LostGPUSeconds), strconv.Itoa(int(j.Priority)),
			sim.FormatQuantity(j.Requests[sim.CPUIndex]), sim.FormatQuantity(j.Requests[sim.MemoryIndex]),
			sim.FormatQuantity(j.Requests[sim.GPUIndex]))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
