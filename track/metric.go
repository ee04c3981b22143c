// Package track is the trial side of jikken: the files a trial writes into $JIKKEN_OUTPUT_DIR
// (metrics.jsonl, result.json, artifacts/) and how they are read back. A trial needs no SDK: it
// may append lines itself, print ::metric lines, or use this package.
package track

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jikken-dev/jikken/record"
)

// Metric is one line of metrics.jsonl:
//
//	{"name":"loss","value":0.12,"step":3,"ts":1767225600123}
//
// Values JSON cannot hold are written as the strings "NaN", "Infinity" and "-Infinity".
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"-"`
	Step  *int64  `json:"step,omitempty"`
	TS    int64   `json:"ts,omitempty"` // milliseconds since the Unix epoch
}

type metricJSON struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
	Step  *int64          `json:"step,omitempty"`
	TS    int64           `json:"ts,omitempty"`
}

// Float is a float64 that JSON carries as metrics.jsonl does: NaN and infinities as the strings
// record.EncodeFloat writes. A plain float64 holding one of them makes json.Marshal fail, and with it
// the whole document it is part of.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) { return record.EncodeFloat(float64(f)), nil }

// UnmarshalJSON reads a number or one of the strings record.DecodeFloat accepts; null leaves f as it is.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	v, err := record.DecodeFloat(b)
	if err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (m Metric) MarshalJSON() ([]byte, error) {
	return json.Marshal(metricJSON{Name: m.Name, Value: record.EncodeFloat(m.Value), Step: m.Step, TS: m.TS})
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *Metric) UnmarshalJSON(b []byte) error {
	var mj metricJSON
	if err := json.Unmarshal(b, &mj); err != nil {
		return err
	}
	return m.from(mj)
}

// from sets m from its decoded line, checking what a metric needs.
func (m *Metric) from(mj metricJSON) error {
	if mj.Name == "" {
		return fmt.Errorf("metric without a name")
	}
	if len(mj.Value) == 0 {
		return fmt.Errorf("metric %q without a value", mj.Name)
	}
	v, err := record.DecodeFloat(mj.Value)
	if err != nil {
		return fmt.Errorf("metric %q: %w", mj.Name, err)
	}
	*m = Metric{Name: mj.Name, Value: v, Step: mj.Step, TS: mj.TS}
	return nil
}

// ReadMetrics reads metrics.jsonl, leaving out the lines that are not metrics (malformed JSON,
// a bare NaN, bytes that are not UTF-8, a last line cut short when the trial was killed
// mid-write): the runner notes each in the attempt's record with its line number when it
// collects the file, as the live feed does, so one bad line never hides a trial's other values.
// An error is a failure to read.
func ReadMetrics(r io.Reader) ([]Metric, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var out []Metric
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if m, err := ParseMetricLine(line); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// ParseMetricLine reads one line of metrics.jsonl (without its newline). A line that is not
// valid UTF-8 is refused: JSON decoding would silently turn its bad bytes into U+FFFD and give a
// metric a name the trial never wrote.
func ParseMetricLine(line []byte) (Metric, error) {
	if !utf8.Valid(line) {
		return Metric{}, errors.New("not valid UTF-8")
	}
	// One JSON pass: decoding into Metric would go through its UnmarshalJSON, a second one.
	var mj metricJSON
	if err := json.Unmarshal(line, &mj); err != nil {
		return Metric{}, err
	}
	var m Metric
	if err := m.from(mj); err != nil {
		return Metric{}, err
	}
	return m, nil
}

// ParseStdoutMetric reads a `::metric name=value [step=N]` line that unmodified programs print.
func ParseStdoutMetric(line string) (Metric, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "::metric ")
	if !ok || !utf8.ValidString(rest) {
		return Metric{}, false
	}
	var m Metric
	haveValue := false
	for _, f := range strings.Fields(rest) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return Metric{}, false
		}
		if k == "step" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return Metric{}, false
			}
			m.Step = &n
			continue
		}
		if haveValue {
			return Metric{}, false
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return Metric{}, false
		}
		m.Name, m.Value, haveValue = k, x, true
	}
	return m, haveValue
}

// ScanStdoutMetrics returns the ::metric lines of a log.
func ScanStdoutMetrics(r io.Reader) ([]Metric, error) {
	var out []Metric
	sc := bufio.NewScanner(r)
	// Most logs are short: the buffer starts small and grows to a line's length, up to 1 MiB.
	sc.Buffer(make([]byte, 4<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "::metric ") {
			continue
		}
		if m, ok := ParseStdoutMetric(line); ok {
			out = append(out, m)
		}
	}
	if err := sc.Err(); err != nil && err != bufio.ErrTooLong {
		return out, err
	}
	return out, nil
}

// AppendStdoutMetrics appends the ::metric lines of the log at stdoutPath to the metrics file
// at metricsPath, stamped with the current time when a line has none. A missing log has no
// metrics: that is not an error. The runner does this after an attempt, or the in-pod executor
// when it stores the outputs itself.
func AppendStdoutMetrics(stdoutPath, metricsPath string) error {
	f, err := os.Open(stdoutPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ms, err := ScanStdoutMetrics(f)
	f.Close()
	if err != nil || len(ms) == 0 {
		return err
	}
	out, err := os.OpenFile(metricsPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	ts := time.Now().UnixMilli()
	for _, m := range ms {
		if m.TS == 0 {
			m.TS = ts
		}
		line, err := json.Marshal(m)
		if err == nil {
			_, err = out.Write(append(line, '\n'))
		}
		if err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}
