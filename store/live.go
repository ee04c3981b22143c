package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/track"
)

// Live metrics: while an attempt runs, the points it logs are appended to the store in chunks,
//
//	runs/<run>/trials/<trial>/live/<attempt>/<last>.jsonl
//
// one object a chunk, written once by a single PUT (or temp + rename). A chunk is a header line,
// {"live":1,"first":F,"last":L,"cursor":...}, then its points F..L, one a line, numbered without
// gaps from 1 for each attempt. <last> is L zero-padded to 12 digits, so keys sort in sequence
// order and "the points after N" are the chunks listed after the key of N (S3's start-after):
// a reader that polls pays one listing and reads only chunks it has not seen.
//
// The final metrics.jsonl stays the source of truth; the live chunks are what a reader can see
// before it exists, and hold the same points in the order the writer read them. Each attempt has
// its own chunks; the trial's curve is its last attempt's.

// LivePoint is one metric point of a running attempt, numbered in the order it was read.
type LivePoint struct {
	Seq int64
	track.Metric
}

type livePointJSON struct {
	Seq   int64           `json:"seq"`
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
	Step  *int64          `json:"step,omitempty"`
	TS    int64           `json:"ts,omitempty"`
}

// MarshalJSON writes the point as a metrics.jsonl line with its "seq" (NaN and infinities as
// strings). It is written by hand: a feeder encodes every point a trial logs.
func (p LivePoint) MarshalJSON() ([]byte, error) {
	name, err := json.Marshal(p.Name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64+len(name))
	b = strconv.AppendInt(append(b, `{"seq":`...), p.Seq, 10)
	b = append(append(b, `,"name":`...), name...)
	b = append(append(b, `,"value":`...), record.EncodeFloat(p.Value)...)
	if p.Step != nil {
		b = strconv.AppendInt(append(b, `,"step":`...), *p.Step, 10)
	}
	if p.TS != 0 {
		b = strconv.AppendInt(append(b, `,"ts":`...), p.TS, 10)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *LivePoint) UnmarshalJSON(b []byte) error {
	var pj livePointJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return err
	}
	m, err := track.ParseMetricLine(b)
	if err != nil {
		return err
	}
	*p = LivePoint{Seq: pj.Seq, Metric: m}
	return nil
}

// liveHeader is a chunk's first line.
type liveHeader struct {
	Live  int   `json:"live"`
	First int64 `json:"first"`
	Last  int64 `json:"last"`
	// Cursor is the writer's own note of where its sources stood after Last, kept so that a
	// writer taking over a running attempt (a resumed runner) goes on from there.
	Cursor json.RawMessage `json:"cursor,omitempty"`
}

// LivePrefix is the folder of an attempt's live chunks, with a trailing slash.
func LivePrefix(run, trial string, attempt int) string {
	return TrialKey(run, trial, path.Join("live", strconv.Itoa(attempt))) + "/"
}

// liveName is the key of the chunk whose last point is last, under its attempt's prefix.
func liveName(last int64) string { return fmt.Sprintf("%012d.jsonl", last) }

