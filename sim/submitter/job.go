package submitter

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/internal/safecsv"
	"github.com/jikken-dev/jikken/sim"
)

// Job is one row of a workload trace: one pod with its submit time and duration in seconds
// and its requests in milli-units. Pods of a multi-pod job share a Gang name.
type Job struct {
	Name     string  `json:"name"`
	User     string  `json:"user"`
	Submit   float64 `json:"submit_s"`
	Duration float64 `json:"duration_s"`
	CPU      int64   `json:"-"`
	Memory   int64   `json:"-"`
	GPU      int64   `json:"-"`
	Priority int32   `json:"priority,omitempty"`
	Gang     string  `json:"gang,omitempty"`
	// GangSize is filled in when the trace is loaded, from the rows sharing Gang.
	GangSize int `json:"-"`
	// Template, when set, carries the constraints of a pod read from a manifest.
	Template *sim.Pod `json:"-"`
}

// jsonJob is Job's JSONL form: quantities as Kubernetes quantity strings or numbers.
type jsonJob struct {
	Name     string          `json:"name"`
	User     string          `json:"user"`
	Submit   float64         `json:"submit_s"`
	Duration float64         `json:"duration_s"`
	CPU      json.RawMessage `json:"cpu,omitempty"`
	Memory   json.RawMessage `json:"memory,omitempty"`
	GPU      json.RawMessage `json:"gpu,omitempty"`
	Priority int32           `json:"priority,omitempty"`
	Gang     string          `json:"gang,omitempty"`
}

// TraceHeader is the CSV header of a trace; priority and gang are optional columns.
var TraceHeader = []string{"name", "user", "submit_s", "duration_s", "cpu", "memory", "gpu", "priority", "gang"}

// Pod converts the job into a pod.
func (j *Job) Pod() *sim.Pod {
	p := &sim.Pod{}
	if j.Template != nil {
		*p = *j.Template
	}
	p.Name, p.User, p.Priority, p.Gang, p.GangSize = j.Name, j.User, j.Priority, j.Gang, j.GangSize
	if p.Namespace == "" {
		p.Namespace = "default"
	}
	p.Duration = sim.Seconds(j.Duration)
	if j.Template == nil {
		p.Requests[sim.CPUIndex] = j.CPU
		p.Requests[sim.MemoryIndex] = j.Memory
		p.Requests[sim.GPUIndex] = j.GPU
	}
	return p
}

// ReadCSV reads a trace with the header name,user,submit_s,duration_s,cpu,memory,gpu and
// optionally priority,gang (columns are found by name, so their order is free). Quantities
// are Kubernetes quantities (2, 500m, 16Gi).
func ReadCSV(r io.Reader) ([]Job, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read trace header: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range TraceHeader[:7] {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("trace header lacks column %q; the header must name %s", need, strings.Join(TraceHeader[:7], ","))
		}
	}
	var jobs []Job
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", line, err)
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return safecsv.Unescape(strings.TrimSpace(rec[i]))
			}
			return ""
		}
		j, err := parseJob(get)
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", line, err)
		}
		jobs = append(jobs, j)
	}
	return finish(jobs)
}

func parseJob(get func(string) string) (Job, error) {
	j := Job{Name: get("name"), User: get("user"), Gang: get("gang")}
	var err error
	if j.Submit, err = strconv.ParseFloat(get("submit_s"), 64); err != nil || j.Submit < 0 {
		return j, fmt.Errorf("submit_s %q must be a non-negative number of seconds", get("submit_s"))
	}
	if j.Duration, err = strconv.ParseFloat(get("duration_s"), 64); err != nil || j.Duration < 0 {
		return j, fmt.Errorf("duration_s %q must be a non-negative number of seconds", get("duration_s"))
	}
	for _, q := range []struct {
		name string
		dst  *int64
	}{{"cpu", &j.CPU}, {"memory", &j.Memory}, {"gpu", &j.GPU}} {
		s := get(q.name)
		if s == "" {
			continue
		}
		if *q.dst, err = sim.ParseQuantity(s); err != nil {
			return j, fmt.Errorf("%s: %w", q.name, err)
		}
		if *q.dst < 0 {
			return j, fmt.Errorf("%s %q must not be negative", q.name, s)
		}
	}
	if s := get("priority"); s != "" {
		p, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return j, fmt.Errorf("priority %q must be an integer", s)
		}
		j.Priority = int32(p)
	}
	return j, nil
}

