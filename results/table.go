// Package results turns a run's trial records into one long table (a row per trial) that people
// read and the analysis commands consume, and reads the same table back from CSV.
package results

import (
	"encoding/csv"
	"fmt"
	"io"

	"github.com/jikken-dev/jikken/internal/safecsv"
)

// Table is a rectangular table of strings with named columns. Numbers keep the text they were
// written with, so nothing is rounded on the way to a CSV file and back.
type Table struct {
	Columns []string
	Rows    [][]string
}

// Col returns the index of the column named name, or -1.
func (t *Table) Col(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// ReadCSV reads a table with a header line. name is used in error messages.
func ReadCSV(r io.Reader, name string) (*Table, error) {
	recs, err := safecsv.ReadAll(csv.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("read %s: empty file; want a header line and one row per trial", name)
	}
	return &Table{Columns: recs[0], Rows: recs[1:]}, nil
}

// WriteCSV writes the table with a header line, its cells safe to open in a spreadsheet
// (safecsv; ReadCSV undoes it).
func (t *Table) WriteCSV(w io.Writer) error {
	cw := safecsv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return err
	}
	if err := cw.WriteAll(t.Rows); err != nil {
		return err
	}
	return cw.Error()
}
