package experiment

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ParamEnv is the environment variable that carries param name to a trial.
func ParamEnv(name string) string { return "JIKKEN_PARAM_" + strings.ToUpper(name) }

// MaxEnvParam is the largest param value, in bytes, that a trial gets in its environment
// (JIKKEN_PARAM_<NAME>) and that a placeholder may stand for. Linux refuses to start a program
// with one argument or variable over 128 KiB (and all of them over about 2 MiB), so a larger
// value would fail every attempt with "argument list too long"; such a param is only in
// params.json ($JIKKEN_PARAMS).
const MaxEnvParam = 32 << 10

// number matches a param value that reads as the same number in any language: safe wherever it
// is pasted, so a param of numbers only is never warned of.
var number = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// shellSafe matches values a shell reads as one plain word wherever they stand, inside or
// outside quotes: no quote, no $, no backquote, no backslash, no space, no glob or operator.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// quoteState is how the shell reads the spot where a placeholder stands.
type quoteState uint8

const (
	bare     quoteState = iota
	inSingle            // '...'
	inDouble            // "..."
	inDoc               // the body of a heredoc whose delimiter is not quoted: expanded, not split
	inDocRaw            // the body of a heredoc with a quoted delimiter: taken literally
)

// cmdTemplate is a cmd string with placeholders, read once as sh reads it so that each
// placeholder knows the spot it stands in. A matrix expands it once per trial.
type cmdTemplate struct {
	src   string
	sites []site
	docs  []*heredoc
}

// site is one placeholder of a cmdTemplate.
type site struct {
	start, end int // of "{{name}}" in src
	name       string
	state      quoteState
	// code names the interpreter that parses the string the placeholder stands in ("sh -c",
	// "python3 -c", "eval", a heredoc that bash reads): no quoting of the outer shell keeps a
	// value from running as code there. Empty when the outer shell is the last to parse it.
	code string
	kind string // the interpreter's kind ("shell", "python", ...), which chooses the advice
}

// heredoc is a here-document of a cmdTemplate.
type heredoc struct {
	delim              string
	stripTabs          bool // <<-
	bodyStart, bodyEnd int  // in src: the lines before the delimiter line
}

// warnings are the placeholders of risky params (params that may hold more than a number)
// that stand in code another interpreter parses, each with how to pass the value safely, once
// per placeholder.
func (t *cmdTemplate) warnings(risky func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range t.sites {
		if s.code == "" || !risky(s.name) {
			continue
		}
		msg := fmt.Sprintf("{{%s}} stands in code that %s parses, where no quoting keeps a value with quotes, ;, $( ) or a newline from running as a command; %s",
			s.name, s.code, advice(s.kind, s.name))
		if s.code == arithmetic {
			msg = fmt.Sprintf("{{%s}} stands in an arithmetic expansion $(( )), which evaluates a value as an expression (bash runs $( ) inside array subscripts); check it is a number first, or compute elsewhere", s.name)
		}
		if !seen[msg] {
			seen[msg] = true
			out = append(out, msg)
		}
	}
	return out
}

// expand replaces the placeholders. A value made only of characters a shell takes literally
// is pasted as it is, so the command reads as written; any other param value (one holding
// "; rm -rf ~", "$(...)", quotes or a newline) is never pasted: the command refers to the
// trial's environment variable that holds it, quoted for the spot it stands in (bare, in
// double or single quotes, inside $( ) or backquotes, or in a heredoc), and the shell expands a
// variable without parsing its value again. In a heredoc with a quoted delimiter nothing is
// expanded, so the value is pasted there and must not hold the delimiter line. What this
// cannot protect is a value pasted into a string that another interpreter parses (sh -c '...',
// python3 -c "...", eval): warnings names those spots.
func (t *cmdTemplate) expand(vars, envs map[string]string) (string, error) {
	if len(t.sites) == 0 {
		return t.src, nil
	}
	var b strings.Builder
	// shifts[k] is how much longer the output is than src after site k: heredoc bounds move by it
	shifts := make([]int, len(t.sites))
	pos := 0
	for k, s := range t.sites {
		b.WriteString(t.src[pos:s.start])
		val, ok := vars[s.name]
		if !ok {
			return "", unknownPlaceholder(s.name, vars)
		}
		env, isParam := envs[s.name]
		if isParam && len(val) > MaxEnvParam {
			return "", tooLarge(s.name, len(val))
		}
		switch {
		case !isParam || s.state == inDocRaw || (shellSafe.MatchString(val) && s.state != inDoc):
			b.WriteString(val)
		case s.state == inDouble || s.state == inDoc:
			b.WriteString("${" + env + "}")
		case s.state == inSingle:
			b.WriteString(`'"${` + env + `}"'`)
		default:
			b.WriteString(`"${` + env + `}"`)
		}
		pos = s.end
		shifts[k] = b.Len() - pos
	}
	b.WriteString(t.src[pos:])
	out := b.String()
	at := func(off int) int {
		shift := 0
		for k, s := range t.sites {
			if s.end <= off {
				shift = shifts[k]
			}
		}
		return off + shift
	}
	for _, doc := range t.docs {
		for _, line := range strings.Split(out[at(doc.bodyStart):at(doc.bodyEnd)], "\n") {
			if doc.stripTabs {
				line = strings.TrimLeft(line, "\t")
			}
			if line == doc.delim {
				return "", fmt.Errorf("a value put in the heredoc holds the line %q, which would end it early and run the rest as commands; "+
					"use another delimiter, or read the value from its $JIKKEN_PARAM_ variable", doc.delim)
			}
			if dashDrops(line, doc.delim) {
				return "", fmt.Errorf("a line of the heredoc starts with the beginning of its delimiter %q and then a byte beyond ASCII, "+
					"which dash (/bin/sh on Debian and Ubuntu) drops; use another delimiter, or read the value from its $JIKKEN_PARAM_ variable", doc.delim)
			}
		}
	}
	return out, nil
}

// dashDrops reports whether dash would lose a byte of a heredoc line: when a line begins with
// part of the delimiter and goes on with a byte of 0x80 or more, dash's check for the
// delimiter drops that byte ("Eé" arrives as "E\xa9" in a heredoc ended by EOF).
func dashDrops(line, delim string) bool {
	k := 0
	for k < len(line) && k < len(delim) && line[k] == delim[k] {
		k++
	}
	return k > 0 && k < len(line) && line[k] >= 0x80
}

func tooLarge(name string, n int) error {
	return fmt.Errorf("param %s is %s bytes, more than the %d KiB a command line or environment variable can carry; "+
		"use the params file instead of {{%s}} (the trial reads it from $JIKKEN_PARAMS, e.g. jq -r .%s \"$JIKKEN_PARAMS\")",
		name, thousands(n), MaxEnvParam>>10, name, name)
}

// substituteShell replaces placeholders in a command string that sh -c will run; see
// cmdTemplate.expand.
func substituteShell(cmd string, vars, envs map[string]string) (string, error) {
	return parseCmd(cmd).expand(vars, envs)
}

func unknownPlaceholder(name string, vars map[string]string) error {
	known := make([]string, 0, len(vars))
	for k := range vars {
		known = append(known, k)
	}
	sort.Strings(known)
	return fmt.Errorf("{{%s}} is not a param of this matrix; known: %s", name, strings.Join(known, ", "))
}

// ParamString renders a param value for an environment variable, a command or a table cell:
// strings as they are, numbers in their shortest form, anything else as JSON.
func ParamString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
