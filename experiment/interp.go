package experiment

import (
	"fmt"
	"regexp"
	"strings"
)

// arithmetic is the code of $(( )): an expression, where << is a shift, not a heredoc.
const arithmetic = "arithmetic expansion"

// interpreter is a program that takes code for another language in an argument.
type interpreter struct {
	name *regexp.Regexp
	flag *regexp.Regexp // the option whose argument is code (nil: none)
	kind string         // "shell", "python", ...: chooses the advice
	// all: every argument after the program is code (eval, ssh, watch); first: the first
	// operand is code (awk, sed without -e); stdin: reads a script from stdin when no operand
	// names one.
	all, first, stdin bool
}

var interpreters = []interpreter{
	{name: regexp.MustCompile(`^(sh|bash|dash|zsh|ksh|mksh|ash|yash|busybox|fish|csh|tcsh|su|runuser)$`),
		flag: regexp.MustCompile(`^(-[A-Za-z]*c[A-Za-z]*|--command)$`), kind: "shell", stdin: true},
	{name: regexp.MustCompile(`^(python|pypy)[0-9.]*$`), flag: regexp.MustCompile(`^-[A-Za-z]*c$`), kind: "python", stdin: true},
	{name: regexp.MustCompile(`^perl[0-9.]*$`), flag: regexp.MustCompile(`^-[A-Za-z]*[eE]$`), kind: "perl", stdin: true},
	{name: regexp.MustCompile(`^ruby[0-9.]*$`), flag: regexp.MustCompile(`^-[A-Za-z]*e$`), kind: "ruby", stdin: true},
	{name: regexp.MustCompile(`^(node|nodejs|bun)$`), flag: regexp.MustCompile(`^(-e|-p|-pe|--eval|--print)$`), kind: "node", stdin: true},
	{name: regexp.MustCompile(`^php[0-9.]*$`), flag: regexp.MustCompile(`^-r$`), kind: "php", stdin: true},
	{name: regexp.MustCompile(`^(R|Rscript|julia|osascript|lua[0-9.]*|luajit)$`), flag: regexp.MustCompile(`^-e$`), kind: "program", stdin: true},
	{name: regexp.MustCompile(`^(pwsh|powershell)$`), flag: regexp.MustCompile(`^(-c|-Command)$`), kind: "program", stdin: true},
	{name: regexp.MustCompile(`^(awk|gawk|mawk|nawk)$`), flag: regexp.MustCompile(`^--source$`), kind: "awk", first: true},
	{name: regexp.MustCompile(`^sed$`), flag: regexp.MustCompile(`^(-e|--expression)$`), kind: "sed", first: true},
	{name: regexp.MustCompile(`^(eval|watch)$`), kind: "shell", all: true},
	{name: regexp.MustCompile(`^ssh$`), kind: "ssh", all: true, stdin: true},
}

// optionArgs are options of awk and sed that take the next word as their argument.
var optionArgs = map[string]bool{"-v": true, "-F": true, "-f": true, "--file": true, "-l": true}

func interpreterOf(word string) *interpreter {
	if i := strings.LastIndexByte(word, '/'); i >= 0 {
		word = word[i+1:]
	}
	for i := range interpreters {
		if interpreters[i].name.MatchString(word) {
			return &interpreters[i]
		}
	}
	return nil
}

// codeWord says whether word k of a simple command is code that another interpreter parses,
// and which: the argument of sh -c, python -c, perl -e..., any argument of eval or ssh, the
// program of awk or sed. The interpreter may stand anywhere before it (sudo, env, timeout,
// docker exec ... sh -c).
func codeWord(words []string, k int) (string, string) {
	for i := 0; i < k; i++ {
		in := interpreterOf(words[i])
		if in == nil || i > 0 && words[i-1] == "-e" {
			continue // rsync -e ssh names a program, it does not run it here
		}
		name := words[i]
		if j := strings.LastIndexByte(name, '/'); j >= 0 {
			name = name[j+1:]
		}
		if in.all {
			return name, in.kind
		}
		if in.flag != nil {
			for j := i + 1; j < k; j++ {
				if in.flag.MatchString(words[j]) && j+1 == k {
					return name + " " + words[j], in.kind
				}
			}
		}
		if in.first && firstOperand(append(append([]string{}, words[i+1:k]...), "x")) == k-i-1 && !hasFlag(in, words[i+1:k]) {
			return name, in.kind
		}
	}
	return "", ""
}

// firstOperand is the index of the first word that is not an option or an option's argument.
func firstOperand(args []string) int {
	for j := 0; j < len(args); j++ {
		switch {
		case optionArgs[args[j]]:
			j++
		case strings.HasPrefix(args[j], "-") && args[j] != "-":
		default:
			return j
		}
	}
	return -1
}

func hasFlag(in *interpreter, args []string) bool {
	for _, a := range args {
		if in.flag.MatchString(a) || a == "-f" || a == "--file" {
			return true
		}
	}
	return false
}

// stdinCode says whether a heredoc given to the first of cmds (a pipeline from the command
// with the redirection on) ends up as a script an interpreter reads from stdin: python3 - <<EOF,
// bash <<EOF, cat <<EOF | sh, ssh host <<EOF.
func stdinCode(cmds [][]string) (string, string) {
	for _, words := range cmds {
		for i, w := range words {
			in := interpreterOf(w)
			if in == nil || !in.stdin {
				continue
			}
			name := w[strings.LastIndexByte(w, '/')+1:]
			if in.kind == "ssh" {
				return "ssh (its stdin)", "ssh"
			}
			rest := words[i+1:]
			if op := firstOperand(rest); (op < 0 || rest[op] == "-") && !hasFlag(in, rest) {
				return name + " (its stdin)", in.kind
			}
		}
	}
	return "", ""
}

// advice says how to hand the value of param to code of an interpreter kind.
func advice(kind, param string) string {
	env := ParamEnv(param)
	switch kind {
	case "shell":
		return fmt.Sprintf(`use "$%s" inside it (the variable reaches that shell), or pass the value as an argument: sh -c '... "$1"' sh {{%s}}`, env, param)
	case "python":
		return fmt.Sprintf(`read os.environ["%s"] there, or pass the value as an argument (sys.argv)`, env)
	case "perl":
		return fmt.Sprintf(`read $ENV{%s} there, or pass the value as an argument (@ARGV)`, env)
	case "ruby":
		return fmt.Sprintf(`read ENV["%s"] there, or pass the value as an argument (ARGV)`, env)
	case "node":
		return fmt.Sprintf(`read process.env.%s there, or pass the value as an argument (process.argv)`, env)
	case "awk":
		return fmt.Sprintf(`pass it with -v p="$%s" (or read ENVIRON["%s"])`, env, env)
	case "ssh":
		return "ssh does not carry the environment: send the value on stdin or in a file, or run a script that reads it there"
	}
	return fmt.Sprintf(`read the environment variable %s there, or pass the value as an argument`, env)
}
