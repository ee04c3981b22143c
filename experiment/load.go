package experiment

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/google/go-jsonnet"
)

// Experiment is an evaluated, validated experiment file.
type Experiment struct {
	// Name is the experiment's name: its `name` field, else the file name without extension.
	Name string `json:"name"`
	// Path is the absolute path of the file; Dir its folder, where relative paths resolve.
	Path string `json:"path"`
	Dir  string `json:"dir"`
	// Form is "combu" for a top-level array of trials, "jikken" for the object form.
	Form string `json:"form"`
	// Sources maps each file that was read (the experiment and its imports), relative to Dir when
	// inside it, to its content, so a run keeps the exact text it came from.
	Sources map[string]string `json:"sources"`
	// Evaluated is the JSON the file evaluated to.
	Evaluated json.RawMessage `json:"evaluated"`
	// Trials in declaration order, matrices expanded.
	Trials []Trial `json:"trials"`
	// Search, when set, adds trials while the run goes on (see Search.Trial); they come after
	// Trials.
	Search *Search `json:"-"`
	// Sequential are the matrices whose seeds grow until their comparison is decided; Trials
	// holds their first look's seeds.
	Sequential []Sequential `json:"sequential,omitempty"`
	// Races are the matrices raced (F-race); Trials holds their first blocks.
	Races []Race `json:"races,omitempty"`
	// UsesRunID is true when the file has "UUID" literals, so it must be evaluated again with
	// the run's id once that is known.
	UsesRunID bool `json:"-"`
	// Warnings are what may go wrong though the file is valid (a param in code that another
	// interpreter parses), each once, located as problems are.
	Warnings []Problem `json:"-"`
}

// Options change how a file is evaluated.
type Options struct {
	ExtStr map[string]string `json:"ext_str,omitempty"` // std.extVar values
	TLAStr map[string]string `json:"tla_str,omitempty"` // top-level arguments
	// RunID replaces every "UUID" string literal in the experiment file (combu's convention for
	// a per-run id), so the evaluated plan carries this run's id.
	RunID string `json:"run_id,omitempty"`
	// MaxTrials caps the trials (0: DefaultMaxTrials; negative: no cap).
	MaxTrials int `json:"-"`
	// Evaluator evaluates the file; nil is Evaluate, in this process and without bounds on its
	// memory or time (the CLI bounds it in a child process: see internal/evalguard).
	Evaluator func(path string, opts Options) (*Evaluation, error) `json:"-"`
}

// Evaluation is what evaluating an experiment file gives: the JSON it evaluates to and every
// file it read (the file itself and its imports), keyed as Experiment.Sources.
type Evaluation struct {
	JSON    string            `json:"json"`
	Sources map[string]string `json:"sources"`
}

var uuidLiteral = regexp.MustCompile(`"UUID"|'UUID'`)

// Load evaluates the Jsonnet (or JSON) file at path and validates the trials it describes.
func Load(path string, opts Options) (*Experiment, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("load experiment: %w", err)
	}
	eval := opts.Evaluator
	if eval == nil {
		eval = Evaluate
	}
	ev, err := eval(abs, opts)
	if err != nil {
		// go-jsonnet's messages carry file:line:col and a trace; keep them whole, on their lines.
		sep := ": "
		if strings.Contains(err.Error(), "\n") {
			sep = ":\n"
		}
		return nil, fmt.Errorf("evaluate %s%s%w", path, sep, err)
	}
	dir := filepath.Dir(abs)
	src := ev.Sources[relTo(dir, abs)]
	exp, err := ParseMax(path, []byte(ev.JSON), opts.MaxTrials)
	if verr, ok := err.(*ValidationError); ok {
		locate(path, src, verr.Problems)
	}
	if err != nil {
		return nil, err
	}
	locate(path, src, exp.Warnings)
	exp.Path, exp.Dir = abs, dir
	exp.Sources = ev.Sources
	exp.UsesRunID = uuidLiteral.MatchString(ev.Sources[relTo(dir, abs)])
	return exp, nil
}

// Evaluate runs the Jsonnet VM on the file at path (absolute), in this process.
func Evaluate(path string, opts Options) (*Evaluation, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	code := string(src)
	if opts.RunID != "" {
		code = uuidLiteral.ReplaceAllString(code, fmt.Sprintf("%q", opts.RunID))
	}
	dir := filepath.Dir(path)
	imp := &recordingImporter{inner: &jsonnet.FileImporter{JPaths: []string{dir}}, dir: dir, seen: map[string]string{}}
	vm := jsonnet.MakeVM()
	vm.Importer(imp)
	for k, v := range opts.ExtStr {
		vm.ExtVar(k, v)
	}
	for k, v := range opts.TLAStr {
		vm.TLAVar(k, v)
	}
	out, err := vm.EvaluateAnonymousSnippet(path, code)
	if err != nil {
		return nil, err
	}
	imp.seen[imp.rel(path)] = string(src)
	return &Evaluation{JSON: out, Sources: imp.seen}, nil
}

// recordingImporter keeps the content of every imported file for the run manifest.
type recordingImporter struct {
	inner *jsonnet.FileImporter
	dir   string
	seen  map[string]string
}

func (r *recordingImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	c, found, err := r.inner.Import(importedFrom, importedPath)
	if err == nil {
		r.seen[r.rel(found)] = c.String()
	}
	return c, found, err
}

func (r *recordingImporter) rel(p string) string { return relTo(r.dir, p) }

// relTo names p relative to dir when it is inside it, as Sources keys it.
func relTo(dir, p string) string {
	if rel, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return p
}

// SourceNames returns the keys of Sources in order.
func (e *Experiment) SourceNames() []string {
	names := make([]string, 0, len(e.Sources))
	for k := range e.Sources {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
