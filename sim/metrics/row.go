package metrics

import (
	"strconv"

	"github.com/jikken-dev/jikken/sim"
)

// cells formats the numeric cells of one CSV row into a single buffer and hands them out as
// substrings of one string, so a row costs one allocation instead of one per cell: pods.csv
// and jobs.csv of a million-job run otherwise leave hundreds of megabytes of small strings.
type cells struct {
	buf  []byte
	ends []int
}

func (c *cells) reset() {
	c.buf, c.ends = c.buf[:0], c.ends[:0]
}

func (c *cells) end() { c.ends = append(c.ends, len(c.buf)) }

// secs adds the cell secs(t) writes: seconds with three decimals, empty when t is negative.
func (c *cells) secs(t sim.Time) {
	if t >= 0 {
		c.buf = strconv.AppendFloat(c.buf, t.Seconds(), 'f', 3, 64)
	}
	c.end()
}

// float adds v with prec decimals, or an empty cell when !ok.
func (c *cells) float(v float64, prec int, ok bool) {
	if ok {
		c.buf = strconv.AppendFloat(c.buf, v, 'f', prec, 64)
	}
	c.end()
}

func (c *cells) int(v int) {
	c.buf = strconv.AppendInt(c.buf, int64(v), 10)
	c.end()
}

func (c *cells) quantity(m int64) {
	c.buf = sim.AppendQuantity(c.buf, m)
	c.end()
}

// strings appends the cells to row, in the order they were added.
func (c *cells) strings(row []string) []string {
	s := string(c.buf)
	start := 0
	for _, e := range c.ends {
		row = append(row, s[start:e])
		start = e
	}
	return row
}
