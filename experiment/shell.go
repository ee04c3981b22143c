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

// parseCmd reads a cmd template as a POSIX shell would tokenize it: quotes, backslashes,
// comments, $( ), backquotes, $(( )), heredocs, and the words of each simple command (to see
// which interpreter a word is handed to). It never fails: what it cannot read (an unclosed
// quote) the shell will refuse at run time.
func parseCmd(src string) *cmdTemplate {
	sc := &scanner{t: &cmdTemplate{src: src}, at: map[int][]int{}}
	for _, loc := range placeholder.FindAllStringSubmatchIndex(src, -1) {
		sc.at[loc[0]] = loc
	}
	sc.commands(0, "", "")
	// A placeholder the reading passed over (in a heredoc's delimiter word, say) is still
	// replaced, as if it stood bare.
	seen := make(map[int]bool, len(sc.t.sites))
	for _, st := range sc.t.sites {
		seen[st.start] = true
	}
	for start, loc := range sc.at {
		if !seen[start] {
			sc.t.sites = append(sc.t.sites, site{start: loc[0], end: loc[1], name: src[loc[2]:loc[3]]})
		}
	}
	sort.Slice(sc.t.sites, func(i, j int) bool { return sc.t.sites[i].start < sc.t.sites[j].start })
	return sc.t
}

type scanner struct {
	t       *cmdTemplate
	i       int
	at      map[int][]int // placeholder start -> its submatch indexes
	pending []*pendingDoc // heredocs whose bodies begin after the next newline
}

type pendingDoc struct {
	doc        *heredoc
	raw        bool
	code, kind string
	level      *level
	pipeFrom   int // the command of the pipeline that has the redirection
}

// level is one command list: the whole cmd, or the inside of $( ) or backquotes.
type level struct {
	code, kind string     // inherited: the whole list is code for another interpreter
	words      []string   // the words of the current simple command so far
	cur        []byte     // the word being read
	inWord     bool       // cur has begun
	target     bool       // the next word is a redirection's file
	pipeline   [][]string // the simple commands of the current pipeline before this one
}

func (l *level) endWord() {
	switch {
	case l.inWord && l.target:
		l.target = false // a redirection's file is not an argument
	case l.inWord:
		l.words = append(l.words, string(l.cur))
	}
	l.cur, l.inWord = l.cur[:0], false
}

// endCommand closes the simple command; pipe keeps the pipeline going.
func (l *level) endCommand(pipe bool) {
	l.endWord()
	if pipe {
		l.pipeline = append(l.pipeline, l.words)
	} else {
		l.pipeline = nil
	}
	l.words = nil
}

// codeHere says which interpreter parses the word now being read, if any.
func (l *level) codeHere() (string, string) {
	if l.code != "" {
		return l.code, l.kind
	}
	return codeWord(l.words, len(l.words))
}

func (sc *scanner) placeholderAt(state quoteState, code, kind string) bool {
	loc, ok := sc.at[sc.i]
	if !ok {
		return false
	}
	sc.t.sites = append(sc.t.sites, site{start: loc[0], end: loc[1], name: sc.t.src[loc[2]:loc[3]], state: state, code: code, kind: kind})
	sc.i = loc[1]
	return true
}

// commands reads a command list until the byte end (')' or '`'; 0: the end of the string).
// code is set when the list itself is a string another interpreter parses.
func (sc *scanner) commands(end byte, code, kind string) {
	s := sc.t.src
	l := &level{code: code, kind: kind}
	depth := 0 // unbalanced '(' of subshells and case patterns inside this list
	for sc.i < len(s) {
		if sc.at[sc.i] != nil {
			cd, kd := l.codeHere()
			sc.placeholderAt(bare, cd, kd)
			l.cur, l.inWord = append(l.cur, '$'), true
			continue
		}
		c := s[sc.i]
		if end != 0 && c == end && depth == 0 {
			sc.i++
			return
		}
		switch {
		case c == '\\' && sc.at[sc.i+1] != nil:
			sc.i++ // a placeholder is never escaped: it is replaced
		case c == '\\':
			if sc.i+1 < len(s) && s[sc.i+1] != '\n' {
				l.cur, l.inWord = append(l.cur, s[sc.i+1]), true
			}
			sc.i += 2
		case c == '\'':
			sc.i++
			cd, kd := l.codeHere()
			l.inWord = true
			l.cur = append(l.cur, sc.single(cd, kd)...)
		case c == '"':
			sc.i++
			cd, kd := l.codeHere()
			l.inWord = true
			l.cur = append(l.cur, sc.double(cd, kd)...)
		case c == '`' || c == '$' && strings.HasPrefix(s[sc.i:], "$("):
			cd, kd := l.codeHere()
			sc.substitution(cd, kd)
			l.cur, l.inWord = append(l.cur, '$'), true
		case c == '#' && !l.inWord:
			for sc.i < len(s) && s[sc.i] != '\n' {
				if !sc.placeholderAt(bare, "", "") {
					sc.i++
				}
			}
		case c == '\n':
			sc.i++
			sc.bodies()
			l.endCommand(false)
		case c == ' ' || c == '\t':
			sc.i++
			l.endWord()
		case c == '<' && strings.HasPrefix(s[sc.i:], "<<") && !strings.HasPrefix(s[sc.i:], "<<<") && code != arithmetic:
			sc.heredocOp(l)
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			pipe := c == '|' && !strings.HasPrefix(s[sc.i:], "||")
			switch c {
			case '(':
				depth++
			case ')':
				depth = max(0, depth-1)
			}
			sc.i++
			if (c == '&' || c == '|' || c == ';') && sc.i < len(s) && s[sc.i] == c {
				sc.i++
			}
			l.endCommand(pipe)
		case c == '<' || c == '>':
			if l.inWord && strings.Trim(string(l.cur), "0123456789") == "" {
				l.cur, l.inWord = l.cur[:0], false // the fd of 2>&1
			}
			l.endWord()
			for sc.i++; sc.i < len(s) && strings.IndexByte("<>&|", s[sc.i]) >= 0; sc.i++ {
			}
			l.target = true
		default:
			l.cur, l.inWord = append(l.cur, c), true
			sc.i++
		}
	}
}

