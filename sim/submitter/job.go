package submitter

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
	// GangMin is how many members must start together (0: all); GangTimeout, in seconds, how
	// long members placed early hold their resources waiting for the rest (0: no wait).
	GangMin     int     `json:"gang_min,omitempty"`
	GangTimeout float64 `json:"gang_timeout_s,omitempty"`
	// Template, when set, carries the constraints of a pod read from a manifest.
	Template *sim.Pod `json:"-"`
}

// jsonJob is Job's JSONL form: quantities as Kubernetes quantity strings or numbers.
// Pointers tell a missing key from a zero.
type jsonJob struct {
	Name        string          `json:"name"`
	User        string          `json:"user"`
	Submit      *float64        `json:"submit_s"`
	Duration    *float64        `json:"duration_s"`
	CPU         json.RawMessage `json:"cpu"`
	Memory      json.RawMessage `json:"memory"`
	GPU         json.RawMessage `json:"gpu"`
	Priority    int32           `json:"priority,omitempty"`
	Gang        string          `json:"gang,omitempty"`
	GangMin     int             `json:"gang_min,omitempty"`
	GangTimeout float64         `json:"gang_timeout_s,omitempty"`
}

// TraceHeader is the CSV header of a trace; priority, gang, gang_min and gang_timeout_s are
// optional columns.
var TraceHeader = []string{"name", "user", "submit_s", "duration_s", "cpu", "memory", "gpu", "priority", "gang", "gang_min", "gang_timeout_s"}

// LineError is an error in one line of a trace file.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Pod converts the job into a pod.
func (j *Job) Pod() *sim.Pod {
	p := &sim.Pod{}
	if j.Template != nil {
		*p = *j.Template
	}
	p.Name, p.User, p.Priority, p.Gang, p.GangSize = j.Name, j.User, j.Priority, j.Gang, j.GangSize
	if j.Gang != "" {
		p.GangMin, p.GangTimeout = j.GangMin, sim.Seconds(j.GangTimeout)
	}
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
// optionally priority,gang,gang_min,gang_timeout_s (columns are found by name, so their order
// is free). Quantities are Kubernetes quantities (2, 500m, 16Gi). Every row must have a field
// for every column of the header, the required ones filled in, and pod names must be unique;
// errors are *LineError.
func ReadCSV(r io.Reader) ([]Job, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, &LineError{1, fmt.Errorf("read trace header: %w", err)}
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range TraceHeader[:7] {
		if _, ok := col[need]; !ok {
			return nil, &LineError{1, fmt.Errorf("trace header lacks column %q; the header must name %s", need, strings.Join(TraceHeader[:7], ","))}
		}
	}
	var jobs []Job
	var lines []int
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line := 0
			if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
				line = pe.StartLine
			}
			return nil, &LineError{line, err}
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			return nil, &LineError{line, fmt.Errorf("%d fields, but the header names %d columns (%s); give every column a field, empty for optional ones",
				len(rec), len(head), strings.Join(head, ","))}
		}
		j, err := parseJob(func(name string) (string, bool) {
			i, ok := col[name]
			if !ok {
				return "", false
			}
			return safecsv.Unescape(strings.TrimSpace(rec[i])), true
		})
		if err != nil {
			return nil, &LineError{line, err}
		}
		jobs = append(jobs, j)
		lines = append(lines, line)
	}
	return finish(jobs, lines)
}

// parseJob reads one job; get returns a field and whether its column (or key) exists.
func parseJob(get func(string) (string, bool)) (Job, error) {
	field := func(name string) string { v, _ := get(name); return v }
	j := Job{Name: field("name"), User: field("user"), Gang: field("gang")}
	var err error
	if j.Submit, err = strconv.ParseFloat(field("submit_s"), 64); err != nil || j.Submit < 0 || math.IsInf(j.Submit, 0) {
		return j, fmt.Errorf("submit_s %q must be a non-negative number of seconds", field("submit_s"))
	}
	if j.Duration, err = strconv.ParseFloat(field("duration_s"), 64); err != nil || j.Duration < 0 || math.IsInf(j.Duration, 0) {
		return j, fmt.Errorf("duration_s %q must be a non-negative number of seconds", field("duration_s"))
	}
	for _, q := range []struct {
		name string
		dst  *int64
	}{{"cpu", &j.CPU}, {"memory", &j.Memory}, {"gpu", &j.GPU}} {
		s, ok := get(q.name)
		if !ok || s == "" {
			return j, fmt.Errorf("%s is missing; write 0 for none", q.name)
		}
		if *q.dst, err = sim.ParseQuantity(s); err != nil {
			return j, fmt.Errorf("%s: %w", q.name, err)
		}
		if *q.dst < 0 {
			return j, fmt.Errorf("%s %q must not be negative", q.name, s)
		}
	}
	if s := field("priority"); s != "" {
		p, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return j, fmt.Errorf("priority %q must be an integer", s)
		}
		j.Priority = int32(p)
	}
	if s := field("gang_min"); s != "" {
		if j.GangMin, err = strconv.Atoi(s); err != nil || j.GangMin < 0 {
			return j, fmt.Errorf("gang_min %q must be a non-negative member count (0: all)", s)
		}
	}
	if s := field("gang_timeout_s"); s != "" {
		if j.GangTimeout, err = strconv.ParseFloat(s, 64); err != nil || j.GangTimeout < 0 || math.IsInf(j.GangTimeout, 0) {
			return j, fmt.Errorf("gang_timeout_s %q must be a non-negative number of seconds", s)
		}
	}
	if (j.GangMin != 0 || j.GangTimeout != 0) && j.Gang == "" {
		return j, fmt.Errorf("gang_min and gang_timeout_s need a gang name")
	}
	return j, nil
}

