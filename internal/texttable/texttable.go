// Package texttable lays out text in aligned columns by display width, so that names in
// Chinese, Japanese or Korean (two terminal columns a character) line up as Latin ones do;
// text/tabwriter counts them as one column each and misaligns every row after them.
package texttable

import (
	"io"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// Table holds rows of cells until Write lays them out.
type Table struct {
	rows [][]string
}

// Row adds a row.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Write writes the rows left-aligned, each column as wide as its widest cell plus two spaces;
// the last cell of a row is not padded (as text/tabwriter with padding 2 lays out a row).
func (t *Table) Write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r[:max(0, len(r)-1)] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], Width(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-Width(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Width is the number of terminal columns s takes: two for East Asian wide and fullwidth
// characters, none for combining marks and format characters, one for the rest.
func Width(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case r < 0x1100:
			n++
		default:
			if k := width.LookupRune(r).Kind(); k == width.EastAsianWide || k == width.EastAsianFullwidth {
				n += 2
			} else {
				n++
			}
		}
	}
	return n
}