// substitution reads a command substitution, `...` or $(...), or an arithmetic expansion
// $((...)) that starts at the scanner's position, if one does, and reports whether it did.
// code and kind are those of the word it stands in: the commands inside inherit them.
func (sc *scanner) substitution(code, kind string) bool {
	s := sc.t.src[sc.i:]
	switch {
	case strings.HasPrefix(s, "`"):
		sc.i++
		sc.commands('`', code, kind)
	case strings.HasPrefix(s, "$(("):
		sc.i += 3
		sc.commands(')', arithmetic, "")
		if sc.i < len(sc.t.src) && sc.t.src[sc.i] == ')' {
			sc.i++
		}
	case strings.HasPrefix(s, "$("):
		sc.i += 2
		sc.commands(')', code, kind)
	default:
		return false
	}
	return true
}

// single reads a single-quoted string after its opening quote and returns its text.
func (sc *scanner) single(code, kind string) []byte {
	s := sc.t.src
	var text []byte
	for sc.i < len(s) {
		if sc.placeholderAt(inSingle, code, kind) {
			text = append(text, '$')
			continue
		}
		if s[sc.i] == '\'' {
			sc.i++
			break
		}
		text = append(text, s[sc.i])
		sc.i++
	}
	return text
}

// double reads a double-quoted string after its opening quote and returns its literal text.
func (sc *scanner) double(code, kind string) []byte {
	s := sc.t.src
	var text []byte
	for sc.i < len(s) {
		if sc.placeholderAt(inDouble, code, kind) {
			text = append(text, '$')
			continue
		}
		c := s[sc.i]
		switch {
		case c == '"':
			sc.i++
			return text
		case c == '\\' && sc.at[sc.i+1] == nil && sc.i+1 < len(s):
			text = append(text, s[sc.i+1])
			sc.i += 2
		case sc.substitution(code, kind):
			text = append(text, '$')
		default:
			text = append(text, c)
			sc.i++
		}
	}
	return text
}

// heredocOp reads "<<WORD" or "<<-WORD"; the body is read at the end of the line.
func (sc *scanner) heredocOp(l *level) {
	s := sc.t.src
	l.endWord()
	sc.i += 2
	d := &pendingDoc{doc: &heredoc{}, level: l, pipeFrom: len(l.pipeline)}
	if sc.i < len(s) && s[sc.i] == '-' {
		d.doc.stripTabs = true
		sc.i++
	}
	for sc.i < len(s) && (s[sc.i] == ' ' || s[sc.i] == '\t') {
		sc.i++
	}
	var word []byte
	for sc.i < len(s) && !strings.ContainsRune(" \t\n;&|<>()", rune(s[sc.i])) {
		switch c := s[sc.i]; c {
		case '\'', '"':
			d.raw = true
			end := strings.IndexByte(s[sc.i+1:], c)
			if end < 0 {
				end = len(s) - sc.i - 1
			}
			word = append(word, s[sc.i+1:sc.i+1+end]...)
			sc.i += end + 2
		case '\\':
			d.raw = true
			if sc.i+1 < len(s) {
				word = append(word, s[sc.i+1])
			}
			sc.i += 2
		default:
			word = append(word, c)
			sc.i++
		}
	}
	d.doc.delim = string(word)
	sc.i = min(sc.i, len(s))
	sc.pending = append(sc.pending, d)
}

// bodies reads the bodies of the heredocs opened on the line that just ended, in order.
func (sc *scanner) bodies() {
	docs := sc.pending
	sc.pending = nil
	for _, d := range docs {
		d.code, d.kind = d.level.code, d.level.kind
		if d.code == "" {
			last := append([]string{}, d.level.words...)
			if d.level.inWord {
				last = append(last, string(d.level.cur))
			}
			cmds := append(append([][]string{}, d.level.pipeline[min(d.pipeFrom, len(d.level.pipeline)):]...), last)
			d.code, d.kind = stdinCode(cmds)
		}
		sc.body(d)
	}
}

// body reads one heredoc body, up to and including its delimiter line.
func (sc *scanner) body(d *pendingDoc) {
	s := sc.t.src
	d.doc.bodyStart = sc.i
	for sc.i < len(s) {
		eol := strings.IndexByte(s[sc.i:], '\n')
		if eol < 0 {
			eol = len(s) - sc.i
		}
		line := s[sc.i : sc.i+eol]
		if d.doc.stripTabs {
			line = strings.TrimLeft(line, "\t")
		}
		if line == d.doc.delim {
			d.doc.bodyEnd = sc.i
			sc.i = min(len(s), sc.i+eol+1)
			sc.t.docs = append(sc.t.docs, d.doc)
			return
		}
		for sc.i < len(s) && s[sc.i] != '\n' {
			switch {
			case d.raw:
				if !sc.placeholderAt(inDocRaw, d.code, d.kind) {
					sc.i++
				}
			case sc.placeholderAt(inDoc, d.code, d.kind):
			case s[sc.i] == '\\' && sc.at[sc.i+1] == nil:
				sc.i += 2
			case sc.substitution(d.code, d.kind):
			default:
				sc.i++
			}
		}
		sc.i = min(len(s), sc.i+1)
	}
	d.doc.bodyEnd = len(s) // unterminated: sh warns or fails at run time
	sc.t.docs = append(sc.t.docs, d.doc)
}

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
