package metrics

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/jikken-dev/jikken/internal/safecsv"
	"github.com/jikken-dev/jikken/sim"
)

// Recorder is a sim.Observer that keeps every sample.
type Recorder struct {
	Samples []sim.Sample
}

// Sampled implements sim.Observer.
func (r *Recorder) Sampled(s *sim.Sample) { r.Samples = append(r.Samples, *s) }

// PodDone implements sim.Observer; pods are read from the cluster at the end instead.
func (r *Recorder) PodDone(*sim.Pod) {}

// PodHeader is the header of pods.csv. Times are seconds; wait, jct and slowdown are empty for
// pods that never started or did not succeed.
var PodHeader = []string{"name", "namespace", "user", "gang", "phase", "node", "submit_s", "start_s", "end_s",
	"wait_s", "jct_s", "duration_s", "slowdown", "preemptions", "restarts", "lost_work_s", "priority", "cpu", "memory", "gpu"}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// WritePods writes one CSV row per pod, in submission order.
func WritePods(w io.Writer, pods []*sim.Pod) error {
	cw := safecsv.NewWriter(w)
	if err := cw.Write(PodHeader); err != nil {
		return err
	}
	row := make([]string, len(PodHeader))
	var c cells
	for _, p := range pods {
		// The numeric cells, from submit_s on, in header order.
		c.reset()
		c.secs(p.Submit)
		c.secs(p.FirstStart)
		c.secs(p.End)
		wait, jct := sim.Time(-1), sim.Time(-1)
		if p.FirstStart >= 0 {
			wait = p.Wait()
		}
		if p.Phase == sim.Succeeded {
			jct = p.End - p.Submit
		}
		c.secs(wait)
		c.secs(jct)
		c.secs(p.Duration)
		hasSlow := p.Phase == sim.Succeeded && p.Duration > 0
		c.float(float64(p.End-p.Submit)/float64(p.Duration), 4, hasSlow)
		c.int(p.Preemptions)
		c.int(p.Restarts)
		c.secs(p.LostWork)
		c.int(int(p.Priority))
		c.quantity(p.Requests[sim.CPUIndex])
		c.quantity(p.Requests[sim.MemoryIndex])
		c.quantity(p.Requests[sim.GPUIndex])
		row = c.strings(append(row[:0], p.Name, p.Namespace, p.User, p.Gang, p.Phase.String(), p.LastNode))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// TimelineColumns names the time-series columns for the resources in names.
func TimelineColumns(names *sim.Names) []string {
	cols := []string{"time_s"}
	for i := range names.Len() {
		n := names.Name(i)
		cols = append(cols, "alloc_"+n, "capacity_"+n, "util_"+n)
	}
	return append(cols, "pending", "running", "nodes_up", "free_gpu", "fragmented_gpu")
}

// Downsample averages consecutive samples so at most maxRows remain (0 keeps all). Each row
// carries the time of the last sample it averages, so a plot's x axis stays monotone.
func Downsample(s []sim.Sample, maxRows int) []Row {
	k := 1
	if maxRows > 0 && len(s) > maxRows {
		k = (len(s) + maxRows - 1) / maxRows
	}
	var rows []Row
	for i := 0; i < len(s); i += k {
		j := min(i+k, len(s))
		var r Row
		for _, x := range s[i:j] {
			for d := range r.Alloc {
				r.Alloc[d] += float64(x.Allocated[d])
				r.Capacity[d] += float64(x.Capacity[d])
			}
			r.Pending += float64(x.Pending)
			r.Running += float64(x.Running)
			r.NodesUp += float64(x.NodesUp)
			r.FreeGPU += float64(x.FreeGPU)
			r.FragmentedGPU += float64(x.FragmentedGPU)
		}
		n := float64(j - i)
		for d := range r.Alloc {
			r.Alloc[d] /= n * sim.Milli
			r.Capacity[d] /= n * sim.Milli
		}
		r.Time = s[j-1].Time.Seconds()
		r.Pending /= n
		r.Running /= n
		r.NodesUp /= n
		r.FreeGPU /= n * sim.Milli
		r.FragmentedGPU /= n * sim.Milli
		rows = append(rows, r)
	}
	return rows
}

// Row is one (possibly averaged) time-series point, in units (not milli-units).
type Row struct {
	Time          float64
	Alloc         [sim.MaxResources]float64
	Capacity      [sim.MaxResources]float64
	Pending       float64
	Running       float64
	NodesUp       float64
	FreeGPU       float64
	FragmentedGPU float64
}

func (r *Row) values(names *sim.Names) []string {
	v := []string{f3(r.Time)}
	for i := range names.Len() {
		util := 0.0
		if r.Capacity[i] > 0 {
			util = r.Alloc[i] / r.Capacity[i]
		}
		v = append(v, f3(r.Alloc[i]), f3(r.Capacity[i]), strconv.FormatFloat(util, 'f', 4, 64))
	}
	return append(v, f3(r.Pending), f3(r.Running), f3(r.NodesUp), f3(r.FreeGPU), f3(r.FragmentedGPU))
}

// WriteTimelineCSV writes rows as CSV with TimelineColumns.
func WriteTimelineCSV(w io.Writer, rows []Row, names *sim.Names) error {
	cw := safecsv.NewWriter(w)
	if err := cw.Write(TimelineColumns(names)); err != nil {
		return err
	}
	for i := range rows {
		if err := cw.Write(rows[i].values(names)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTimelineJSONL writes rows as one JSON object per line with TimelineColumns as keys.
func WriteTimelineJSONL(w io.Writer, rows []Row, names *sim.Names) error {
	bw := bufio.NewWriter(w)
	cols := TimelineColumns(names)
	for i := range rows {
		vals := rows[i].values(names)
		bw.WriteByte('{')
		for j, c := range cols {
			if j > 0 {
				bw.WriteByte(',')
			}
			k, _ := json.Marshal(c)
			bw.Write(k)
			bw.WriteByte(':')
			bw.WriteString(vals[j])
		}
		bw.WriteString("}\n")
	}
	return bw.Flush()
}

// UserShareColumns names the columns of user_share.csv: time_s, then gpu_<user> for each user
// in name order.
func UserShareColumns(users []string) []string {
	cols := []string{"time_s"}
	for _, u := range sortedUsers(users) {
		cols = append(cols, "gpu_"+u)
	}
	return cols
}

func sortedUsers(users []string) []string {
	s := slices.Clone(users)
	slices.Sort(s)
	return s
}

// WriteUserShares writes each user's share of the GPU capacity over time (allocation / GPU
// capacity of nodes up), averaged over consecutive samples as Downsample does. users is
// Cluster.Users at the end of the run.
func WriteUserShares(w io.Writer, s []sim.Sample, users []string, maxRows int) error {
	cw := safecsv.NewWriter(w)
	if err := cw.Write(UserShareColumns(users)); err != nil {
		return err
	}
	order := make([]int, len(users)) // column i shows users[order[i]]
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(users[a], users[b]) })
	k := 1
	if maxRows > 0 && len(s) > maxRows {
		k = (len(s) + maxRows - 1) / maxRows
	}
	share := make([]float64, len(users))
	row := make([]string, 0, len(users)+1)
	for i := 0; i < len(s); i += k {
		j := min(i+k, len(s))
		clear(share)
		for _, x := range s[i:j] {
			if x.Capacity[sim.GPUIndex] <= 0 {
				continue
			}
			for u, g := range x.UserGPU {
				share[u] += float64(g) / float64(x.Capacity[sim.GPUIndex])
			}
		}
		row = append(row[:0], f3(s[j-1].Time.Seconds()))
		for _, u := range order {
			row = append(row, strconv.FormatFloat(share[u]/float64(j-i), 'f', 4, 64))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Dist summarises a sample of values.
type Dist struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func summarise(v []float64) Dist {
	if len(v) == 0 {
		return Dist{}
	}
	slices.Sort(v)
	var s float64
	for _, x := range v {
		s += x
	}
	return Dist{Mean: round(s / float64(len(v))), P50: round(quantile(v, .5)), P95: round(quantile(v, .95)),
		P99: round(quantile(v, .99)), Max: round(v[len(v)-1])}
}

// quantile interpolates linearly between order statistics (type 7, R's default).
func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (h-float64(lo))*(sorted[hi]-sorted[lo])
}

// round keeps summaries readable and stable across platforms' last-bit differences.
func round(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// Summary is summary.json.
type Summary struct {
	Scenario   string `json:"scenario,omitempty"`
	Scheduler  string `json:"scheduler,omitempty"`
	Seed       uint64 `json:"seed"`
	Pods       int    `json:"pods"`
	Succeeded  int    `json:"succeeded"`
	Failed     int    `json:"failed"`
	Unfinished int    `json:"unfinished"`
	// Jobs counts jobs: a gang is one job, a pod on its own another.
	Jobs           int `json:"jobs"`
	JobsSucceeded  int `json:"jobs_succeeded"`
	JobsFailed     int `json:"jobs_failed"`
	JobsUnfinished int `json:"jobs_unfinished"`
	// JCT is job completion time (end of the last member - submit) of succeeded jobs; Wait is
	// submit to the job's first start; Slowdown is JCT / duration. Seconds.
	JCT      Dist `json:"jct_s"`
	Wait     Dist `json:"wait_s"`
	Slowdown Dist `json:"slowdown"`
	// PodJCT, PodWait and PodSlowdown are the same per pod (gang members counted one by one).
	PodJCT      Dist `json:"pod_jct_s"`
	PodWait     Dist `json:"pod_wait_s"`
	PodSlowdown Dist `json:"pod_slowdown"`
	// Makespan is the end of the last pod; Throughput is succeeded jobs per hour of makespan.
	Makespan   float64 `json:"makespan_s"`
	Throughput float64 `json:"throughput_per_hour"`
	// Allocation is the time-weighted fraction of capacity requested by running pods, per
	// resource, over the whole run.
	Allocation    map[string]float64 `json:"allocation"`
	GPUAllocation float64            `json:"gpu_allocation"`
	// Fragmentation is the share of free GPU capacity, summed over samples, sitting on nodes
	// with fewer free GPUs than the smallest pending GPU request.
	Fragmentation float64 `json:"fragmentation"`
	// JainGPU is Jain's fairness index over users' GPU-time: 1 when equal, 1/users when one
	// user got everything.
	JainGPU float64 `json:"jain_gpu_time"`
	// FinishTimeFairness is per user sum(JCT) / sum(isolated time), where a job's isolated time
	// is its duration stretched if it needs more than the user's 1/N share of GPUs (after
	// Themis); max and mean over users. 1 is ideal.
	FinishTimeFairness FTF `json:"finish_time_fairness"`
	// Users holds each user's job figures.
	Users            map[string]UserSummary `json:"users"`
	Preemptions      int                    `json:"preemptions"`
	Restarts         int                    `json:"restarts"`
	LostWorkGPUHours float64                `json:"lost_work_gpu_hours"`
	GangTimeouts     int                    `json:"gang_timeouts"`
	Events           uint64                 `json:"events"`
	SchedulingPasses uint64                 `json:"scheduling_passes"`
	// Run cost, filled in by the caller; they vary between runs and stay out of the hash.
	WallSeconds     float64 `json:"wall_s,omitempty"`
	EventsPerSecond float64 `json:"events_per_s,omitempty"`
	PodsPerSecond   float64 `json:"pods_per_s,omitempty"`
	PeakRSSBytes    uint64  `json:"peak_rss_bytes,omitempty"`
	// DeterminismHash is SHA-256 over pods.csv and the full-resolution timeline: equal for equal
	// scenario and seed.
	DeterminismHash string `json:"determinism_hash"`
}

// UserSummary is one user's share of a run: their jobs' figures and the GPU time they got.
type UserSummary struct {
	Jobs       int     `json:"jobs"`
	Succeeded  int     `json:"succeeded"`
	JCT        Dist    `json:"jct_s"`
	Wait       Dist    `json:"wait_s"`
	Slowdown   Dist    `json:"slowdown"`
	GPUSeconds float64 `json:"gpu_s"`
}

// FTF is finish-time fairness.
type FTF struct {
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Summarize computes the summary of a finished run.
func Summarize(c *sim.Cluster, samples []sim.Sample) (Summary, error) {
	s := SummarizeUnhashed(c, samples)
	d := NewDigest()
	if err := WritePods(d, c.Pods()); err != nil {
		return s, err
	}
	var err error
	s.DeterminismHash, err = d.Sum(samples, c.Names())
	return s, err
}

// Digest computes Summary.DeterminismHash from the bytes of pods.csv, so a caller that writes
// pods.csv anyway hashes it on the way instead of formatting a million rows twice.
type Digest struct{ h hash.Hash }

// NewDigest returns an empty Digest.
func NewDigest() *Digest { return &Digest{h: sha256.New()} }

// Write takes the next bytes of pods.csv, as WritePods writes them.
func (d *Digest) Write(b []byte) (int, error) { return d.h.Write(b) }

// Sum adds the full-resolution timeline of samples and returns the hash, hex-encoded.
func (d *Digest) Sum(samples []sim.Sample, names *sim.Names) (string, error) {
	if err := WriteTimelineCSV(d.h, Downsample(samples, 0), names); err != nil {
		return "", err
	}
	return hex.EncodeToString(d.h.Sum(nil)), nil
}

// SummarizeUnhashed is Summarize without DeterminismHash, for callers that write pods.csv
// anyway and hash it on the way with a Digest.
func SummarizeUnhashed(c *sim.Cluster, samples []sim.Sample) Summary {
	pods := c.Pods()
	st := c.Stats()
	names := c.Names()
	s := Summary{Pods: len(pods), Events: st.Events, SchedulingPasses: st.Passes, Preemptions: st.Preemptions,
		Restarts: st.Restarts, GangTimeouts: st.GangTimeouts, Allocation: map[string]float64{}, Users: map[string]UserSummary{}}
	// Sized up front: appending a million values would allocate about twice as much.
	podJCT := make([]float64, 0, len(pods))
	podWait := make([]float64, 0, len(pods))
	podSlow := make([]float64, 0, len(pods))
	var end sim.Time
	for _, p := range pods {
		switch p.Phase {
		case sim.Succeeded:
			s.Succeeded++
		case sim.Failed:
			s.Failed++
		default:
			s.Unfinished++
		}
		if p.FirstStart >= 0 {
			podWait = append(podWait, p.Wait().Seconds())
		}
		if p.End > end {
			end = p.End
		}
		if p.Phase == sim.Succeeded {
			j := (p.End - p.Submit).Seconds()
			podJCT = append(podJCT, j)
			if p.Duration > 0 {
				podSlow = append(podSlow, j/p.Duration.Seconds())
			}
		}
		s.LostWorkGPUHours += float64(p.Requests[sim.GPUIndex]) / sim.Milli * p.LostWork.Seconds() / 3600
	}
	s.PodJCT, s.PodWait, s.PodSlowdown = summarise(podJCT), summarise(podWait), summarise(podSlow)
	podJCT, podWait, podSlow = nil, nil, nil
	// The jobs are visited one at a time, twice, rather than held: a million of them take
	// 200 MB.
	gangs := groupGangs(pods)
	jobs := gangs.each(pods)
	s.Jobs = gangs.jobs
	type acc struct {
		jct, wait, slow []float64
		jobs, succeeded int
		gpu             float64
		ftfJCT, ftfIso  float64
	}
	users := map[string]*acc{}
	jct := make([]float64, 0, s.Jobs)
	wait := make([]float64, 0, s.Jobs)
	slow := make([]float64, 0, s.Jobs)
	capGPU := float64(c.Capacity()[sim.GPUIndex]) / sim.Milli
	for j := range jobs {
		u := users[j.User]
		if u == nil {
			u = &acc{}
			users[j.User] = u
		}
		u.jobs++
	}
	for _, u := range users {
		u.jct = make([]float64, 0, u.jobs)
		u.wait = make([]float64, 0, u.jobs)
		u.slow = make([]float64, 0, u.jobs)
	}
	for j := range jobs {
		u := users[j.User]
		for _, p := range j.Pods {
			u.gpu += p.Attained / sim.Milli
		}
		switch j.Phase {
		case JobSucceeded:
			s.JobsSucceeded++
		case JobFailed:
			s.JobsFailed++
		default:
			s.JobsUnfinished++
		}
		if w := j.Wait(); w >= 0 {
			wait = append(wait, w.Seconds())
			u.wait = append(u.wait, w.Seconds())
		}
		if j.Phase != JobSucceeded {
			continue
		}
		u.succeeded++
		t := j.JCT().Seconds()
		jct = append(jct, t)
		u.jct = append(u.jct, t)
		if sd := j.Slowdown(); sd >= 0 {
			slow = append(slow, sd)
			u.slow = append(u.slow, sd)
		}
		u.ftfJCT += t
		stretch := 1.0
		if g := float64(j.Requests[sim.GPUIndex]) / sim.Milli; capGPU > 0 && g > capGPU/float64(len(users)) {
			stretch = g / (capGPU / float64(len(users)))
		}
		u.ftfIso += j.Duration.Seconds() * stretch
	}
	s.JCT, s.Wait, s.Slowdown = summarise(jct), summarise(wait), summarise(slow)
	s.Makespan = round(end.Seconds())
	if end > 0 {
		s.Throughput = round(float64(s.JobsSucceeded) / end.Seconds() * 3600)
	}
	for i := range names.Len() {
		if st.CapArea[i] > 0 {
			s.Allocation[names.Name(i)] = round(st.AllocArea[i] / st.CapArea[i])
		}
	}
	s.GPUAllocation = s.Allocation[sim.GPU]
	var free, frag float64
	for i := range samples {
		free += float64(samples[i].FreeGPU)
		frag += float64(samples[i].FragmentedGPU)
	}
	if free > 0 {
		s.Fragmentation = round(frag / free)
	}
	var sum, sq, ftfSum float64
	n := 0
	for _, name := range sortedKeys(users) {
		u := users[name]
		sum += u.gpu
		sq += u.gpu * u.gpu
		s.Users[name] = UserSummary{Jobs: u.jobs, Succeeded: u.succeeded, JCT: summarise(u.jct), Wait: summarise(u.wait),
			Slowdown: summarise(u.slow), GPUSeconds: round(u.gpu)}
		if u.ftfIso == 0 {
			continue
		}
		r := u.ftfJCT / u.ftfIso
		s.FinishTimeFairness.Max = max(s.FinishTimeFairness.Max, r)
		ftfSum += r
		n++
	}
	if sq > 0 {
		s.JainGPU = round(sum * sum / (float64(len(users)) * sq))
	}
	if n > 0 {
		s.FinishTimeFairness.Mean = round(ftfSum / float64(n))
	}
	s.FinishTimeFairness.Max = round(s.FinishTimeFairness.Max)
	s.LostWorkGPUHours = round(s.LostWorkGPUHours)
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare[string])
	return keys
}

// Table is a side-by-side comparison: one row per metric, one column per run.
type Table struct {
	Runs []string   `json:"runs"`
	Rows []TableRow `json:"rows"`
}

// TableRow is one metric across runs.
type TableRow struct {
	Metric string    `json:"metric"`
	Values []float64 `json:"values"`
}

// Compare builds the comparison table of several summaries.
func Compare(labels []string, ss []Summary) Table {
	t := Table{Runs: labels}
	add := func(name string, f func(s *Summary) float64) {
		r := TableRow{Metric: name}
		for i := range ss {
			r.Values = append(r.Values, f(&ss[i]))
		}
		t.Rows = append(t.Rows, r)
	}
	add("jobs", func(s *Summary) float64 { return float64(s.Jobs) })
	add("jobs_succeeded", func(s *Summary) float64 { return float64(s.JobsSucceeded) })
	add("pods", func(s *Summary) float64 { return float64(s.Pods) })
	add("jct_mean_s", func(s *Summary) float64 { return s.JCT.Mean })
	add("jct_p50_s", func(s *Summary) float64 { return s.JCT.P50 })
	add("jct_p95_s", func(s *Summary) float64 { return s.JCT.P95 })
	add("jct_p99_s", func(s *Summary) float64 { return s.JCT.P99 })
	add("wait_mean_s", func(s *Summary) float64 { return s.Wait.Mean })
	add("wait_p95_s", func(s *Summary) float64 { return s.Wait.P95 })
	add("slowdown_mean", func(s *Summary) float64 { return s.Slowdown.Mean })
	add("makespan_s", func(s *Summary) float64 { return s.Makespan })
	add("throughput_per_hour", func(s *Summary) float64 { return s.Throughput })
	add("gpu_allocation", func(s *Summary) float64 { return s.GPUAllocation })
	add("fragmentation", func(s *Summary) float64 { return s.Fragmentation })
	add("jain_gpu_time", func(s *Summary) float64 { return s.JainGPU })
	add("ftf_max", func(s *Summary) float64 { return s.FinishTimeFairness.Max })
	add("preemptions", func(s *Summary) float64 { return float64(s.Preemptions) })
	add("restarts", func(s *Summary) float64 { return float64(s.Restarts) })
	add("lost_work_gpu_hours", func(s *Summary) float64 { return s.LostWorkGPUHours })
	add("gang_timeouts", func(s *Summary) float64 { return float64(s.GangTimeouts) })
	add("wall_s", func(s *Summary) float64 { return s.WallSeconds })
	return t
}

// WriteTable prints the table with aligned columns.
func WriteTable(w io.Writer, t Table) error {
	width := len("metric")
	for _, r := range t.Rows {
		width = max(width, len(r.Metric))
	}
	colw := make([]int, len(t.Runs))
	cells := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		for j, v := range r.Values {
			s := strconv.FormatFloat(v, 'f', -1, 64)
			if math.Abs(v) >= 100 || v != math.Trunc(v) {
				s = strconv.FormatFloat(v, 'f', 2, 64)
				if v == math.Trunc(v) {
					s = strconv.FormatFloat(v, 'f', 0, 64)
				}
			}
			cells[i] = append(cells[i], s)
			colw[j] = max(colw[j], len(s))
		}
	}
	for j, l := range t.Runs {
		colw[j] = max(colw[j], len(l))
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%-*s", width, "metric")
	for j, l := range t.Runs {
		fmt.Fprintf(bw, "  %*s", colw[j], l)
	}
	bw.WriteByte('\n')
	for i, r := range t.Rows {
		fmt.Fprintf(bw, "%-*s", width, r.Metric)
		for j := range r.Values {
			fmt.Fprintf(bw, "  %*s", colw[j], cells[i][j])
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
