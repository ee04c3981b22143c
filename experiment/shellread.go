package experiment

import (
	"sort"
	"strings"
)

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
