package kubernetes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/jikken-dev/jikken/experiment"
)

// health: {http: URL} becomes an httpGet probe on the URL's port, path and scheme.
func TestHTTPHealthBecomesAnHTTPGetProbe(t *testing.T) {
	for _, c := range []struct {
		url, path, scheme string
		port              int32
	}{
		{"http://127.0.0.1:8080/healthz?full=1", "/healthz?full=1", "HTTP", 8080},
		{"https://localhost/ready", "/ready", "HTTPS", 443},
		{"http://web", "/", "HTTP", 80},
	} {
		p := probe(&experiment.Health{HTTP: c.url})
		g := p.HTTPGet
		if g == nil || p.Exec != nil || g.Path != c.path || g.Port.IntVal != c.port || g.Scheme != corev1.URIScheme(c.scheme) {
			t.Errorf("%s: probe %+v", c.url, p.ProbeHandler)
		}
	}
}