// ReadJSONL reads a trace with one JSON object per line using the CSV column names as keys.
func ReadJSONL(r io.Reader) ([]Job, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	var jobs []Job
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var jj jsonJob
		if err := json.Unmarshal(b, &jj); err != nil {
			return nil, fmt.Errorf("trace line %d: %w", line, err)
		}
		fields := map[string]string{"name": jj.Name, "user": jj.User, "gang": jj.Gang,
			"submit_s": strconv.FormatFloat(jj.Submit, 'f', -1, 64), "duration_s": strconv.FormatFloat(jj.Duration, 'f', -1, 64),
			"cpu": rawQuantity(jj.CPU), "memory": rawQuantity(jj.Memory), "gpu": rawQuantity(jj.GPU),
			"priority": strconv.Itoa(int(jj.Priority))}
		j, err := parseJob(func(k string) string { return fields[k] })
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", line, err)
		}
		jobs = append(jobs, j)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return finish(jobs)
}

func rawQuantity(m json.RawMessage) string {
	var s string
	if json.Unmarshal(m, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(m))
}

// finish names unnamed jobs, counts gang sizes and checks gangs are consistent.
func finish(jobs []Job) ([]Job, error) {
	size := map[string]int{}
	for i := range jobs {
		if jobs[i].Name == "" {
			jobs[i].Name = fmt.Sprintf("job-%d", i)
		}
		if jobs[i].Gang != "" {
			size[jobs[i].Gang]++
		}
	}
	for i := range jobs {
		if g := jobs[i].Gang; g != "" {
			jobs[i].GangSize = size[g]
		}
	}
	return jobs, nil
}

// WriteCSV writes jobs in the trace format ReadCSV reads.
func WriteCSV(w io.Writer, jobs []Job) error {
	cw := safecsv.NewWriter(w)
	if err := cw.Write(TraceHeader); err != nil {
		return err
	}
	for i := range jobs {
		j := &jobs[i]
		if err := cw.Write([]string{j.Name, j.User, formatFloat(j.Submit), formatFloat(j.Duration),
			sim.FormatQuantity(j.CPU), formatMemory(j.Memory), sim.FormatQuantity(j.GPU),
			strconv.Itoa(int(j.Priority)), j.Gang}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSONL writes jobs one JSON object per line.
func WriteJSONL(w io.Writer, jobs []Job) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range jobs {
		j := &jobs[i]
		if err := enc.Encode(map[string]any{"name": j.Name, "user": j.User, "submit_s": j.Submit,
			"duration_s": j.Duration, "cpu": sim.FormatQuantity(j.CPU), "memory": formatMemory(j.Memory),
			"gpu": sim.FormatQuantity(j.GPU), "priority": j.Priority, "gang": j.Gang}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

// Trace replays jobs at their submit times, in (submit time, row) order.
type Trace struct {
	jobs []Job
	next int
}

// NewTrace returns a submitter replaying jobs; it sorts a copy by submit time.
func NewTrace(jobs []Job) *Trace {
	js := slices.Clone(jobs)
	slices.SortStableFunc(js, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) })
	return &Trace{jobs: js}
}

// Step implements sim.Submitter.
func (t *Trace) Step(now sim.Time, _ sim.Status) ([]*sim.Pod, sim.Time, error) {
	var pods []*sim.Pod
	for t.next < len(t.jobs) && sim.Seconds(t.jobs[t.next].Submit) <= now {
		pods = append(pods, t.jobs[t.next].Pod())
		t.next++
	}
	if t.next == len(t.jobs) {
		return pods, sim.Never, nil
	}
	return pods, sim.Seconds(t.jobs[t.next].Submit), nil
}

// formatMemory writes whole gibibytes as "NGi" for readable traces, other amounts in bytes.
func formatMemory(m int64) string {
	const gi = int64(1<<30) * sim.Milli
	if m > 0 && m%gi == 0 {
		return strconv.FormatInt(m/gi, 10) + "Gi"
	}
	return sim.FormatQuantity(m)
}
