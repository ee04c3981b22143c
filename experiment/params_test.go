package experiment

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/trial"
)

// hostilePayloads are param values that try to run `touch pwned` in a shell, in Python or by
// ending a heredoc, or that a careless paste would change (globs, $HOME, a leading dash).
var hostilePayloads = map[string]string{
	"quotes":    `'"$(touch pwned)"'; __import__('os').system('touch pwned') #`,
	"subst":     "$(touch pwned)",
	"backquote": "`touch pwned`",
	"semicolon": "x; touch pwned",
	"newline":   "x\ntouch pwned",
	"backslash": `a\'; touch pwned; echo \`,
	"single":    `'; touch pwned; '`,
	"double":    `"; touch pwned; "`,
	"home":      "$HOME",
	"glob":      "*",
	"dashdash":  "--",
	"dash":      "-n",
	"unicode":   "héllo wörld ✓ 日本 \u200b",
	"empty":     "",
	"long":      strings.Repeat(`ab c'd"e$(touch pwned);`, 1000),
	"heredoc":   "EOF\ntouch pwned\nEOF",
}

// cmdForms are the ways a cmd string uses a param; each writes the value to the file got.
// warn says whether jikken must warn of the form whatever the value: the placeholder stands in
// code that another interpreter parses. suffix is what the form adds to the value.
var cmdForms = []struct {
	name, cmd string
	warn      bool
	suffix    string
}{
	{"plain", `printf '%s' {{p}} > got`, false, ""},
	{"single", `printf '%s' '{{p}}' > got`, false, ""},
	{"double", `printf '%s' "{{p}}" > got`, false, ""},
	{"sh -c", `sh -c 'printf "%s" "{{p}}" > got'`, true, ""},
	{"bash -c", `bash -c "printf '%s' '{{p}}' > got"`, true, ""},
	{"eval", `eval "printf '%s' '{{p}}'" > got`, true, ""},
	{"python3 -c", `python3 -c "import sys; sys.stdout.write('{{p}}')" > got`, true, ""},
	{"heredoc", "cat > got <<EOF\n{{p}}\nEOF", false, "\n"},
	{"quoted heredoc", "cat > got <<'EOF'\n{{p}}\nEOF\n", false, "\n"},
	{"heredoc script", "python3 - > got <<EOF\nimport sys; sys.stdout.write('{{p}}')\nEOF", true, ""},
	{"$( )", `printf '%s' "$(printf '%s' '{{p}}')" > got`, false, ""},
	{"backquotes", "printf '%s' \"`printf '%s' '{{p}}'`\" > got", false, ""},
	{"env var", `printf '%s' "$JIKKEN_PARAM_P" > got`, false, ""},
}

// TestHostileParams expands every hostile payload into every cmd form and runs the command in
// /bin/sh, as the local backend does: no payload runs anything unless jikken warned of the
// form, and where it did not warn the value arrives byte for byte.
func TestHostileParams(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	ran, exact, refused := 0, 0, 0
	for _, f := range cmdForms {
		for name, v := range hostilePayloads {
			spec, _ := json.Marshal(map[string]any{"matrix": map[string]any{"name": "t", "params": map[string]any{"p": []string{v}}, "cmd": f.cmd}})
			exp, err := Parse("x.jsonnet", spec)
			if err != nil {
				// Refused: nothing runs. Only a value that would end a quoted heredoc may be.
				if f.name != "quoted heredoc" || name != "heredoc" {
					t.Errorf("%s / %s: refused: %v", f.name, name, err)
				}
				refused++
				continue
			}
			warned := len(exp.Warnings) > 0
			if warned != f.warn {
				t.Errorf("%s / %s: warned %v, want %v: %v", f.name, name, warned, f.warn, exp.Warnings)
			}
			dir := t.TempDir()
			c := exec.Command("/bin/sh", "-c", exp.Trials[0].Cmd.Shell)
			c.Dir = dir
			c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", ParamEnv("p") + "=" + v}
			out, _ := c.CombinedOutput()
			if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
				ran++
				if !warned {
					t.Errorf("%s / %s: the payload ran and jikken did not warn; command %q", f.name, name, exp.Trials[0].Cmd.Shell)
				}
			}
			if warned {
				continue
			}
			got, err := os.ReadFile(filepath.Join(dir, "got"))
			if err != nil || string(got) != v+f.suffix {
				t.Errorf("%s / %s: got %q (%v), want %q; command %q printed %s", f.name, name, trial.Clip(string(got)), err, trial.Clip(v+f.suffix), trial.Clip(exp.Trials[0].Cmd.Shell), out)
				continue
			}
			exact++
		}
	}
	t.Logf("%d payloads x %d forms: %d arrived exact, %d ran code (each in a warned form), %d refused",
		len(hostilePayloads), len(cmdForms), exact, ran, refused)
}

