package sim

import (
	"testing"
	"unsafe"
)

// A run of a million jobs holds a million pods; 384 bytes is an allocation class, 392 would
// take 416. A new field should find room in padding or accept the cost knowingly.
func TestPodSize(t *testing.T) {
	if s := unsafe.Sizeof(Pod{}); s > 384 {
		t.Errorf("a Pod takes %d bytes, more than 384", s)
	}
}
