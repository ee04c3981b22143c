package live

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/jikken-dev/jikken/track"
)

// MaxLine is the longest line a source reads as a metric. A longer line is left out and noted,
// without ever being held whole: a trial printing megabytes without a newline costs the feeder
// no more memory than a short one.
const MaxLine = 64 << 10

// minBuffer is the smallest buffer a reader reads with.
const minBuffer = 4 << 10

// Kind says how a source's lines are read.
type Kind int

const (
	// Metrics is a metrics.jsonl file: every non-blank line is a metric; a last line without its
	// newline is still being written and is read once it has one (or never, as ReadMetrics leaves
	// out a torn last line).
	Metrics Kind = iota
	// Stdout is a log in which `::metric name=value [step=N]` lines are metrics and every other
	// line is ignored; a point has the time it was read when the line gives none.
	Stdout
)

// Source is a file a trial appends to while it runs.
type Source struct {
	// Name identifies the source in notes and in the cursor stored with each chunk.
	Name string
	Path string
	Kind Kind
}

// position is how far a source has been read: Offset bytes, which hold Line lines, and whether
// the line after them is too long and is being skipped to its end.
type position struct {
	Offset int64 `json:"offset"`
	Line   int64 `json:"line"`
	Skip   bool  `json:"skip,omitempty"`
}

// reader reads the new complete lines of one source.
type reader struct {
	src Source
	pos position
	buf []byte
	now func() time.Time
}

// read parses the complete lines after r.pos, reading at most budget bytes, and returns the
// metrics, the notes on bad lines, and whether it stopped for the budget (more may be there).
// With final, the source has stopped growing: a Stdout source's last line counts without its
// newline.
func (r *reader) read(budget int, final bool) (ms []track.Metric, notes []string, more bool, err error) {
	f, err := os.Open(r.src.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	// Most trials print a few lines: the buffer starts at what the file holds (a page at least)
	// rather than at the budget, and grows when a line does not fit in it. Holding a whole
	// budget for each attempt made the allocations of a run of short trials almost all this.
	full := max(budget, MaxLine+1)
	if cap(r.buf) < full {
		size := full
		if st, err := f.Stat(); err == nil {
			size = min(full, max(int(st.Size()-r.pos.Offset)+1, minBuffer))
		}
		if size > cap(r.buf) {
			r.buf = make([]byte, 0, size)
		}
	}
	read := 0
	for read < budget {
		n, err := f.ReadAt(r.buf[:cap(r.buf)], r.pos.Offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return ms, notes, false, err
		}
		data := r.buf[:n]
		short := n < cap(r.buf) // the end of what the file holds now
		if !short && cap(r.buf) < full && bytes.IndexByte(data, '\n') < 0 {
			// A line longer than the buffer: read it again with a larger one.
			r.buf = make([]byte, 0, min(2*cap(r.buf), full))
			continue
		}
		for {
			if read >= budget {
				return ms, notes, true, nil
			}
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			line := data[:i]
			data = data[i+1:]
			r.pos.Offset += int64(i + 1)
			read += i + 1
			r.pos.Line++
			if r.pos.Skip {
				r.pos.Skip = false
				continue
			}
			m, note, ok := r.parse(line)
			if note != "" {
				notes = append(notes, note)
			}
			if ok {
				ms = append(ms, m)
			}
		}
		if len(data) > 0 && (r.pos.Skip || len(data) > MaxLine) {
			// No newline within MaxLine: the line is skipped to its end, never held whole.
			if !r.pos.Skip {
				notes = append(notes, fmt.Sprintf("%s line %d: longer than %d KiB, left out", r.src.Name, r.pos.Line+1, MaxLine>>10))
			}
			r.pos.Skip = true
			r.pos.Offset += int64(len(data))
			read += len(data)
			data = nil
		}
		if short {
			if final && len(data) > 0 && r.src.Kind == Stdout {
				r.pos.Offset += int64(len(data))
				r.pos.Line++
				m, note, ok := r.parse(data)
				if note != "" {
					notes = append(notes, note)
				}
				if ok {
					ms = append(ms, m)
				}
			}
			return ms, notes, false, nil
		}
	}
	return ms, notes, true, nil
}

// parse reads one line of the source: a metric, or a note on why a line meant as one is left
// out ("" for a log line that is no metric).
func (r *reader) parse(line []byte) (track.Metric, string, bool) {
	switch r.src.Kind {
	case Stdout:
		if !bytes.Contains(line, []byte("::metric ")) {
			return track.Metric{}, "", false
		}
		m, ok := track.ParseStdoutMetric(string(line))
		if !ok {
			if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("::metric ")) {
				return track.Metric{}, "", false
			}
			return m, fmt.Sprintf("%s line %d: not a `::metric name=value [step=N]` line, left out", r.src.Name, r.pos.Line), false
		}
		if m.TS == 0 {
			m.TS = r.now().UnixMilli()
		}
		return m, "", true
	default:
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return track.Metric{}, "", false
		}
		m, err := track.ParseMetricLine(line)
		if err != nil {
			return m, fmt.Sprintf("%s line %d: %v, left out", r.src.Name, r.pos.Line, err), false
		}
		return m, "", true
	}
}
