package track

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jikken-dev/jikken/record"
)

// File names inside the output folder.
const (
	MetricsFile      = "metrics.jsonl"
	ResultFile       = "result.json"
	LoggedParamsFile = "logged_params.json"
	ArtifactsDir     = "artifacts"
)

// Tracker writes a trial's outputs into one folder: metric lines appended to metrics.jsonl,
// final values merged into result.json, parameters merged into logged_params.json, files copied
// under artifacts/. Every JSON file is replaced whole (temp file and rename), so a reader (the
// runner, after the trial ends or is killed) never sees half of one. A Tracker is safe for
// concurrent use; Path returns views of it that share its files.
type Tracker struct {
	f     *files
	scope string
}

// files is the state the views of one Tracker share.
type files struct {
	dir string
	now func() time.Time

	mu      sync.Mutex
	result  map[string]json.RawMessage
	params  map[string]json.RawMessage
	metrics *os.File
}

// New returns a Tracker writing into dir, creating it.
func New(dir string) (*Tracker, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("track: %w", err)
	}
	f := &files{dir: dir, now: time.Now}
	var err error
	if f.result, err = readObject(filepath.Join(dir, ResultFile)); err != nil {
		return nil, err
	}
	if f.params, err = readObject(filepath.Join(dir, LoggedParamsFile)); err != nil {
		return nil, err
	}
	return &Tracker{f: f}, nil
}

// readObject reads a JSON object file this package wrote earlier (a second Tracker in the same
// trial, or a trial that resumed), so its values are kept.
func readObject(p string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("track: %w", err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("track: %s is not a JSON object: %w", p, err)
	}
	return out, nil
}

var (
	defaultOnce sync.Once
	defaultT    *Tracker
	defaultErr  error
)

// Default returns the Tracker of this process: into $JIKKEN_OUTPUT_DIR when the runner set it,
// else (a trial run by hand) into ./jikken-out/<time>-<pid>, which it announces once on stderr.
func Default() (*Tracker, error) {
	defaultOnce.Do(func() {
		dir := os.Getenv("JIKKEN_OUTPUT_DIR")
		if dir == "" {
			dir = filepath.Join("jikken-out", fmt.Sprintf("%s-%d", time.Now().Format("20060102-150405"), os.Getpid()))
			fmt.Fprintf(os.Stderr, "jikken track: $JIKKEN_OUTPUT_DIR is not set (not under 'jikken run'); writing metrics and results to %s\n", dir)
		}
		defaultT, defaultErr = New(dir)
	})
	return defaultT, defaultErr
}

// Dir is the folder the Tracker writes into.
func (t *Tracker) Dir() string { return t.f.dir }

// Path returns a view of t whose keys (metric names, result and param keys, artifact names)
// start with prefix, joined to any prefix t already has: t.Path("epoch3/").LogMetric("loss", x)
// logs "epoch3/loss".
func (t *Tracker) Path(prefix string) *Tracker {
	return &Tracker{f: t.f, scope: t.scope + prefix}
}

// MetricOption changes one logged metric.
type MetricOption func(*Metric)

// Step sets the metric's step (an epoch, an iteration).
func Step(n int64) MetricOption { return func(m *Metric) { m.Step = &n } }

// At sets the metric's time instead of now.
func At(ts time.Time) MetricOption { return func(m *Metric) { m.TS = ts.UnixMilli() } }

// LogMetric appends one line to metrics.jsonl. NaN and infinities are kept, as strings.
func (t *Tracker) LogMetric(name string, value float64, opts ...MetricOption) error {
	name = t.scope + name
	if err := checkName(name); err != nil {
		return err
	}
	m := Metric{Name: name, Value: value, TS: t.f.now().UnixMilli()}
	for _, o := range opts {
		o(&m)
	}
	line, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("track: metric %s: %w", name, err)
	}
	line = append(line, '\n')
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.metrics == nil {
		mf, err := os.OpenFile(filepath.Join(f.dir, MetricsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("track: %w", err)
		}
		f.metrics = mf
	}
	// One write per line with O_APPEND: lines from several writers never interleave.
	if _, err := f.metrics.Write(line); err != nil {
		return fmt.Errorf("track: metric %s: %w", name, err)
	}
	return nil
}

// LogParams merges params into logged_params.json: the values the trial itself decided or
// derived, next to the params.json the runner wrote from the plan.
func (t *Tracker) LogParams(params map[string]any) error {
	return t.merge(LoggedParamsFile, params, func(f *files) map[string]json.RawMessage { return f.params })
}

