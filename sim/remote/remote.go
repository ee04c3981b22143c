package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/kube"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// Node is a node in a scheduling request.
type Node struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Taints      []sim.Taint       `json:"taints,omitempty"`
	Capacity    map[string]string `json:"capacity"`
	Allocated   map[string]string `json:"allocated"`
	Schedulable bool              `json:"schedulable"`
}

// Pod is a pod in a scheduling request.
type Pod struct {
	UID          string            `json:"uid"`
	Name         string            `json:"name"`
	Namespace    string            `json:"namespace"`
	User         string            `json:"user"`
	Priority     int32             `json:"priority"`
	Requests     map[string]string `json:"requests"`
	Duration     float64           `json:"duration_s"`
	Remaining    float64           `json:"remaining_s"`
	Submit       float64           `json:"submit_s"`
	Gang         string            `json:"gang,omitempty"`
	GangSize     int               `json:"gangSize,omitempty"`
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	Tolerations  []sim.Toleration  `json:"tolerations,omitempty"`
	Node         string            `json:"node,omitempty"`
	Start        float64           `json:"start_s,omitempty"`
}

// ScheduleRequest is the body POSTed to <url>/schedule.
type ScheduleRequest struct {
	Time    float64 `json:"time_s"`
	Nodes   []Node  `json:"nodes"`
	Pending []Pod   `json:"pending"`
	Running []Pod   `json:"running"`
}

// Binding places a pending pod on a node.
type Binding struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// Preemption evicts a running pod; KeepProgress keeps its work (a checkpoint).
type Preemption struct {
	Pod          string `json:"pod"`
	KeepProgress bool   `json:"keepProgress,omitempty"`
}

// ScheduleResponse is the answer: preemptions are applied first, then bindings, in order.
type ScheduleResponse struct {
	Bindings    []Binding    `json:"bindings"`
	Preemptions []Preemption `json:"preemptions,omitempty"`
}

type client struct {
	url  string
	http *http.Client
}

