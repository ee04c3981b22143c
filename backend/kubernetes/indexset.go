package kubernetes

import (
	"fmt"
	"strconv"
	"strings"
)

// indexSet is a set of an Indexed Job's completion indexes, as a bitset.
type indexSet []uint64

// parseIndexes reads the API server's form of a set of indexes: "1,3-5,7" (a Job's
// status.completedIndexes and status.failedIndexes).
func parseIndexes(s string) (indexSet, error) {
	var set indexSet
	if s == "" {
		return set, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad index %q in %q", part, s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad index range %q in %q", part, s)
			}
		}
		for i := a; i <= b; i++ {
			set = set.add(i)
		}
	}
	return set, nil
}

func (s indexSet) add(i int) indexSet {
	for len(s) <= i/64 {
		s = append(s, 0)
	}
	s[i/64] |= 1 << (i % 64)
	return s
}

func (s indexSet) has(i int) bool {
	return i >= 0 && i/64 < len(s) && s[i/64]&(1<<(i%64)) != 0
}
