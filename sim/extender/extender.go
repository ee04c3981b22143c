package extender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/kube"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

// Config is an extender's entry in a scheduler configuration, with the same meaning as
// KubeSchedulerConfiguration's extenders list.
type Config struct {
	URLPrefix        string
	FilterVerb       string
	PrioritizeVerb   string
	BindVerb         string
	PreemptVerb      string
	Weight           int64
	NodeCacheCapable bool
	Ignorable        bool
	// HTTPTimeout bounds each call (default 5 s, kube-scheduler's default).
	HTTPTimeout time.Duration
	// ManagedResources, if set, limits the extender to pods requesting one of them.
	ManagedResources []string
	// Client replaces the HTTP client, for tests.
	Client *http.Client
}

// Extender is an HTTP extender. It implements scheduler.Extender. Calls are synchronous: the
// simulation waits for each answer, so results are as deterministic as the extender itself.
type Extender struct {
	cfg    Config
	names  *sim.Names
	client *http.Client
}

var _ scheduler.Extender = (*Extender)(nil)

// New checks the config.
func New(cfg Config, names *sim.Names) (*Extender, error) {
	if cfg.URLPrefix == "" {
		return nil, fmt.Errorf("extender needs a urlPrefix")
	}
	if !strings.HasPrefix(cfg.URLPrefix, "http://") && !strings.HasPrefix(cfg.URLPrefix, "https://") {
		return nil, fmt.Errorf("extender urlPrefix %q must start with http:// or https://", cfg.URLPrefix)
	}
	if cfg.PrioritizeVerb != "" && cfg.Weight <= 0 {
		return nil, fmt.Errorf("extender %s: a prioritizeVerb needs a positive weight", cfg.URLPrefix)
	}
	if cfg.HTTPTimeout <= 0 {
		cfg.HTTPTimeout = 5 * time.Second
	}
	c := cfg.Client
	if c == nil {
		c = &http.Client{Timeout: cfg.HTTPTimeout}
	}
	return &Extender{cfg: cfg, names: names, client: c}, nil
}

// Name implements scheduler.Extender.
func (e *Extender) Name() string { return e.cfg.URLPrefix }

// IsIgnorable implements scheduler.Extender.
func (e *Extender) IsIgnorable() bool { return e.cfg.Ignorable }

// IsBinder implements scheduler.Extender.
func (e *Extender) IsBinder() bool { return e.cfg.BindVerb != "" }

// SupportsPreemption implements scheduler.Extender.
func (e *Extender) SupportsPreemption() bool { return e.cfg.PreemptVerb != "" }

// IsInterested implements scheduler.Extender.
func (e *Extender) IsInterested(p *sim.Pod) bool {
	if len(e.cfg.ManagedResources) == 0 {
		return true
	}
	for _, r := range e.cfg.ManagedResources {
		if i, ok := e.names.Lookup(r); ok && p.Requests[i] > 0 {
			return true
		}
	}
	return false
}