func (c *client) post(verb string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	url := strings.TrimRight(c.url, "/") + "/" + verb
	resp, err := c.http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("remote %s: %w", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("remote %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("remote %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("remote %s: decode answer: %w", url, err)
	}
	return nil
}

// Scheduler asks an HTTP service where pending pods go. It implements sim.Scheduler.
type Scheduler struct {
	c client
}

// NewScheduler returns a scheduler calling url/schedule with the given timeout per call.
func NewScheduler(url string, timeout time.Duration) (*Scheduler, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("remote scheduler url %q must start with http:// or https://", url)
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &Scheduler{c: client{url: url, http: &http.Client{Timeout: timeout}}}, nil
}

func podOf(p *sim.Pod, names *sim.Names, now sim.Time) Pod {
	req := p.Requests
	req[sim.PodsIndex] = 0
	rp := Pod{UID: kube.UID(p), Name: p.Name, Namespace: p.Namespace, User: p.User, Priority: p.Priority,
		Requests: names.Map(&req), Duration: p.Duration.Seconds(), Remaining: p.Remaining(now).Seconds(),
		Submit: p.Submit.Seconds(), Gang: p.Gang, GangSize: p.GangSize, NodeSelector: p.NodeSelector, Tolerations: p.Tolerations}
	if p.Phase == sim.Running {
		rp.Node, rp.Start = p.Node.Name, p.Start.Seconds()
	}
	return rp
}

// Schedule implements sim.Scheduler.
func (s *Scheduler) Schedule(c *sim.Cluster) error {
	names := c.Names()
	now := c.Now()
	req := ScheduleRequest{Time: now.Seconds(), Pending: []Pod{}, Running: []Pod{}}
	byUID := map[string]*sim.Pod{}
	for _, n := range c.Nodes() {
		if n.Removed {
			continue
		}
		req.Nodes = append(req.Nodes, Node{Name: n.Name, Labels: n.Labels, Taints: n.Taints, Capacity: names.Map(&n.Capacity),
			Allocated: names.Map(&n.Allocated), Schedulable: n.Schedulable()})
		for _, p := range n.Pods() {
			req.Running = append(req.Running, podOf(p, names, now))
			byUID[kube.UID(p)] = p
		}
	}
	for _, p := range c.Pending() {
		req.Pending = append(req.Pending, podOf(p, names, now))
		byUID[kube.UID(p)] = p
	}
	var res ScheduleResponse
	if err := s.c.post("schedule", req, &res); err != nil {
		return err
	}
	for _, pr := range res.Preemptions {
		p, ok := byUID[pr.Pod]
		if !ok {
			return fmt.Errorf("remote scheduler preempts unknown pod %q", pr.Pod)
		}
		if err := c.Preempt(p, pr.KeepProgress); err != nil {
			return fmt.Errorf("remote scheduler: %w", err)
		}
	}
	for _, b := range res.Bindings {
		p, ok := byUID[b.Pod]
		if !ok {
			return fmt.Errorf("remote scheduler binds unknown pod %q", b.Pod)
		}
		n := c.Node(b.Node)
		if n == nil {
			return fmt.Errorf("remote scheduler binds pod %s to unknown node %q", p.Name, b.Node)
		}
		if err := c.Bind(p, n); err != nil {
			return fmt.Errorf("remote scheduler: %w", err)
		}
	}
	return nil
}

// StepRequest is the body POSTed to <url>/step.
type StepRequest struct {
	Time      float64           `json:"time_s"`
	Pending   int               `json:"pending"`
	Running   int               `json:"running"`
	Finished  int               `json:"finished"`
	NodesUp   int               `json:"nodesUp"`
	Allocated map[string]string `json:"allocated"`
	Capacity  map[string]string `json:"capacity"`
}

// SubmitPod is a pod a remote submitter returns; quantities are Kubernetes quantities.
type SubmitPod struct {
	Name     string  `json:"name"`
	User     string  `json:"user"`
	Duration float64 `json:"duration_s"`
	CPU      string  `json:"cpu,omitempty"`
	Memory   string  `json:"memory,omitempty"`
	GPU      string  `json:"gpu,omitempty"`
	Priority int32   `json:"priority,omitempty"`
	Gang     string  `json:"gang,omitempty"`
	GangSize int     `json:"gangSize,omitempty"`
}

// StepResponse lists the pods to submit now and when to call again (null: done).
type StepResponse struct {
	Pods []SubmitPod `json:"pods"`
	Next *float64    `json:"next_s"`
}

// Submitter asks an HTTP service for pods at each step. It implements sim.Submitter.
type Submitter struct {
	c     client
	names *sim.Names
}

// NewSubmitter returns a submitter calling url/step.
func NewSubmitter(url string, timeout time.Duration, names *sim.Names) (*Submitter, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("remote submitter url %q must start with http:// or https://", url)
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &Submitter{c: client{url: url, http: &http.Client{Timeout: timeout}}, names: names}, nil
}

// Step implements sim.Submitter.
func (s *Submitter) Step(now sim.Time, st sim.Status) ([]*sim.Pod, sim.Time, error) {
	req := StepRequest{Time: now.Seconds(), Pending: st.Pending, Running: st.Running, Finished: st.Finished,
		NodesUp: st.NodesUp, Allocated: s.names.Map(&st.Allocated), Capacity: s.names.Map(&st.Capacity)}
	var res StepResponse
	if err := s.c.post("step", req, &res); err != nil {
		return nil, 0, err
	}
	var pods []*sim.Pod
	for i, rp := range res.Pods {
		j := submitter.Job{Name: rp.Name, User: rp.User, Duration: rp.Duration, Priority: rp.Priority, Gang: rp.Gang, GangSize: rp.GangSize}
		for _, q := range []struct {
			s   string
			dst *int64
		}{{rp.CPU, &j.CPU}, {rp.Memory, &j.Memory}, {rp.GPU, &j.GPU}} {
			if q.s == "" {
				continue
			}
			v, err := sim.ParseQuantity(q.s)
			if err != nil {
				return nil, 0, fmt.Errorf("remote submitter pod %d: %w", i, err)
			}
			*q.dst = v
		}
		pods = append(pods, j.Pod())
	}
	if res.Next == nil {
		return pods, sim.Never, nil
	}
	if math.IsNaN(*res.Next) || *res.Next < now.Seconds() {
		return nil, 0, fmt.Errorf("remote submitter asked to be called at %v s, before now (%v s)", *res.Next, now.Seconds())
	}
	return pods, sim.Seconds(*res.Next), nil
}