// Result merges values into result.json, the trial's final numbers that 'jikken results'
// shows (nested objects become dotted columns).
func (t *Tracker) Result(values map[string]any) error {
	return t.merge(ResultFile, values, func(f *files) map[string]json.RawMessage { return f.result })
}

// Track calls fn and records its value in result.json under key (scoped by t's path), the way
// a decorator records a function's return value. The value is recorded only when fn succeeds.
func Track[T any](t *Tracker, key string, fn func() (T, error)) (T, error) {
	v, err := fn()
	if err != nil {
		return v, err
	}
	return v, t.Result(map[string]any{key: v})
}

func (t *Tracker) merge(file string, values map[string]any, obj func(*files) map[string]json.RawMessage) error {
	encoded := make(map[string]json.RawMessage, len(values))
	for k, v := range values {
		k = t.scope + k
		if err := checkName(k); err != nil {
			return err
		}
		raw, err := encodeValue(v)
		if err != nil {
			return fmt.Errorf("track: %s: %w", k, err)
		}
		encoded[k] = raw
	}
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	m := obj(f)
	for k, raw := range encoded {
		m[k] = raw
	}
	data, err := marshalObject(m)
	if err != nil {
		return fmt.Errorf("track: %s: %w", file, err)
	}
	return writeAtomic(filepath.Join(f.dir, file), data)
}

// SaveArtifact copies the file or folder at src under artifacts/, keeping its base name (scoped
// by t's path), and returns the name it got there.
func (t *Tracker) SaveArtifact(src string) (string, error) {
	return t.SaveArtifactAs(src, filepath.Base(src))
}

// SaveArtifactAs copies the file or folder at src to artifacts/<name> (name scoped by t's path;
// slash-separated, relative, without "." or ".." segments).
func (t *Tracker) SaveArtifactAs(src, name string) (string, error) {
	name = t.scope + name
	if err := checkRel(name); err != nil {
		return "", fmt.Errorf("track: artifact %w", err)
	}
	dst := filepath.Join(t.f.dir, ArtifactsDir, filepath.FromSlash(name))
	st, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("track: artifact: %w", err)
	}
	if !st.IsDir() {
		return name, copyFile(src, dst)
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
	if err != nil {
		return "", fmt.Errorf("track: artifact %s: %w", name, err)
	}
	return name, nil
}

// Close closes metrics.jsonl. Logging again reopens it.
func (t *Tracker) Close() error {
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.metrics == nil {
		return nil
	}
	err := f.metrics.Close()
	f.metrics = nil
	return err
}

func checkName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("track: empty name")
	}
	if strings.ContainsAny(name, "\n\r") {
		return fmt.Errorf("track: name %q has a line break", name)
	}
	return nil
}

// checkRel accepts relative slash paths that stay inside the folder they are joined to.
func checkRel(name string) error {
	if name == "" || path.IsAbs(name) || strings.Contains(name, "\\") {
		return fmt.Errorf("name %q: want a relative slash-separated path", name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("name %q: empty, '.' or '..' segment", name)
		}
	}
	return nil
}

// encodeValue renders v as JSON with every float NaN or infinity, however deeply nested, as
// the string record.EncodeFloat writes.
func encodeValue(v any) (json.RawMessage, error) {
	return json.Marshal(replaceFloats(reflect.ValueOf(v)))
}

// replaceFloats returns v with floats as json.RawMessage from record.EncodeFloat, walking maps,
// slices, arrays and pointers; structs and other values go to encoding/json as they are.
func replaceFloats(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if v.Kind() == reflect.Float32 && !math.IsNaN(f) && !math.IsInf(f, 0) {
			// Print a float32 by its own shortest form, not float64's (0.1, not 0.10000000149).
			return json.RawMessage(fmt.Sprint(float32(f)))
		}
		return record.EncodeFloat(f)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return replaceFloats(v.Elem())
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return v.Interface()
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			out[it.Key().String()] = replaceFloats(it.Value())
		}
		return out
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface() // []byte stays base64, as encoding/json writes it
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = replaceFloats(v.Index(i))
		}
		return out
	}
	return v.Interface()
}

// marshalObject writes m with sorted keys, one per line, so result.json reads well and diffs.
func marshalObject(m map[string]json.RawMessage) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			buf.WriteString(",")
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		buf.WriteString("\n  ")
		buf.Write(kb)
		buf.WriteString(": ")
		buf.Write(m[k])
	}
	buf.WriteString("\n}\n")
	return buf.Bytes(), nil
}

// writeAtomic replaces p with data through a temporary file in the same folder.
func writeAtomic(p string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-"+filepath.Base(p)+"-*")
	if err != nil {
		return fmt.Errorf("track: %w", err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("track: %w", err)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
