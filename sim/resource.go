package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Well-known resource names, interned at fixed indices by NewNames.
const (
	CPU    = "cpu"
	Memory = "memory"
	GPU    = "nvidia.com/gpu"
	PodsR  = "pods"
)

// Fixed indices of the well-known resources in a Resources vector.
const (
	CPUIndex = iota
	MemoryIndex
	GPUIndex
	PodsIndex
)

// MaxResources bounds how many distinct resource names one simulation may use. A fixed array
// keeps the hot path free of maps and allocations; four slots are taken by the well-known names.
const MaxResources = 8

// Milli is the number of milli-units in one unit: every quantity is stored in milli-units, so
// fractional GPUs (500m) and CPUs are exact integers.
const Milli = 1000

// Resources is a vector of quantities in milli-units, indexed by the positions a Names table
// assigns. Memory is in milli-bytes, which keeps one rule for every resource and still leaves
// room for 9 PB per vector entry.
type Resources [MaxResources]int64

// Add adds o to r.
func (r *Resources) Add(o *Resources) {
	for i := range r {
		r[i] += o[i]
	}
}

// Sub subtracts o from r.
func (r *Resources) Sub(o *Resources) {
	for i := range r {
		r[i] -= o[i]
	}
}

// Fits reports whether r is no larger than avail in every dimension.
func (r *Resources) Fits(avail *Resources) bool {
	for i := range r {
		if r[i] > avail[i] {
			return false
		}
	}
	return true
}

// FirstShortfall returns the index of the first dimension where r exceeds avail, or -1.
func (r *Resources) FirstShortfall(avail *Resources) int {
	for i := range r {
		if r[i] > avail[i] {
			return i
		}
	}
	return -1
}

// IsZero reports whether every entry is zero.
func (r *Resources) IsZero() bool { return *r == Resources{} }

// Names interns resource names to vector indices. The well-known names always come first so
// code can use CPUIndex, GPUIndex, ... without a lookup.
type Names struct {
	names []string
	index map[string]int
}

// NewNames returns a table holding cpu, memory, nvidia.com/gpu and pods.
func NewNames() *Names {
	n := &Names{index: map[string]int{}}
	for _, s := range []string{CPU, Memory, GPU, PodsR} {
		n.intern(s)
	}
	return n
}

func (n *Names) intern(s string) int {
	i := len(n.names)
	n.names = append(n.names, s)
	n.index[s] = i
	return i
}

// Index returns the index of name, interning it if new.
func (n *Names) Index(name string) (int, error) {
	if i, ok := n.index[name]; ok {
		return i, nil
	}
	if name == "" {
		return 0, fmt.Errorf("empty resource name")
	}
	if len(n.names) == MaxResources {
		return 0, fmt.Errorf("resource %q: at most %d distinct resources are supported (%s already used); drop an unused extended resource", name, MaxResources, strings.Join(n.names, ", "))
	}
	return n.intern(name), nil
}

// Lookup returns the index of name without interning it.
func (n *Names) Lookup(name string) (int, bool) {
	i, ok := n.index[name]
	return i, ok
}

// Len returns how many names are interned.
func (n *Names) Len() int { return len(n.names) }

// Name returns the name at index i.
func (n *Names) Name(i int) string { return n.names[i] }

// Parse converts a map of Kubernetes quantities ("500m", "16Gi", "2") into a vector. Keys are
// interned in sorted order so the indices never depend on map iteration.
func (n *Names) Parse(q map[string]string) (Resources, error) {
	var r Resources
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i, err := n.Index(k)
		if err != nil {
			return r, err
		}
		v, err := ParseQuantity(q[k])
		if err != nil {
			return r, fmt.Errorf("%s: %w", k, err)
		}
		if v < 0 {
			return r, fmt.Errorf("%s: quantity %q is negative; use zero or a positive amount", k, q[k])
		}
		r[i] = v
	}
	return r, nil
}

// Format renders the non-zero entries of r as name=quantity pairs, in index order.
func (n *Names) Format(r *Resources) string {
	var b strings.Builder
	for i, s := range n.names {
		if r[i] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s)
		b.WriteByte('=')
		b.WriteString(FormatQuantity(r[i]))
	}
	return b.String()
}

// Map renders r as a map of quantities, the inverse of Parse.
func (n *Names) Map(r *Resources) map[string]string {
	m := map[string]string{}
	for i, s := range n.names {
		if r[i] != 0 {
			m[s] = FormatQuantity(r[i])
		}
	}
	return m
}

// ParseQuantity parses a Kubernetes quantity ("1", "0.5", "250m", "16Gi", "1e3") into
// milli-units with Kubernetes' own parser, rounding up as Kubernetes does for sub-milli
// precision.
func ParseQuantity(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty quantity; write a number such as 2, 500m or 16Gi")
	}
	// Kubernetes' parser reads a bare suffix ("Gi") as zero; here that is a typo.
	digits := strings.TrimLeft(s, "+-")
	q, err := resource.ParseQuantity(s)
	if err != nil || digits == "" || !strings.ContainsAny(digits[:1], "0123456789.") {
		return 0, fmt.Errorf("quantity %q is not a Kubernetes quantity; write a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, ...)", s)
	}
	if q.CmpInt64(math.MaxInt64/Milli) > 0 || q.CmpInt64(math.MinInt64/Milli) < 0 {
		return 0, fmt.Errorf("quantity %q is too large", s)
	}
	return q.MilliValue(), nil
}

// FormatQuantity renders milli-units as a plain decimal ("2", "0.5", "17179869184").
func FormatQuantity(m int64) string { return string(AppendQuantity(nil, m)) }

// AppendQuantity appends FormatQuantity(m) to b, for writers of a million rows that format
// without allocating.
func AppendQuantity(b []byte, m int64) []byte {
	if m%Milli == 0 {
		return strconv.AppendInt(b, m/Milli, 10)
	}
	n := len(b)
	b = strconv.AppendFloat(b, float64(m)/Milli, 'f', 3, 64)
	for len(b) > n && b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	for len(b) > n && b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	return b
}

// FromUnits converts a float amount of units to milli-units, rounding up.
func FromUnits(u float64) int64 { return int64(math.Ceil(u*Milli - 1e-9)) }