// TestCmdWarnings checks which spots count as code for another interpreter.
func TestCmdWarnings(t *testing.T) {
	cases := []struct {
		cmd  string
		warn string // a part of the warning, or "" for none
	}{
		{"./train --lr {{p}}", ""},
		{"python3 train.py --lr {{p}}", ""},
		{`sh -c 'echo "$1"' sh {{p}}`, ""},
		{"sudo -u x bash -lc 'echo {{p}}'", "bash -lc"},
		{"timeout 5 python3 -c 'print({{p}})'", "python3 -c"},
		{"perl -ne 'print if /{{p}}/' f", "perl -ne"},
		{`node -e "console.log('{{p}}')"`, "node -e"},
		{"ssh host echo {{p}}", "ssh"},
		{"eval echo {{p}}", "eval"},
		{"awk -v x=1 '{print \"{{p}}\"}' f", "awk"},
		{"sed -i 's/a/b/' {{p}}", ""},
		{"sed -e 's/a/{{p}}/' f", "sed -e"},
		{"cat <<EOF | sh\necho {{p}}\nEOF", "sh (its stdin)"},
		{"cat <<EOF > f\n{{p}}\nEOF\nsh f", ""},
		{"python3 train.py <<EOF\n{{p}}\nEOF", ""},
		{`x="$(sh -c 'echo {{p}}')"`, "sh -c"},
		{`bash -c "$(echo {{p}})"`, "bash -c"},
		{"echo $(( {{p}} + 1 ))", "arithmetic"},
		{"echo $(( 1 << 2 ))\necho {{p}}", ""},
		{"echo hi # it's {{p}}", ""},
		{"ls 2>&1 | grep {{p}}", ""},
		{"rsync -a -e ssh {{p}} host:dst", ""},
		{"find . -name x -exec sh -c 'echo {{p}}' \\;", "sh -c"},
		{"env -i bash -c 'echo {{p}}'", "bash -c"},
	}
	for _, c := range cases {
		w := parseCmd(c.cmd).warnings(func(string) bool { return true })
		switch {
		case c.warn == "" && len(w) > 0:
			t.Errorf("%q: unexpected warning %q", c.cmd, w)
		case c.warn != "" && (len(w) == 0 || !strings.Contains(w[0], c.warn)):
			t.Errorf("%q: warnings %q, want one about %q", c.cmd, w, c.warn)
		}
	}
}

// TestWorkdirOutside: a workdir that leaves the experiment's folder, written or from a param,
// is refused unless the trial says workdir_outside: true; a container's absolute path is its own.
func TestWorkdirOutside(t *testing.T) {
	cases := []struct {
		trial string
		ok    bool
	}{
		{`{"name": "a", "cmd": "pwd", "workdir": "sub/dir"}`, true},
		{`{"name": "a", "cmd": "pwd", "workdir": "sub/../../x"}`, false},
		{`{"name": "a", "cmd": "pwd", "workdir": "/tmp"}`, false},
		{`{"name": "a", "cmd": "pwd", "workdir": "/work", "image": "busybox"}`, true},
		{`{"name": "a", "cmd": "pwd", "workdir": "/tmp", "workdir_outside": true}`, true},
		{`{"name": "a", "cmd": "pwd", "workdir": "/tmp", "workdir_outside": "yes"}`, false},
	}
	for _, c := range cases {
		_, err := Parse("x.json", []byte("["+c.trial+"]"))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.trial, err)
		}
	}
	m := `{"defaults": {"workdir": "/app"}, "trials": [{"name": "a", "cmd": "pwd", "image": "busybox"}]}`
	if _, err := Parse("x.json", []byte(m)); err != nil {
		t.Errorf("a container's workdir from defaults: %v", err)
	}
	m = `{"matrix": {"params": {"p": ["../../../../tmp"]}, "cmd": "pwd", "workdir": "{{p}}"}}`
	if _, err := Parse("x.json", []byte(m)); err == nil || !strings.Contains(err.Error(), "workdir_outside: true") {
		t.Errorf("workdir from a param: %v", err)
	}
	m = `{"defaults": {"workdir_outside": true}, "matrix": {"params": {"p": ["../../../../tmp"]}, "cmd": "pwd", "workdir": "{{p}}"}}`
	if _, err := Parse("x.json", []byte(m)); err != nil {
		t.Errorf("workdir_outside in defaults: %v", err)
	}
}

// TestOversizedParam: a param too large for a command line or the environment is refused
// where a placeholder would put it, with a message that names it and does not repeat it, and
// is only warned of where the trial reads it from params.json.
func TestOversizedParam(t *testing.T) {
	big := strings.Repeat("x", 200_000)
	spec, _ := json.Marshal(map[string]any{"matrix": map[string]any{"params": map[string]any{"blob": []string{big}}, "cmd": "./use {{blob}}"}})
	_, err := Parse("x.json", spec)
	if err == nil || !strings.Contains(err.Error(), "param blob is 200,000 bytes") || !strings.Contains(err.Error(), "$JIKKEN_PARAMS") || len(err.Error()) > 1000 {
		t.Errorf("placeholder of a 200,000-byte param: %.300v", err)
	}
	spec, _ = json.Marshal(map[string]any{"matrix": map[string]any{"params": map[string]any{"blob": []string{big}}, "cmd": `jq -r .blob "$JIKKEN_PARAMS"`}})
	exp, err := Parse("x.json", spec)
	if err != nil || len(exp.Warnings) != 1 || !strings.Contains(exp.Warnings[0].Msg, "no JIKKEN_PARAM_BLOB") {
		t.Errorf("a 200,000-byte param read from params.json: %v, warnings %v", err, exp.Warnings)
	}
}

// TestNumbersAreNotWarnedOf: a param whose every value is a number is safe in any code, so
// `sh -c 'sleep {{n}}'` or $(( {{x}} * 2 )) over numbers says nothing; one string among them
// makes it risky.
func TestNumbersAreNotWarnedOf(t *testing.T) {
	for _, c := range []struct {
		values string
		warn   bool
	}{{`[1, 2.5, -3, 1e-5]`, false}, {`["7", 8]`, false}, {`[1, "x"]`, true}} {
		spec := `{"matrix": {"params": {"n": ` + c.values + `}, "cmd": "sh -c 'sleep {{n}}'; echo $(( {{n}} * 2 ))"}}`
		exp, err := Parse("x.json", []byte(spec))
		if err != nil {
			t.Fatal(err)
		}
		if (len(exp.Warnings) > 0) != c.warn {
			t.Errorf("values %s: warnings %v", c.values, exp.Warnings)
		}
	}
}
