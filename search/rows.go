package search

import (
	"cmp"
	"math"
	"reflect"
	"slices"
	"unsafe"
)

// rowCache keeps what tpe derives from each history observation between calls, so that a
// history of 10,000 trials is not decoded from its maps and ranked from its values on every
// suggestion: the internal coordinates of its params, and its rank (rowRank). An entry is
// reused only for the same Params map and the same Values and Constraints arrays (by identity;
// Request says callers do not change a map or array they have passed) with the same Number and
// State in the same position, and only for the same space and objectives: the entries are
// exactly what computing them afresh would give, so a warm cache never changes an answer. The
// cache holds the maps and arrays it saw, which keeps their addresses from being reused by new
// ones.
type rowCache struct {
	space Space
	objs  []Objective
	// One entry per observation in each, apart so that each pass reads only what it needs:
	// keys on every call, ranks for best and the groups, rows for the models.
	keys  []rowKey
	rows  [][]float64
	ranks []rowRank
	// The pending trials' rows by map: those of the last call, and the next call's, filled
	// from them. Pending trials leave the list as they finish, so their positions shift.
	pending, nextPending map[unsafe.Pointer]cachedRow
	pendingView          [][]float64
	// How many entries are failed, are failed or lack a param, and have a Number not above
	// the one before.
	failed, partial, descents int
}

// distinct reports whether the last history's Numbers increase strictly.
func (c *rowCache) distinct() bool { return c.descents == 0 }

// rowKey is what a cache entry was made from: the observation's Number and State and the
// identities of its map and arrays (an empty array counts as nil). The pointers keep the maps
// and arrays alive.
type rowKey struct {
	params              unsafe.Pointer
	values, constraints *float64
	number              int
	nv, nc              int
	state               State
}

func keyOf(o *Observation) rowKey {
	k := rowKey{params: mapPointer(o.Params), number: o.Number, nv: len(o.Values), nc: len(o.Constraints), state: o.State}
	if len(o.Values) > 0 {
		k.values = unsafe.SliceData(o.Values)
	}
	if len(o.Constraints) > 0 {
		k.constraints = unsafe.SliceData(o.Constraints)
	}
	return k
}

// of reports whether k is o's key, field by field: comparing whole keys costs a call.
func (k *rowKey) of(o *Observation) bool {
	return k.number == o.Number && k.params == mapPointer(o.Params) && k.state == o.State &&
		k.nv == len(o.Values) && k.nc == len(o.Constraints) &&
		(k.nv == 0 || k.values == unsafe.SliceData(o.Values)) && (k.nc == 0 || k.constraints == unsafe.SliceData(o.Constraints))
}

// cachedRow is a pending trial's row.
type cachedRow struct {
	params Params
	coords []float64
}

// rowRank is what tpe's best ranks an observation by, with its state and whether its row has
// no NaN (every param present, so that a caller need not look at every coordinate of 10,000
// rows to learn that they are all there).
type rowRank struct {
	v     float64 // score on the first objective, or for an infeasible trial its violation
	class uint8   // class
	state State
	full  bool
}

// partial is 1 for a failed observation or one that lacks a param, else 0.
func (k rowRank) partial() int {
	if k.state == Failed || !k.full {
		return 1
	}
	return 0
}

// coords returns one row per observation (the internal coordinate of each param, NaN where
// the param is absent or its value does not belong to the space) and its rank, and how many
// observations are usable (not failed). The slices are the cache's own, valid until the next
// call; the rows' coordinates are never changed.
func (c *rowCache) coords(sp Space, objs []Objective, g *geometry, hist []Observation) ([][]float64, []rowRank, int) {
	if !reflect.DeepEqual(c.space, sp) || !slices.Equal(c.objs, objs) {
		c.space, c.objs, c.keys, c.rows, c.ranks = cloneSpace(sp), slices.Clone(objs), nil, nil, nil
		c.failed, c.partial, c.descents = 0, 0, 0
		clear(c.pending)
	}
	for len(c.keys) > len(hist) {
		i := len(c.keys) - 1
		c.count(i, -1)
		c.keys, c.rows, c.ranks = c.keys[:i], c.rows[:i], c.ranks[:i]
	}
	for i := range hist {
		o := &hist[i]
		if i < len(c.keys) && c.keys[i].of(o) {
			continue
		}
		key := keyOf(o)
		row := decode(g, o.Params)
		rank := rowRank{class: uint8(class(o)), state: o.State, full: !slices.ContainsFunc(row, math.IsNaN)}
		if rank.class == 2 {
			rank.v = violation(o)
		} else {
			rank.v = score(objs, o, 0)
		}
		if i < len(c.keys) {
			c.count(i, -1)
			c.keys[i], c.rows[i], c.ranks[i] = key, row, rank
		} else {
			c.keys, c.rows, c.ranks = append(c.keys, key), append(c.rows, row), append(c.ranks, rank)
		}
		c.count(i, +1)
	}
	return c.rows, c.ranks, len(hist) - c.failed
}

// count adds (sign +1) or takes away (-1) entry i's part in the counts: failed, partial,
// and the descents between it and its neighbours (an entry's Number not above the one
// before it), so that a call that reuses every entry needs no pass of its own over them.
func (c *rowCache) count(i, sign int) {
	k := c.ranks[i]
	if k.state == Failed {
		c.failed += sign
	}
	c.partial += sign * k.partial()
	if i > 0 && c.keys[i].number <= c.keys[i-1].number {
		c.descents += sign
	}
	// The pair with the next entry counts once: taken away with entry i only when i is
	// replaced in the middle, and given back after.
	if i+1 < len(c.keys) && c.keys[i+1].number <= c.keys[i].number {
		c.descents += sign
	}
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