// ReadJSONL reads a trace with one JSON object per line using the CSV column names as keys;
// submit_s, duration_s, cpu, memory and gpu are required. Errors are *LineError.
func ReadJSONL(r io.Reader) ([]Job, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	var jobs []Job
	var lines []int
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var jj jsonJob
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&jj); err != nil {
			return nil, &LineError{line, err}
		}
		fields := map[string]string{"name": jj.Name, "user": jj.User, "gang": jj.Gang,
			"priority": strconv.Itoa(int(jj.Priority)), "gang_min": strconv.Itoa(jj.GangMin),
			"gang_timeout_s": strconv.FormatFloat(jj.GangTimeout, 'f', -1, 64)}
		for _, k := range []struct {
			name string
			v    *float64
		}{{"submit_s", jj.Submit}, {"duration_s", jj.Duration}} {
			if k.v == nil {
				return nil, &LineError{line, fmt.Errorf("%s is missing", k.name)}
			}
			fields[k.name] = strconv.FormatFloat(*k.v, 'f', -1, 64)
		}
		for _, k := range []struct {
			name string
			raw  json.RawMessage
		}{{"cpu", jj.CPU}, {"memory", jj.Memory}, {"gpu", jj.GPU}} {
			if k.raw != nil {
				fields[k.name] = rawQuantity(k.raw)
			}
		}
		j, err := parseJob(func(k string) (string, bool) { v, ok := fields[k]; return v, ok })
		if err != nil {
			return nil, &LineError{line, err}
		}
		jobs = append(jobs, j)
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return finish(jobs, lines)
}

func rawQuantity(m json.RawMessage) string {
	var s string
	if json.Unmarshal(m, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(m))
}

// finish names unnamed jobs, refuses duplicate names, counts gang sizes and checks that
// members agree on the gang's settings. lines[i] is job i's line in the file.
func finish(jobs []Job, lines []int) ([]Job, error) {
	size := map[string]int{}
	first := map[string]int{}
	seen := make(map[string]int, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		if j.Name == "" {
			j.Name = fmt.Sprintf("job-%d", i)
		}
		if prev, dup := seen[j.Name]; dup {
			return nil, &LineError{lines[i], fmt.Errorf("pod name %q is already used on line %d; names must be unique", j.Name, lines[prev])}
		}
		seen[j.Name] = i
		if j.Gang == "" {
			continue
		}
		size[j.Gang]++
		if f, ok := first[j.Gang]; !ok {
			first[j.Gang] = i
		} else if g := &jobs[f]; g.GangMin != j.GangMin || g.GangTimeout != j.GangTimeout {
			return nil, &LineError{lines[i], fmt.Errorf("gang %q: gang_min and gang_timeout_s differ from line %d; give every member the same", j.Gang, lines[f])}
		}
	}
	for i := range jobs {
		if g := jobs[i].Gang; g != "" {
			jobs[i].GangSize = size[g]
			if jobs[i].GangMin > jobs[i].GangSize {
				return nil, &LineError{lines[first[g]], fmt.Errorf("gang %q: gang_min %d exceeds its %d members", g, jobs[i].GangMin, jobs[i].GangSize)}
			}
		}
	}
	return jobs, nil
}

// WriteCSV writes jobs in the trace format ReadCSV reads. The gang_min and gang_timeout_s
// columns are written only when some job sets them.
func WriteCSV(w io.Writer, jobs []Job) error {
	cw := safecsv.NewWriter(w)
	gangCols := slices.ContainsFunc(jobs, func(j Job) bool { return j.GangMin != 0 || j.GangTimeout != 0 })
	head := TraceHeader[:9]
	if gangCols {
		head = TraceHeader
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for i := range jobs {
		j := &jobs[i]
		row := []string{j.Name, j.User, formatFloat(j.Submit), formatFloat(j.Duration),
			sim.FormatQuantity(j.CPU), formatMemory(j.Memory), sim.FormatQuantity(j.GPU),
			strconv.Itoa(int(j.Priority)), j.Gang}
		if gangCols {
			gmin, gtimeout := "", ""
			if j.GangMin != 0 {
				gmin = strconv.Itoa(j.GangMin)
			}
			if j.GangTimeout != 0 {
				gtimeout = formatFloat(j.GangTimeout)
			}
			row = append(row, gmin, gtimeout)
		}
		if err := cw.Write(row); err != nil {
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
		row := map[string]any{"name": j.Name, "user": j.User, "submit_s": j.Submit,
			"duration_s": j.Duration, "cpu": sim.FormatQuantity(j.CPU), "memory": formatMemory(j.Memory),
			"gpu": sim.FormatQuantity(j.GPU), "priority": j.Priority, "gang": j.Gang}
		if j.GangMin != 0 {
			row["gang_min"] = j.GangMin
		}
		if j.GangTimeout != 0 {
			row["gang_timeout_s"] = j.GangTimeout
		}
		if err := enc.Encode(row); err != nil {
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
