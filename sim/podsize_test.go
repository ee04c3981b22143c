package sim

import (
	"testing"
	"unsafe"
)

// A run of a million jobs holds a million pods, so a Pod's size is an allocation class and a
// new field should find room in padding or accept the cost knowingly. 448 bytes: the placement
// constraints of issue 20 (host ports, pod affinity and anti-affinity, topology spread) took
// 64 bytes over 384; the next class up, 480, would cost 32 MB more on a million pods.
func TestPodSize(t *testing.T) {
	if s := unsafe.Sizeof(Pod{}); s > 448 {
		t.Errorf("a Pod takes %d bytes, more than 448", s)
	}
}