func (e *Extender) call(verb string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	url := strings.TrimRight(e.cfg.URLPrefix, "/") + "/" + verb
	resp, err := e.client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("extender %s: %w", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("extender %s: read answer: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("extender %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("extender %s: decode answer: %w", url, err)
	}
	return nil
}

func (e *Extender) args(p *sim.Pod, nodes []*sim.Node) *Args {
	kp := kube.FromSim(p, e.names)
	a := &Args{Pod: &kp}
	if e.cfg.NodeCacheCapable {
		names := make([]string, len(nodes))
		for i, n := range nodes {
			names[i] = n.Name
		}
		a.NodeNames = &names
	} else {
		l := &kube.NodeList{APIVersion: "v1", Kind: "NodeList", Items: make([]kube.Node, len(nodes))}
		for i, n := range nodes {
			l.Items[i] = kube.NodeFromSim(n, e.names)
		}
		a.Nodes = l
	}
	return a
}

// Filter implements scheduler.Extender: nodes the extender returns are kept, in the order
// given.
func (e *Extender) Filter(_ *sim.Cluster, p *sim.Pod, nodes []*sim.Node) ([]*sim.Node, error) {
	if e.cfg.FilterVerb == "" {
		return nodes, nil
	}
	var res FilterResult
	if err := e.call(e.cfg.FilterVerb, e.args(p, nodes), &res); err != nil {
		return nil, err
	}
	if res.Error != "" {
		return nil, fmt.Errorf("extender %s filter: %s", e.cfg.URLPrefix, res.Error)
	}
	keep := map[string]bool{}
	switch {
	case res.NodeNames != nil:
		for _, n := range *res.NodeNames {
			keep[n] = true
		}
	case res.Nodes != nil:
		for _, n := range res.Nodes.Items {
			keep[n.Metadata.Name] = true
		}
	}
	out := make([]*sim.Node, 0, len(keep))
	for _, n := range nodes {
		if keep[n.Name] {
			out = append(out, n)
		}
	}
	return out, nil
}

// Prioritize implements scheduler.Extender.
func (e *Extender) Prioritize(_ *sim.Cluster, p *sim.Pod, nodes []*sim.Node) ([]int64, int64, error) {
	if e.cfg.PrioritizeVerb == "" {
		return nil, 0, nil
	}
	var res []HostPriority
	if err := e.call(e.cfg.PrioritizeVerb, e.args(p, nodes), &res); err != nil {
		return nil, 0, err
	}
	byHost := make(map[string]int64, len(res))
	for _, h := range res {
		byHost[h.Host] = h.Score
	}
	scores := make([]int64, len(nodes))
	for i, n := range nodes {
		scores[i] = byHost[n.Name]
	}
	return scores, e.cfg.Weight, nil
}

// Bind implements scheduler.Extender: the extender is asked to bind; the simulator starts the
// pod once it agrees.
func (e *Extender) Bind(_ *sim.Cluster, p *sim.Pod, n *sim.Node) error {
	var res BindingResult
	args := BindingArgs{PodName: p.Name, PodNamespace: p.Namespace, PodUID: kube.UID(p), Node: n.Name}
	if err := e.call(e.cfg.BindVerb, args, &res); err != nil {
		return err
	}
	if res.Error != "" {
		return fmt.Errorf("extender %s bind pod %s: %s", e.cfg.URLPrefix, p.Name, res.Error)
	}
	return nil
}

// ProcessPreemption implements scheduler.Extender: candidates the extender drops are dropped,
// and each kept node's victims become the ones the extender lists.
func (e *Extender) ProcessPreemption(_ *sim.Cluster, p *sim.Pod, cands []scheduler.Candidate) ([]scheduler.Candidate, error) {
	kp := kube.FromSim(p, e.names)
	args := PreemptionArgs{Pod: &kp}
	byUID := map[string]*sim.Pod{}
	if e.cfg.NodeCacheCapable {
		args.NodeNameToMetaVictims = map[string]*MetaVictims{}
	} else {
		args.NodeNameToVictims = map[string]*Victims{}
	}
	for _, c := range cands {
		mv, v := &MetaVictims{}, &Victims{}
		for _, q := range c.Victims {
			byUID[kube.UID(q)] = q
			if e.cfg.NodeCacheCapable {
				mv.Pods = append(mv.Pods, &MetaPod{UID: kube.UID(q)})
			} else {
				kq := kube.FromSim(q, e.names)
				v.Pods = append(v.Pods, &kq)
			}
		}
		if e.cfg.NodeCacheCapable {
			args.NodeNameToMetaVictims[c.Node.Name] = mv
		} else {
			args.NodeNameToVictims[c.Node.Name] = v
		}
	}
	var res PreemptionResult
	if err := e.call(e.cfg.PreemptVerb, args, &res); err != nil {
		return nil, err
	}
	var out []scheduler.Candidate
	for _, c := range cands {
		mv, ok := res.NodeNameToMetaVictims[c.Node.Name]
		if !ok || mv == nil {
			continue
		}
		nc := scheduler.Candidate{Node: c.Node}
		for _, mp := range mv.Pods {
			q, ok := byUID[mp.UID]
			if !ok {
				return nil, fmt.Errorf("extender %s preempt: unknown victim UID %q", e.cfg.URLPrefix, mp.UID)
			}
			nc.Victims = append(nc.Victims, q)
		}
		out = append(out, nc)
	}
	return out, nil
}
