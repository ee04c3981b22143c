package experiment

import (
	"os/exec"
	"strings"
	"testing"
)

func TestSubstituteShell(t *testing.T) {
	vars := map[string]string{"lr": "0.1", "p": "a b; rm -rf ~", "trial": "m-1"}
	envs := map[string]string{"lr": "JIKKEN_PARAM_LR", "p": "JIKKEN_PARAM_P"}
	cases := []struct{ in, want string }{
		{"./train --lr {{lr}} --name {{trial}}", "./train --lr 0.1 --name m-1"},
		{"./train {{p}}", `./train "${JIKKEN_PARAM_P}"`},
		{`echo "p={{p}}"`, `echo "p=${JIKKEN_PARAM_P}"`},
		{`echo 'p={{p}}'`, `echo 'p='"${JIKKEN_PARAM_P}"''`},
		{`echo "it's" {{p}}`, `echo "it's" "${JIKKEN_PARAM_P}"`},
		{`echo \" {{p}}`, `echo \" "${JIKKEN_PARAM_P}"`},
		{`echo "\"{{p}}"`, `echo "\"${JIKKEN_PARAM_P}"`},
	}
	for _, c := range cases {
		got, err := substituteShell(c.in, vars, envs)
		if err != nil || got != c.want {
			t.Errorf("substituteShell(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := substituteShell("x {{nope}}", vars, envs); err == nil || !strings.Contains(err.Error(), "{{nope}} is not a param") {
		t.Errorf("unknown placeholder: %v", err)
	}
}

// FuzzSubstituteShell runs the substituted command in a real shell: whatever the value, and
// wherever the placeholder stands that jikken does not warn of (bare, in double or single
// quotes, in $( ) or backquotes, in a heredoc), the shell prints exactly the value and runs
// nothing else.
func FuzzSubstituteShell(f *testing.F) {
	for _, v := range []string{"0.1", "a b", "$(id)", "`id`", "x\ny", "'", `"`, `\`, "; id", "${HOME}", "*", "-n", "a'b\"c", "EOF", "x\nEOF\ny"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.ContainsRune(v, 0) {
			return // an environment variable cannot hold NUL
		}
		for _, form := range []struct{ tmpl, suffix string }{
			{"printf '%s|' {{v}}", "|"},
			{`printf '%s|' "{{v}}"`, "|"},
			{`printf '%s|' '{{v}}'`, "|"},
			{`printf '%s|' "$(printf '%s' '{{v}}')"`, "|"},
			{"printf '%s|' \"`printf '%s' '{{v}}'`\"", "|"},
			{"printf '%s|' \"$(printf '%s' \"{{v}}\")\"", "|"},
			{"cat <<EOF\n{{v}}\nEOF", "\n"},
			{"cat <<'EOF'\n{{v}}\nEOF", "\n"},
		} {
			tpl := parseCmd(form.tmpl)
			if w := tpl.warnings(func(string) bool { return true }); len(w) > 0 {
				t.Fatalf("template %q: unexpected warning %q", form.tmpl, w)
			}
			cmd, err := tpl.expand(map[string]string{"v": v}, map[string]string{"v": "JIKKEN_PARAM_V"})
			if err != nil {
				if strings.Contains(err.Error(), "end it early") || strings.Contains(err.Error(), "dash") {
					continue // a value a quoted heredoc cannot carry is refused
				}
				t.Fatal(err)
			}
			want := v + form.suffix
			if strings.Contains(form.tmpl, "`") || strings.Contains(form.tmpl, "$(") {
				want = strings.TrimRight(v, "\n") + form.suffix // command substitution drops trailing newlines
			}
			c := exec.Command("/bin/sh", "-c", cmd)
			c.Env = []string{"JIKKEN_PARAM_V=" + v, "PATH=/usr/bin:/bin"}
			out, err := c.Output()
			if err != nil || string(out) != want {
				t.Fatalf("template %q, value %q: %q printed %q (%v)", form.tmpl, v, cmd, out, err)
			}
		}
	})
}

// TestEveryPlaceholderReplaced: whatever stands before a placeholder, it is replaced.
func TestEveryPlaceholderReplaced(t *testing.T) {
	vars := map[string]string{"p": "a b"}
	envs := map[string]string{"p": "JIKKEN_PARAM_P"}
	for _, cmd := range []string{`echo \{{p}}`, `echo "\{{p}}"`, "cat <<{{p}}\nx\n{{p}}", "cat <<EOF\n\\{{p}}\nEOF"} {
		got, err := substituteShell(cmd, vars, envs)
		if err != nil || strings.Contains(got, "{{") {
			t.Errorf("%q -> %q, %v", cmd, got, err)
		}
	}
}

// FuzzParseCmd reads any cmd template without panicking, and replaces every placeholder.
func FuzzParseCmd(f *testing.F) {
	for _, c := range []string{"echo {{v}}", "sh -c 'x {{v}}'", "cat <<-'E'\n\t{{v}}\n\tE\n", "a $(( 1 << {{v}} ))", "`x \"$(y '{{v}}')\"`", "x <<E\n$(\n{{v}}\n)\nE", "\\{{v}}", "x # {{v}} '", "cat <<{{v}}\n"} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		tpl := parseCmd(cmd)
		tpl.warnings(func(string) bool { return true })
		out, err := tpl.expand(map[string]string{"v": "a b"}, map[string]string{"v": "JIKKEN_PARAM_V"})
		if err == nil && placeholder.MatchString(out) {
			t.Fatalf("%q: a placeholder is left in %q", cmd, out)
		}
	})
}
