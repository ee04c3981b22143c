package k8stest

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// The control plane's ports differ from each other and lie below the kernel's ephemeral range,
// from which ports were handed out twice (etcd and the API server once got the same one).
func TestFreePortsAreDistinctAndNotEphemeral(t *testing.T) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			low, _ = strconv.Atoi(f[0])
		}
	}
	seen := map[string]bool{}
	for _, p := range freePorts(t, 300) {
		n, err := strconv.Atoi(p)
		if err != nil || n >= low || n < 1024 {
			t.Errorf("port %s is not below the ephemeral range (from %d)", p, low)
		}
		if seen[p] {
			t.Errorf("port %s handed out twice", p)
		}
		seen[p] = true
	}
}
