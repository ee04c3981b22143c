package search

import (
	"cmp"
	"math"
	"reflect"
	"slices"
	"unsafe"
)

// rowCache keeps the internal coordinates of history observations between calls, so that a
// history of 10,000 trials is not decoded from its maps on every suggestion. An entry is reused
// only for the same Params map (by identity; Request says callers do not change a map they
// have passed) in the same position with the same Number, and only for the same space: the
// rows are exactly what decoding would give, so a warm cache never changes an answer. The
// cache holds the maps it saw, which keeps their addresses from being reused by new maps.
type rowCache struct {
	space Space
	rows  []cachedRow
	// The pending trials' rows by map: those of the last call, and the next call's, filled
	// from them. Pending trials leave the list as they finish, so their positions shift.
	pending, nextPending map[unsafe.Pointer]cachedRow
	pendingView          [][]float64
}

type cachedRow struct {
	params Params
	number int
	coords []float64
	full   bool // no NaN in coords: every param present
}

// coords returns one row per observation: the internal coordinate of each param, NaN where
// the param is absent or its value does not belong to the space, and whether the row has no
// NaN (so that a caller need not look at every coordinate of 10,000 rows to learn that they
// are all present). The slice is the cache's own, valid until the next call; the rows'
// coordinates are never changed.
func (c *rowCache) coords(sp Space, g *geometry, hist []Observation) []cachedRow {
	if !reflect.DeepEqual(c.space, sp) {
		c.space, c.rows = cloneSpace(sp), nil
		clear(c.pending)
	}
	if len(c.rows) > len(hist) {
		c.rows = c.rows[:len(hist)]
	}
	for i := range hist {
		o := &hist[i]
		if i < len(c.rows) && c.rows[i].number == o.Number && sameMap(c.rows[i].params, o.Params) {
			continue
		}
		row := cachedRow{params: o.Params, number: o.Number, coords: decode(g, o.Params)}
		row.full = !slices.ContainsFunc(row.coords, math.IsNaN)
		if i < len(c.rows) {
			c.rows[i] = row
		} else {
			c.rows = append(c.rows, row)
		}
	}
	return c.rows
}

// pendingCoords returns the rows of the pending trials' params, as coords does for the
// history, reusing those of the last call's pending trials. Call it after coords, which
// checks the space.
func (c *rowCache) pendingCoords(g *geometry, pending []Params) [][]float64 {
	if c.pending == nil {
		c.pending, c.nextPending = map[unsafe.Pointer]cachedRow{}, map[unsafe.Pointer]cachedRow{}
	}
	out := c.pendingView[:0]
	for _, ps := range pending {
		key := mapPointer(ps)
		row, ok := c.pending[key]
		if !ok {
			row = cachedRow{params: ps, coords: decode(g, ps)}
		}
		c.nextPending[key] = row
		out = append(out, row.coords)
	}
	c.pending, c.nextPending = c.nextPending, c.pending
	clear(c.nextPending)
	c.pendingView = out
	return out
}

// byNumber returns hist in Number order (stable), for reading only: hist itself when it is in
// that order already, as a runner passes it, so that a history of 10,000 trials is neither
// copied nor sorted on every suggestion; otherwise a sorted copy.
func byNumber(hist []Observation) []Observation {
	for i := 1; i < len(hist); i++ {
		if hist[i].Number < hist[i-1].Number {
			hist = slices.Clone(hist)
			slices.SortStableFunc(hist, func(a, b Observation) int { return cmp.Compare(a.Number, b.Number) })
			return hist
		}
	}
	return hist
}

// cloneSpace copies the slices of a space so that a caller reusing its own does not change the
// cache's key behind its back.
func cloneSpace(sp Space) Space {
	ps := make([]Param, len(sp.Params))
	for i, p := range sp.Params {
		p.Choices = append([]any(nil), p.Choices...)
		if p.When != nil {
			w := *p.When
			w.Values = append([]any(nil), w.Values...)
			p.When = &w
		}
		ps[i] = p
	}
	return Space{Params: ps}
}

// sameMap reports whether a and b are the same map. A map value is a pointer to the map's
// header, so comparing those pointers is what reflect's UnsafePointer does, without its cost
// (a few per cent of a suggestion from 10,000 trials went to reflect here).
func sameMap(a, b Params) bool { return mapPointer(a) == mapPointer(b) }

func mapPointer(m Params) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&m)) }

// decode is the row of one set of params; a param present but inactive (its condition does not
// hold) counts as absent.
func decode(g *geometry, ps Params) []float64 {
	row := make([]float64, len(g.dims))
	for i := range g.dims {
		row[i] = math.NaN()
	}
	for _, i := range g.order {
		d := &g.dims[i]
		v, ok := ps[d.p.Name]
		if !ok {
			continue
		}
		if d.parent >= 0 {
			pc := row[d.parent]
			if math.IsNaN(pc) || !d.when[int(pc)] {
				continue
			}
		}
		if t, ok := d.coord(v); ok {
			if d.p.Kind != Categorical {
				t = min(max(t, d.lo), d.hi) // a value from an older, wider space
			}
			row[i] = t
		}
	}
	return row
}