// AppendLive stores the next chunk of an attempt's live points: pts numbered without gaps,
// following the last chunk stored (a single writer per attempt keeps that order). cursor is
// stored with it for LiveEnd. Storing the same chunk again replaces it with itself, so a writer
// retries a failed append as it is.
func (r Runs) AppendLive(ctx context.Context, run, trial string, attempt int, pts []LivePoint, cursor json.RawMessage) error {
	if len(pts) == 0 {
		return errors.New("append live points: empty chunk")
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].Seq != pts[i-1].Seq+1 {
			return fmt.Errorf("append live points: point %d follows %d", pts[i].Seq, pts[i-1].Seq)
		}
	}
	first, last := pts[0].Seq, pts[len(pts)-1].Seq
	if first < 1 {
		return fmt.Errorf("append live points: sequence numbers start at 1, not %d", first)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(liveHeader{Live: 1, First: first, Last: last, Cursor: cursor}); err != nil {
		return err
	}
	for _, p := range pts {
		line, err := p.MarshalJSON()
		if err != nil {
			return fmt.Errorf("append live point %d: %w", p.Seq, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	key := LivePrefix(run, trial, attempt) + liveName(last)
	if err := r.Blob.Put(ctx, key, bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
		return fmt.Errorf("append live points %d-%d of %s: %w", first, last, trial, err)
	}
	return nil
}

// LiveAfter calls fn with the live points of an attempt numbered after after, in order, and
// returns the number of the last one it gave (after when none). It reads only the chunks that
// hold such points. It stops before a gap in the numbers, so that a reader that asks again
// after what it got never skips a point, and at a chunk removed while it reads (ClearLive).
func (r Runs) LiveAfter(ctx context.Context, run, trial string, attempt int, after int64, fn func(LivePoint) error) (int64, error) {
	prefix := LivePrefix(run, trial, attempt)
	var keys []string
	err := ListAfter(ctx, r.Blob, prefix, prefix+liveName(max(after, 0)), func(in Info) error {
		if isLiveName(strings.TrimPrefix(in.Key, prefix)) {
			keys = append(keys, in.Key)
		}
		return nil
	})
	if err != nil {
		return after, fmt.Errorf("list live points of %s: %w", trial, err)
	}
	for _, key := range keys {
		h, pts, err := r.readChunk(ctx, key)
		if errors.Is(err, ErrNotFound) {
			return after, nil
		}
		if err != nil {
			return after, err
		}
		if h.First > after+1 {
			return after, nil
		}
		for _, p := range pts {
			if p.Seq <= after {
				continue
			}
			if err := fn(p); err != nil {
				return after, err
			}
			after = p.Seq
		}
	}
	return after, nil
}

// isLiveName reports whether name is a chunk's name (not a temporary file or another tool's).
func isLiveName(name string) bool {
	digits, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || len(digits) < 12 {
		return false
	}
	_, err := strconv.ParseUint(digits, 10, 63)
	return err == nil
}

// readChunk reads one chunk object.
func (r Runs) readChunk(ctx context.Context, key string) (liveHeader, []LivePoint, error) {
	var h liveHeader
	data, err := ReadAll(ctx, r.Blob, key)
	if err != nil {
		return h, nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	if !sc.Scan() {
		return h, nil, fmt.Errorf("live chunk %s: empty", key)
	}
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Live != 1 {
		return h, nil, fmt.Errorf("live chunk %s: not a chunk header: %q", key, sc.Bytes())
	}
	pts := make([]LivePoint, 0, h.Last-h.First+1)
	for sc.Scan() {
		var p LivePoint
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return h, nil, fmt.Errorf("live chunk %s: point %d: %w", key, h.First+int64(len(pts)), err)
		}
		pts = append(pts, p)
	}
	if err := sc.Err(); err != nil {
		return h, nil, fmt.Errorf("live chunk %s: %w", key, err)
	}
	if int64(len(pts)) != h.Last-h.First+1 || (len(pts) > 0 && pts[0].Seq != h.First) {
		return h, nil, fmt.Errorf("live chunk %s: holds %d points, its header says %d-%d", key, len(pts), h.First, h.Last)
	}
	return h, pts, nil
}

// LiveEnd returns the number of the last live point stored for an attempt (0 when none) and the
// cursor stored with it, for a writer that takes over the attempt.
func (r Runs) LiveEnd(ctx context.Context, run, trial string, attempt int) (int64, json.RawMessage, error) {
	prefix := LivePrefix(run, trial, attempt)
	last := ""
	err := r.Blob.List(ctx, prefix, func(in Info) error {
		if isLiveName(strings.TrimPrefix(in.Key, prefix)) {
			last = in.Key
		}
		return nil
	})
	if err != nil || last == "" {
		return 0, nil, err
	}
	h, _, err := r.readChunk(ctx, last)
	if err != nil {
		return 0, nil, err
	}
	return h.Last, h.Cursor, nil
}

// LiveAttempts lists the attempts of a trial that have live points, in order.
func (r Runs) LiveAttempts(ctx context.Context, run, trial string) ([]int, error) {
	var out []int
	err := ListDirs(ctx, r.Blob, TrialKey(run, trial, "live")+"/", func(name string) error {
		if n, err := strconv.Atoi(name); err == nil && n > 0 {
			out = append(out, n)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// ClearLive removes an attempt's live points: a writer starting an attempt afresh removes what an
// earlier start of the same attempt number left, whose outputs are gone with it.
func (r Runs) ClearLive(ctx context.Context, run, trial string, attempt int) error {
	prefix := LivePrefix(run, trial, attempt)
	var keys []string
	if err := r.Blob.List(ctx, prefix, func(in Info) error {
		keys = append(keys, in.Key)
		return nil
	}); err != nil {
		return fmt.Errorf("clear live points of %s: %w", trial, err)
	}
	for _, k := range keys {
		if err := r.Blob.Delete(ctx, k); err != nil {
			return fmt.Errorf("clear live points of %s: %w", trial, err)
		}
	}
	return nil
}

// latestLookBack is how many chunks LiveLatest reads back from the last one at most.
const latestLookBack = 8

// LiveLatest returns the last live point named name of an attempt; with name "", the name of
// its first point (what the trial logged first: its primary metric). It reads the first chunk
// (for "") and the chunks from the last one back, at most latestLookBack of them, so it costs
// a few requests however long the attempt ran; ok is false when it found none.
func (r Runs) LiveLatest(ctx context.Context, run, trial string, attempt int, name string) (p LivePoint, ok bool, err error) {
	prefix := LivePrefix(run, trial, attempt)
	var keys []string
	if err := r.Blob.List(ctx, prefix, func(in Info) error {
		if isLiveName(strings.TrimPrefix(in.Key, prefix)) {
			keys = append(keys, in.Key)
		}
		return nil
	}); err != nil || len(keys) == 0 {
		return p, false, err
	}
	if name == "" {
		_, pts, err := r.readChunk(ctx, keys[0])
		if err != nil || len(pts) == 0 {
			return p, false, err
		}
		name = pts[0].Name
	}
	for i := len(keys) - 1; i >= 0 && i >= len(keys)-latestLookBack; i-- {
		_, pts, err := r.readChunk(ctx, keys[i])
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return p, false, err
		}
		for j := len(pts) - 1; j >= 0; j-- {
			if pts[j].Name == name {
				return pts[j], true, nil
			}
		}
	}
	return p, false, nil
}
