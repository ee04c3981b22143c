package safecsv

import (
	"encoding/csv"
	"io"
	"regexp"
)

// number is a decimal number, which spreadsheets read as a number, not a formula ("-1.5",
// "+3e-2"), or an infinity or NaN as Go and Python write them ("+Inf", "-inf", "NaN"): those
// call nothing, and CSV readers such as pandas read them back as floats.
var number = regexp.MustCompile(`^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))$`)

// trigger reports whether a spreadsheet would evaluate a cell beginning with c.
func trigger(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// Cell returns s as it is safe to put in a CSV cell: s itself, or s after a single quote when it
// would start a formula. A cell that already begins with a quote gets one more, so that Unescape
// gives back exactly s.
func Cell(s string) string {
	if s == "" {
		return s
	}
	switch {
	case s[0] == '\'':
	case trigger(s[0]) && !number.MatchString(s):
	default:
		return s
	}
	return "'" + s
}

// Unescape undoes Cell: it drops the quote Cell adds. A cell Cell did not write is returned as
// it is unless it begins with a quote followed by a formula character or another quote.
func Unescape(s string) string {
	if len(s) >= 2 && s[0] == '\'' && (s[1] == '\'' || trigger(s[1])) {
		return s[1:]
	}
	return s
}

// Writer is a csv.Writer whose every cell goes through Cell.
type Writer struct {
	w   *csv.Writer
	buf []string
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: csv.NewWriter(w)} }

// Write writes one record.
func (w *Writer) Write(record []string) error {
	w.buf = w.buf[:0]
	for _, s := range record {
		w.buf = append(w.buf, Cell(s))
	}
	return w.w.Write(w.buf)
}

// WriteAll writes records and flushes.
func (w *Writer) WriteAll(records [][]string) error {
	for _, r := range records {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	w.w.Flush()
	return w.w.Error()
}

// Flush writes any buffered data.
func (w *Writer) Flush() { w.w.Flush() }

// Error reports an error from an earlier Write or Flush.
func (w *Writer) Error() error { return w.w.Error() }

// ReadAll reads every record from r, undoing Cell in each cell.
func ReadAll(r *csv.Reader) ([][]string, error) {
	recs, err := r.ReadAll()
	for _, rec := range recs {
		for i, s := range rec {
			rec[i] = Unescape(s)
		}
	}
	return recs, err
}

// Read reads one record from r, undoing Cell in each cell.
func Read(r *csv.Reader) ([]string, error) {
	rec, err := r.Read()
	for i, s := range rec {
		rec[i] = Unescape(s)
	}
	return rec, err
}
