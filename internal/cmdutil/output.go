package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jikken-dev/jikken/internal/iostreams"
)

// FormatFlag adds -o/--output, the output format: one of formats, the first being the default.
// A value not in the list is a usage error when the flag is parsed, and the shell completes the
// list. -o is always a format; files and folders are --out and --dir (see PathOutput).
func FormatFlag(cmd *cobra.Command, p *string, formats ...string) {
	*p = formats[0]
	cmd.Flags().VarP(&formatValue{p: p, formats: formats}, "output", "o", "output format: "+orList(formats))
	completeFormats(cmd, formats)
}

func completeFormats(cmd *cobra.Command, formats []string) {
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

func orList(list []string) string {
	if len(list) < 2 {
		return strings.Join(list, "")
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// formatValue is the pflag.Value of -o. legacy, when set, takes a value that is not a format:
// the path that -o named before it meant a format.
type formatValue struct {
	p       *string
	formats []string
	legacy  *string
}

func (v *formatValue) String() string { return *v.p }
func (v *formatValue) Type() string   { return "format" }

func (v *formatValue) Set(s string) error {
	if slices.Contains(v.formats, s) {
		*v.p = s
		return nil
	}
	if v.legacy != nil && s != "" {
		*v.legacy = s
		return nil
	}
	return fmt.Errorf("unknown output format %q; use %s", s, orList(v.formats))
}

// PathOutput is the output of a command that writes a file or a folder: Format from -o and
// Path from --out FILE or --dir DIR. Before -o meant a format everywhere it named that path;
// that spelling still works, with a warning, until it is removed.
type PathOutput struct {
	Format string
	Path   string

	formats  []string
	pathFlag string
	legacy   string
	cmd      *cobra.Command
}

// AddPathOutput adds -o/--output (one of formats, the first the default) and --pathFlag (out
// or dir) with pathUsage to cmd.
func AddPathOutput(cmd *cobra.Command, pathFlag, defaultPath, pathUsage string, formats ...string) *PathOutput {
	o := &PathOutput{Format: formats[0], Path: defaultPath, formats: formats, pathFlag: pathFlag, cmd: cmd}
	cmd.Flags().VarP(&formatValue{p: &o.Format, formats: formats, legacy: &o.legacy}, "output", "o", "output format: "+orList(formats))
	completeFormats(cmd, formats)
	cmd.Flags().StringVar(&o.Path, pathFlag, defaultPath, pathUsage)
	if pathFlag == "dir" {
		_ = cmd.MarkFlagDirname(pathFlag)
	} else {
		_ = cmd.MarkFlagFilename(pathFlag)
	}
	return o
}

// FormatGiven reports whether -o was given as a format (not as the old path spelling).
func (o *PathOutput) FormatGiven() bool {
	return o.cmd.Flags().Changed("output") && o.legacy == ""
}

// Resolve takes the old spelling -o PATH as --out/--dir PATH, warning on ios that it is
// deprecated, and refuses both at once.
func (o *PathOutput) Resolve(ios *iostreams.IOStreams) error {
	if o.legacy == "" {
		return nil
	}
	if o.cmd.Flags().Changed(o.pathFlag) {
		return UsageError("unknown output format %q; use %s (the %s to write is --%s)", o.legacy, orList(o.formats), map[string]string{"out": "file", "dir": "folder"}[o.pathFlag], o.pathFlag)
	}
	fmt.Fprintf(ios.ErrOut, "warning: '-o %s' is deprecated: -o is the output format (%s); write '--%s %s'\n", o.legacy, orList(o.formats), o.pathFlag, o.legacy)
	o.Path = o.legacy
	return nil
}

// DeprecatedAlias adds --old as a hidden alias of the flag new (already defined on cmd) that
// warns when used: a renamed flag keeps working for a release.
func DeprecatedAlias(cmd *cobra.Command, old, new string) {
	f := cmd.Flags().Lookup(new)
	v := f.Value
	if fv, ok := v.(*formatValue); ok {
		v = &formatValue{p: fv.p, formats: fv.formats} // an old format flag never took a path
	}
	spelling := "--" + new
	if f.Shorthand != "" {
		spelling = "-" + f.Shorthand
	}
	cmd.Flags().Var(&deprecatedValue{Value: v, cmd: cmd, old: old, new: spelling}, old, f.Usage)
	_ = cmd.Flags().MarkHidden(old)
}

// deprecatedValue warns on the command's stderr when the old flag is set. (pflag's own
// deprecation notice goes to a buffer cobra keeps for flag errors, so nobody sees it.)
type deprecatedValue struct {
	pflag.Value
	cmd      *cobra.Command
	old, new string
}

func (d *deprecatedValue) Set(s string) error {
	fmt.Fprintf(d.cmd.ErrOrStderr(), "warning: --%s is deprecated; write %s\n", d.old, d.new)
	return d.Value.Set(s)
}
