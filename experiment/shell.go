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

// shellSafe matches values a shell reads as one plain word wherever they stand, inside or
// outside quotes: no quote, no $, no backquote, no backslash, no space, no glob or operator.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// quoteState is where a position in a shell command stands.
type quoteState uint8

const (
	bare quoteState = iota
	inSingle
	inDouble
)

// substituteShell replaces placeholders in a command string that sh -c will run. A value made
// only of characters a shell takes literally is pasted as it is, so the command reads as
// written; any other value (a param holding "; rm -rf ~", "$(...)", quotes or a newline) is
// never pasted: the command refers to the trial's environment variable that holds it, quoted
// for the spot it stands in. The shell expands a variable without parsing its value again, so
// no param can run a command, whatever quotes surround the placeholder.
func substituteShell(cmd string, vars, envs map[string]string) (string, error) {
	locs := placeholder.FindAllStringSubmatchIndex(cmd, -1)
	if len(locs) == 0 {
		return cmd, nil
	}
	var b strings.Builder
	state, pos := bare, 0
	for _, loc := range locs {
		state = scanQuotes(cmd[pos:loc[0]], state)
		b.WriteString(cmd[pos:loc[0]])
		name := cmd[loc[2]:loc[3]]
		val, ok := vars[name]
		if !ok {
			return "", unknownPlaceholder(name, vars)
		}
		switch env, isParam := envs[name]; {
		case shellSafe.MatchString(val) || !isParam:
			b.WriteString(val)
		case state == inDouble:
			b.WriteString("${" + env + "}")
		case state == inSingle:
			b.WriteString(`'"${` + env + `}"'`)
		default:
			b.WriteString(`"${` + env + `}"`)
		}
		pos = loc[1]
	}
	b.WriteString(cmd[pos:])
	return b.String(), nil
}

// scanQuotes returns the quoting state after s, starting in state.
func scanQuotes(s string, state quoteState) quoteState {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch state {
		case bare:
			switch c {
			case '\\':
				i++
			case '\'':
				state = inSingle
			case '"':
				state = inDouble
			}
		case inSingle:
			if c == '\'' {
				state = bare
			}
		case inDouble:
			switch c {
			case '\\':
				i++
			case '"':
				state = bare
			}
		}
	}
	return state
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
