package live

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jikken-dev/jikken/store"
)

// ChunkBytes bounds a chunk: a feeder holds at most this much of a trial's lines (plus one
// buffer per source) whatever the trial writes, and a trial logging fast costs one store request
// per ChunkBytes of lines, not one a point.
const ChunkBytes = 1 << 20

// maxNotes is how many bad lines an attempt's notes name; the rest are counted.
const maxNotes = 10

// Options configure a Feeder.
type Options struct {
	Runs    store.Runs
	Run     string
	Trial   string
	Attempt int
	Sources []Source
	// Every is how often new points are appended (default 4 s).
	Every time.Duration
	// Resume goes on after the points an earlier feeder of the same attempt stored (a resumed
	// runner taking over an attempt that kept running); without it, they are removed first.
	Resume bool
	// Reported, when set, is called after each append with the number of the last point stored.
	// It must not block for long.
	Reported func(upTo int64)
	// Appended, when set, is called after each append, before Reported, with the points
	// appended (the slice is reused afterwards: copy what is kept).
	Appended func(points []store.LivePoint)
	// Now stamps `::metric` lines that carry no time (default time.Now).
	Now func() time.Time
}

// Feeder appends the points a running attempt writes to the store's live chunks, every Every
// and once more when stopped.
type Feeder struct {
	o       Options
	readers []*reader
	next    int64 // the number the next point gets
	pending []store.LivePoint
	size    int // bytes of lines in pending
	cursor  json.RawMessage

	mu     sync.Mutex // guards notes, bad, lastEr
	notes  []string
	bad    int
	lastEr error

	stop chan struct{}
	done chan struct{}
}

// Start begins feeding: it reads where an earlier feeder stopped (Resume) or clears the
// attempt's chunks, then appends in the background.
func Start(ctx context.Context, o Options) (*Feeder, error) {
	if o.Every <= 0 {
		o.Every = 4 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	f := &Feeder{o: o, next: 1, stop: make(chan struct{}), done: make(chan struct{})}
	for _, s := range o.Sources {
		f.readers = append(f.readers, &reader{src: s, now: o.Now})
	}
	if o.Resume {
		last, cur, err := o.Runs.LiveEnd(ctx, o.Run, o.Trial, o.Attempt)
		if err != nil {
			return nil, fmt.Errorf("live metrics of %s: %w", o.Trial, err)
		}
		var pos map[string]position
		if len(cur) > 0 {
			if err := json.Unmarshal(cur, &pos); err != nil {
				return nil, fmt.Errorf("live metrics of %s: the stored cursor %s: %w", o.Trial, cur, err)
			}
		}
		for _, r := range f.readers {
			r.pos = pos[r.src.Name]
		}
		f.next = last + 1
	} else if err := o.Runs.ClearLive(ctx, o.Run, o.Trial, o.Attempt); err != nil {
		return nil, err
	}
	go f.loop(ctx)
	return f, nil
}

func (f *Feeder) loop(ctx context.Context) {
	defer close(f.done)
	t := time.NewTicker(f.o.Every)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			f.feed(ctx, false)
		}
	}
}

// Stop appends what the sources hold now, the attempt having ended, and returns the notes on
// lines left out and the error of the last append, if it failed. With ctx done it only stops:
// what was not appended is left for a feeder that resumes the attempt.
func (f *Feeder) Stop(ctx context.Context) ([]string, error) {
	close(f.stop)
	<-f.done
	if ctx.Err() == nil {
		f.feed(ctx, true)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	notes := f.notes
	if f.bad > len(f.notes) {
		notes = append(notes, fmt.Sprintf("%d more lines left out of the metrics", f.bad-len(f.notes)))
	}
	return notes, f.lastEr
}

// feed reads the sources and appends chunks until they hold nothing new or an append fails.
func (f *Feeder) feed(ctx context.Context, final bool) {
	for {
		more := false
		// A chunk whose append failed is appended again as it is, not grown: its first try may
		// have reached the store.
		if len(f.pending) == 0 {
			f.size = 0
			var err error
			if more, err = f.fill(final); err != nil {
				f.failed(err)
			}
		}
		if len(f.pending) == 0 {
			if more {
				continue // the budget went on lines left out
			}
			return
		}
		if err := f.o.Runs.AppendLive(ctx, f.o.Run, f.o.Trial, f.o.Attempt, f.pending, f.cursor); err != nil {
			// Kept as it is: the next feed appends the same chunk again.
			f.failed(err)
			return
		}
		up := f.pending[len(f.pending)-1].Seq
		if f.o.Appended != nil {
			f.o.Appended(f.pending)
		}
		f.pending, f.size = f.pending[:0], 0
		f.mu.Lock()
		f.lastEr = nil
		f.mu.Unlock()
		if f.o.Reported != nil {
			f.o.Reported(up)
		}
		if !more {
			return
		}
	}
}

// fill reads the sources into pending up to ChunkBytes and notes the cursor after it; more
// reports that a source has more to read.
func (f *Feeder) fill(final bool) (more bool, err error) {
	for _, r := range f.readers {
		budget := ChunkBytes - f.size
		if budget <= 0 {
			return true, nil
		}
		before := r.pos.Offset
		ms, notes, rmore, err := r.read(budget, final)
		f.note(notes)
		for _, m := range ms {
			f.pending = append(f.pending, store.LivePoint{Seq: f.next, Metric: m})
			f.next++
		}
		f.size += int(r.pos.Offset - before)
		more = more || rmore
		if err != nil {
			return more, fmt.Errorf("read %s: %w", r.src.Name, err)
		}
	}
	pos := make(map[string]position, len(f.readers))
	for _, r := range f.readers {
		pos[r.src.Name] = r.pos
	}
	f.cursor, err = json.Marshal(pos)
	return more, err
}

func (f *Feeder) note(notes []string) {
	if len(notes) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range notes {
		if len(f.notes) < maxNotes {
			f.notes = append(f.notes, n)
		}
	}
	f.bad += len(notes)
}

func (f *Feeder) failed(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastEr = err
}
