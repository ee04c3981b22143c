package cli

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	// The backends jikken is built with: each registers itself (runner.Register), and this list
	// is the only place in the commands that names them.
	_ "github.com/jikken-dev/jikken/backend/docker"
	_ "github.com/jikken-dev/jikken/backend/kubernetes"
	_ "github.com/jikken-dev/jikken/backend/local"
	_ "github.com/jikken-dev/jikken/backend/slurm"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// backendList returns the names of the registered backends, sorted.
func backendList() []string {
	var names []string
	for _, d := range runner.Descriptors() {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return names
}

// backendUsage lists the backends for --backend's help, the default first: "local, docker,
// kubernetes or slurm".
func backendUsage() string {
	var names []string
	for _, d := range runner.Descriptors() {
		names = append(names, d.Name)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// defaultBackend is the backend of 'jikken run' without --backend.
func defaultBackend() string {
	for _, d := range runner.Descriptors() {
		if d.Default {
			return d.Name
		}
	}
	return ""
}

// backendSettings are the registered backends' settings from the command line, merged over
// those a run recorded in its manifest, and what the command tells every backend.
type backendSettings struct {
	// flags is the command's flag set, which says what was given; values holds each backend's
	// settings struct, which the flags fill.
	flags  *pflag.FlagSet
	values map[string]any
	// Jobs is the run's -j cap where the backend runs trials (0 elsewhere).
	Jobs int
	// NoEnforce is --no-enforce: limits that nothing can enforce do not refuse a trial.
	NoEnforce bool
}

// setting is one tagged field of a backend's settings struct.
type setting struct {
	backend string
	field   reflect.Value
	flag    string
	help    string
	record  string
	was     string
}

// settingsOf lists the tagged fields of v, a pointer to a backend's settings struct.
func settingsOf(backend string, v any) []setting {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v).Elem()
	var out []setting
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if name := f.Tag.Get("flag"); name != "" {
			out = append(out, setting{backend: backend, field: rv.Field(i), flag: name, help: f.Tag.Get("help"), record: f.Tag.Get("record"), was: f.Tag.Get("was")})
		}
	}
	return out
}

// addFlags adds every backend's settings as flags of a command; withRun is false for commands
// that act on an existing run, whose recorded settings (the record tag) they read instead.
func (s *backendSettings) addFlags(cmd *cobra.Command, withRun bool) {
	s.flags, s.values = cmd.Flags(), map[string]any{}
	for _, d := range runner.Descriptors() {
		if d.Settings == nil {
			continue
		}
		v := d.Settings()
		s.values[d.Name] = v
		for _, st := range settingsOf(d.Name, v) {
			if st.record != "" && !withRun {
				continue
			}
			help := d.Name + " backend: " + st.help
			switch p := st.field.Addr().Interface().(type) {
			case *string:
				s.flags.StringVar(p, st.flag, "", help)
			case *bool:
				s.flags.BoolVar(p, st.flag, false, help)
			case *int:
				s.flags.IntVar(p, st.flag, 0, help)
			case *float64:
				s.flags.Float64Var(p, st.flag, 0, help)
			case *[]string:
				s.flags.StringArrayVar(p, st.flag, nil, help)
			default:
				panic(fmt.Sprintf("backend %s: setting --%s has a type flags cannot hold: %T", d.Name, st.flag, p))
			}
		}
	}
}

// given reports whether the command line set flag.
func (s backendSettings) given(flag string) bool { return s.flags != nil && s.flags.Changed(flag) }

// settings returns backend's settings struct, filled from the flags, or a zero one when the
// command has none.
func (s backendSettings) settings(d runner.Descriptor) any {
	if v, ok := s.values[d.Name]; ok {
		return v
	}
	if d.Settings == nil {
		return nil
	}
	return d.Settings()
}

// check refuses settings the chosen backend would ignore, so a typo of --backend does not run
// the sweep somewhere else than the user meant.
func (s backendSettings) check(backend string) error {
	var given []setting
	for _, d := range runner.Descriptors() {
		if d.Name == backend {
			continue
		}
		for _, st := range settingsOf(d.Name, s.values[d.Name]) {
			if s.given(st.flag) {
				given = append(given, st)
			}
		}
	}
	sort.Slice(given, func(i, j int) bool { return given[i].flag < given[j].flag })
	if len(given) > 0 {
		return cmdutil.UsageError("--%s applies to --backend %s, not %s", given[0].flag, given[0].backend, backend)
	}
	return nil
}

// over fills backend's settings that the command line left unset from those a run recorded
// (under their record key, or the key an earlier version used).
func (s backendSettings) over(backend string, recorded map[string]string) backendSettings {
	d, ok := runner.Lookup(backend)
	if !ok || d.Settings == nil {
		return s
	}
	if s.values == nil {
		s.values = map[string]any{}
	}
	v := s.settings(d)
	s.values[backend] = v
	for _, st := range settingsOf(backend, v) {
		if st.record == "" || s.given(st.flag) {
			continue
		}
		val, ok := recorded[st.record]
		if !ok && st.was != "" {
			val, ok = recorded[st.was]
		}
		if ok && val != "" {
			setRecorded(st.field, val)
		}
	}
	return s
}

// setRecorded sets a settings field from its recorded text; a value this version cannot read
// leaves the field as it was.
func setRecorded(f reflect.Value, val string) {
	switch p := f.Addr().Interface().(type) {
	case *string:
		*p = val
	case *bool:
		*p = val == "true"
	case *int:
		if n, err := strconv.Atoi(val); err == nil {
			*p = n
		}
	case *float64:
		if x, err := strconv.ParseFloat(val, 64); err == nil {
			*p = x
		}
	case *[]string:
		*p = strings.Split(val, "\n")
	}
}

// args are the settings given on the command line as flags of a child jikken (a detached
// runner), where the run's recorded settings do not already carry them.
func (s backendSettings) args(backend string) []string {
	var out []string
	for _, st := range settingsOf(backend, s.values[backend]) {
		if st.record != "" || !s.given(st.flag) {
			continue
		}
		if list, ok := st.field.Interface().([]string); ok {
			for _, v := range list {
				out = append(out, "--"+st.flag, v)
			}
			continue
		}
		out = append(out, "--"+st.flag, s.flags.Lookup(st.flag).Value.String())
	}
	return out
}

// recordedSettings are what a run keeps in its manifest so that resume, kill and reproduce
// find its objects again from another shell or machine, under the record keys of its
// backend's settings (the kubeconfig path is not kept: it is a file of this machine).
type recordedSettings interface {
	Settings() map[string]string
}

func recordOf(b runner.Backend) map[string]string {
	if r, ok := b.(recordedSettings); ok {
		return r.Settings()
	}
	return nil
}

// openBackend makes the backend name for the run store blob holds, which the command opened.
func openBackend(ctx context.Context, f *cmdutil.Factory, blob store.Blob, name string, s backendSettings) (runner.Backend, error) {
	d, ok := runner.Lookup(name)
	if !ok {
		return nil, cmdutil.UsageError("unknown backend %q; use one of %s", name, strings.Join(backendList(), ", "))
	}
	if err := s.check(name); err != nil {
		return nil, err
	}
	env := runner.Env{Store: blob, Executable: f.Executable, Log: f.IO.ErrOut, Jobs: s.Jobs, NoEnforce: s.NoEnforce}
	b, err := d.Open(ctx, env, s.settings(d))
	var bad *runner.SettingError
	if errors.As(err, &bad) {
		return nil, cmdutil.UsageError("backend %s: %s", name, bad.Msg)
	}
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", name, err)
	}
	return b, nil
}

// descriptorOf returns the registered backend name, or one that declares nothing when this
// jikken does not have it (a run recorded by a jikken built with another backend).
func descriptorOf(name string) runner.Descriptor {
	d, _ := runner.Lookup(name)
	return d
}
