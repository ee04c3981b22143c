package experiment

import (
	"sort"
	"strconv"
	"strings"

	"github.com/google/go-jsonnet"
	"github.com/google/go-jsonnet/ast"
	"github.com/google/go-jsonnet/toolutils"
)

// locate gives each problem the line and column of the Jsonnet source that produced the
// value it is about. The evaluated JSON has no positions, so the path of the value (trials[3]
// .timeout, defaults.env, matrix.cmd) is followed through the file's syntax tree: object
// literals, arrays, locals, and objects or arrays joined with +. Where the path leaves what
// the text spells out (a comprehension, a function call, an import), the trial is looked for
// by its literal name below that point, then the field by its name; failing both, the problem
// points at the deepest place the path reached. src is the file's text, file its name.
func locate(file, src string, list []Problem) {
	if len(list) == 0 {
		return
	}
	root, err := jsonnet.SnippetToAST(file, src)
	if err != nil {
		return
	}
	for i := range list {
		p := &list[i]
		path := append(append([]any{}, p.origin...), fieldPath(p.Field)...)
		lc := &locator{env: map[ast.Identifier]ast.Node{}}
		line, col := lc.find(root, path, strings.Trim(p.Trial, `"`))
		p.Line, p.Column = line, col
	}
	// in the order of the file, as a compiler lists them
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	})
}

// Locate returns a problem with field of file, at the line and column of src (the file's text)
// that produced it, as Load places validation problems: for what is found wrong with an
// experiment only once it runs (a search objective no trial logs).
func Locate(file, src, field, msg string) Problem {
	list := []Problem{{File: file, Field: field, Msg: msg}}
	locate(file, src, list)
	return list[0]
}

type locator struct {
	env map[ast.Identifier]ast.Node // locals seen on the way down
}

// find follows path from n and returns the position of the field it ends at.
func (lc *locator) find(n ast.Node, path []any, trial string) (int, int) {
	at := n.Loc().Begin
	for k, key := range path {
		next, pos, ok := lc.step(n, key)
		if !ok {
			if m := lc.search(n, path[k:], trial); m != nil {
				return m.Line, m.Column
			}
			break
		}
		n, at = next, pos
	}
	return at.Line, at.Column
}

// resolve looks through locals and variables bound to them.
func (lc *locator) resolve(n ast.Node) ast.Node {
	for range 100 { // a variable bound to itself must not loop
		switch x := n.(type) {
		case *ast.Local:
			for _, b := range x.Binds {
				lc.env[b.Variable] = b.Body
			}
			n = x.Body
		case *ast.Var:
			v, ok := lc.env[x.Id]
			if !ok {
				return n
			}
			n = v
		case *ast.Parens:
			n = x.Inner
		default:
			return n
		}
	}
	return n
}

// step goes from n to its field or element key, returning where that is written.
func (lc *locator) step(n ast.Node, key any) (ast.Node, ast.Location, bool) {
	n = lc.resolve(n)
	switch x := n.(type) {
	case *ast.DesugaredObject:
		name, isName := key.(string)
		if !isName {
			// matrix[0] of a matrix that is one object, not an array
			return n, n.Loc().Begin, key == 0
		}
		for _, f := range x.Fields {
			if s, ok := f.Name.(*ast.LiteralString); ok && s.Value == name {
				return f.Body, f.LocRange.Begin, true
			}
		}
	case *ast.Array:
		if i, ok := key.(int); ok && i >= 0 && i < len(x.Elements) {
			e := x.Elements[i].Expr
			return e, e.Loc().Begin, true
		}
	case *ast.Binary:
		if x.Op != ast.BopPlus {
			break
		}
		if i, ok := key.(int); ok {
			// arrays joined: the index falls in the left one or, past its length, the right
			if left, ok := lc.resolve(x.Left).(*ast.Array); ok {
				if i < len(left.Elements) {
					return lc.step(left, i)
				}
				return lc.step(x.Right, i-len(left.Elements))
			}
			break
		}
		// objects joined: the right one's field wins
		if m, pos, ok := lc.step(x.Right, key); ok {
			return m, pos, true
		}
		return lc.step(x.Left, key)
	}
	return n, ast.Location{}, false
}

// search looks below n for the object literal of the trial named trial and follows the rest
// of the path's fields from it; or, failing that, for the first field named as the path's
// last name.
func (lc *locator) search(n ast.Node, rest []any, trial string) *ast.Location {
	var fields []any
	for _, k := range rest {
		if s, ok := k.(string); ok {
			fields = append(fields, s)
		}
	}
	var byName, byField *ast.Location
	var visit func(n ast.Node)
	visit = func(n ast.Node) {
		if n == nil || byName != nil {
			return
		}
		if obj, ok := n.(*ast.DesugaredObject); ok {
			if trial != "" && hasLiteral(obj, "name", trial) {
				at := obj.Loc().Begin
				cur := ast.Node(obj)
				for _, f := range fields {
					next, pos, ok := lc.step(cur, f)
					if !ok {
						break
					}
					cur, at = next, pos
				}
				byName = &at
				return
			}
			if len(fields) > 0 && byField == nil {
				last := fields[len(fields)-1].(string)
				for _, f := range obj.Fields {
					if s, ok := f.Name.(*ast.LiteralString); ok && s.Value == last {
						at := f.LocRange.Begin
						byField = &at
					}
				}
			}
		}
		for _, c := range toolutils.Children(n) {
			visit(c)
		}
	}
	visit(n)
	if byName != nil {
		return byName
	}
	return byField
}

func hasLiteral(obj *ast.DesugaredObject, field, value string) bool {
	for _, f := range obj.Fields {
		if s, ok := f.Name.(*ast.LiteralString); ok && s.Value == field {
			v, ok := f.Body.(*ast.LiteralString)
			return ok && v.Value == value
		}
	}
	return false
}

// fieldPath splits a Problem's field ("matrix[1].params.lr", "defaults.env") into path keys.
func fieldPath(field string) []any {
	var out []any
	for _, part := range strings.Split(field, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				break
			}
			if n, err := strconv.Atoi(part[i+1 : i+j]); err == nil {
				out = append(out, n)
			}
			part = part[i+j+1:]
		}
	}
	return out
}
