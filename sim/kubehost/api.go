package kubehost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	restclient "k8s.io/client-go/rest"

	"github.com/jikken-dev/jikken/sim"
)

// api answers the requests of Handle.ClientSet from the simulation, for what it models:
// reading nodes and pods, and deleting a running pod, which evicts it (its work is lost and it
// is queued again, as a Job's pod is recreated), so a plugin can preempt. Every other request
// fails with ErrNoAPIServer. Requests are answered in the calling goroutine, so they are as
// deterministic as the rest of the host.
type api struct{ h *Host }

// apiConfig points clients at the simulation.
func (a api) config() *restclient.Config {
	// QPS -1: no client-side rate limiting, which would wait in wall-clock time.
	return &restclient.Config{Host: "https://api.simulation.invalid", Transport: a, QPS: -1}
}

func (a api) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) < 3 || parts[0] != "api" || parts[1] != "v1" || a.h.c == nil {
		return nil, a.refuse(req)
	}
	parts = parts[2:]
	switch {
	case req.Method == http.MethodGet && len(parts) == 1 && parts[0] == "nodes":
		return a.nodes(req)
	case req.Method == http.MethodGet && len(parts) == 2 && parts[0] == "nodes":
		n := a.h.c.Node(parts[1])
		if n == nil {
			return respond(req, http.StatusNotFound, notFound("nodes", parts[1]))
		}
		return respond(req, http.StatusOK, typed(a.h.o.node(n).Node(), "Node"))
	case req.Method == http.MethodGet && len(parts) == 1 && parts[0] == "pods":
		return a.pods(req, "")
	case len(parts) >= 3 && parts[0] == "namespaces" && parts[2] == "pods":
		ns := parts[1]
		switch {
		case req.Method == http.MethodGet && len(parts) == 3:
			return a.pods(req, ns)
		case len(parts) == 4 && (req.Method == http.MethodGet || req.Method == http.MethodDelete):
			p := a.find(ns, parts[3])
			if p == nil {
				return respond(req, http.StatusNotFound, notFound("pods", parts[3]))
			}
			if req.Method == http.MethodGet {
				return respond(req, http.StatusOK, typed(a.h.o.pod(p).pod, "Pod"))
			}
			if p.Phase != sim.Running || p.Assumed() {
				return nil, fmt.Errorf("delete pod %s/%s: it is %s; the simulation deletes (evicts) running pods only", ns, parts[3], p.Phase)
			}
			if err := a.h.c.Preempt(p, false); err != nil {
				return nil, err
			}
			return respond(req, http.StatusOK, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
		}
	}
	return nil, a.refuse(req)
}

func (a api) refuse(req *http.Request) error {
	return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, ErrNoAPIServer)
}

// find returns the live pod with the given namespace and name: pending, reserved or running.
func (a api) find(ns, name string) *sim.Pod {
	pods := a.h.c.Pods()
	for i := len(pods) - 1; i >= 0; i-- {
		p := pods[i]
		if p.Name == name && a.h.o.pod(p).pod.Namespace == ns && p.Phase != sim.Succeeded && p.Phase != sim.Failed {
			return p
		}
	}
	return nil
}

func (a api) nodes(req *http.Request) (*http.Response, error) {
	list := &v1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}}
	for _, ni := range a.h.list() {
		list.Items = append(list.Items, *ni.Node())
	}
	return respond(req, http.StatusOK, list)
}

// pods lists the pods that are pending, reserved or running, in submission order.
func (a api) pods(req *http.Request, ns string) (*http.Response, error) {
	list := &v1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for _, p := range a.h.c.Pods() {
		if p.Phase == sim.Succeeded || p.Phase == sim.Failed {
			continue
		}
		pod := a.h.o.pod(p).pod
		if ns == "" || pod.Namespace == ns {
			list.Items = append(list.Items, *pod)
		}
	}
	return respond(req, http.StatusOK, list)
}

// typed returns a copy of a Node or Pod with its kind set, as the API serves it.
func typed(obj any, kind string) any {
	switch o := obj.(type) {
	case *v1.Node:
		cp := *o
		cp.TypeMeta = metav1.TypeMeta{Kind: kind, APIVersion: "v1"}
		return &cp
	case *v1.Pod:
		cp := *o
		cp.TypeMeta = metav1.TypeMeta{Kind: kind, APIVersion: "v1"}
		return &cp
	}
	return obj
}

func notFound(resource, name string) *metav1.Status {
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
		Message: fmt.Sprintf("%s %q not found in the simulation", resource, name),
		Details: &metav1.StatusDetails{Name: name, Kind: resource}}
}

func respond(req *http.Request, code int, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": []string{"application/json"}}, Body: io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)), Request: req}, nil
}
