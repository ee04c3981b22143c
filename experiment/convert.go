package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// plain turns decoded JSON numbers into int64 when whole, float64 otherwise, recursively.
func plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	}
	return v
}

func toCommand(v any) (Command, error) {
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return Command{}, fmt.Errorf("is empty")
		}
		return Command{Shell: x}, nil
	case []any:
		if len(x) == 0 {
			return Command{}, fmt.Errorf("is an empty array")
		}
		argv := make([]string, len(x))
		for i, e := range x {
			s, ok := scalarString(e)
			if !ok {
				return Command{}, fmt.Errorf("element %d must be a string or number", i)
			}
			argv[i] = s
		}
		return Command{Argv: argv}, nil
	}
	return Command{}, fmt.Errorf("must be a string (run by sh -c) or an array of strings (argv)")
}

// scalarString renders strings, numbers and booleans as text.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

func toStringMap(v any, scalars bool) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object of name: value")
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := scalarString(e)
		if !ok || (!scalars && isNonString(e)) {
			return nil, fmt.Errorf("value of %q must be a string", k)
		}
		out[k] = s
	}
	return out, nil
}

func isNonString(v any) bool { _, ok := v.(string); return !ok }

func toStringList(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array")
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := scalarString(e)
		if !ok {
			return nil, fmt.Errorf("element %d must be a string", i)
		}
		out[i] = s
	}
	return out, nil
}

// toMappingList reads ports or volumes: docker's "host:container" strings, or combu's
// {host, container} objects (ports may add ip and protocol, volumes mode "ro" or "rw"), which
// become the string form.
func toMappingList(field string, v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array")
	}
	out := make([]string, len(list))
	for i, e := range list {
		if s, ok := scalarString(e); ok {
			out[i] = s
			continue
		}
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("element %d must be a string or a {host, container} object", i)
		}
		s, err := mappingString(field, m)
		if err != nil {
			return nil, fmt.Errorf("element %d: %v", i, err)
		}
		out[i] = s
	}
	return out, nil
}

func mappingString(field string, m map[string]any) (string, error) {
	allowed := []string{"host", "container", "mode"}
	if field == "ports" {
		allowed = []string{"host", "container", "ip", "protocol"}
	}
	get := map[string]string{}
	for _, k := range sortedKeys(m) {
		if !contains(allowed, k) {
			return "", fmt.Errorf("unknown field %q%s; use %s", k, suggest(k, allowed), strings.Join(allowed, ", "))
		}
		s, ok := scalarString(m[k])
		if !ok {
			return "", fmt.Errorf("%s must be a string or a number", k)
		}
		get[k] = s
	}
	c := get["container"]
	if c == "" {
		return "", fmt.Errorf("container is missing")
	}
	if field == "volumes" {
		if get["host"] == "" {
			return "", fmt.Errorf("host is missing (a host path or a volume name)")
		}
		s := get["host"] + ":" + c
		if mode := get["mode"]; mode != "" {
			s += ":" + mode
		}
		return s, nil
	}
	// combu writes the protocol on each side ({host: "2222/tcp", container: "80/tcp"}), as
	// Docker's API names ports: take it from there when the sides agree.
	proto := get["protocol"]
	for _, k := range []string{"container", "host"} {
		v, p, ok := strings.Cut(get[k], "/")
		if !ok {
			continue
		}
		if proto != "" && p != proto {
			return "", fmt.Errorf("%s %q says %s, but the port is %s", k, get[k], p, proto)
		}
		get[k], proto = v, p
	}
	c = get["container"]
	s := c
	if h := get["host"]; h != "" {
		s = h + ":" + s
		if ip := get["ip"]; ip != "" {
			s = ip + ":" + s
		}
	} else if get["ip"] != "" {
		return "", fmt.Errorf("ip needs host")
	}
	if proto != "" {
		s += "/" + proto
	}
	return s, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func toInt(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("must be a whole number")
	}
	i, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s is not a whole number", n)
	}
	return i, nil
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func validEnvName(s string) bool { return envName.MatchString(s) }

func toResources(v any) (Resources, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Resources{}, fmt.Errorf("must be an object with cpu, memory and/or gpu")
	}
	var r Resources
	for _, k := range sortedKeys(m) {
		e := m[k]
		switch k {
		case "cpu":
			c, err := parseCPU(e)
			if err != nil {
				return r, fmt.Errorf("cpu: %v", err)
			}
			r.CPU = c
		case "memory":
			b, err := parseMemory(e)
			if err != nil {
				return r, fmt.Errorf("memory: %v", err)
			}
			r.Memory = b
		case "gpu":
			g, err := parseGPU(e)
			if err != nil {
				return r, fmt.Errorf("gpu: %v", err)
			}
			r.GPU = g
		case "mig":
			s, ok := e.(string)
			if !ok || !migProfile.MatchString(s) {
				return r, fmt.Errorf("mig: %v is not a MIG profile; write it as nvidia-smi -L shows it, e.g. \"1g.10gb\" or \"3g.40gb\"", e)
			}
			r.MIG = s
		default:
			return r, fmt.Errorf("unknown resource %q%s; use cpu, memory, gpu, mig", k, suggest(k, []string{"cpu", "memory", "gpu", "mig"}))
		}
	}
	if r.GPU > 0 && r.MIG != "" {
		return r, fmt.Errorf("gpu and mig: ask for GPUs or for a MIG instance, not both")
	}
	return r, nil
}

// quantityHint says how to write a quantity, for errors.
const quantityHint = "a number with an optional Kubernetes suffix (m, k, M, G, T, P, Ki, Mi, Gi, Ti, Pi)"

// quantity reads a number or a Kubernetes quantity with Kubernetes' own parser.
func quantity(v any, want string) (resource.Quantity, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	default:
		return resource.Quantity{}, fmt.Errorf("want %s", want)
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, fmt.Errorf("%q is not a quantity; write %s", s, quantityHint)
	}
	return q, nil
}

// migProfile is a MIG instance profile as nvidia-smi names it: 1g.10gb, 3g.40gb, 1g.10gb+me.
var migProfile = regexp.MustCompile(`^[1-8]g\.[0-9]+gb(\+me)?$`)

// parseGPU reads a number of GPUs: whole, or a share of one GPU (0 < x < 1, in thousandths).
func parseGPU(v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("want a number of GPUs (1, 2) or a share of one (0.5)")
	}
	g, err := n.Float64()
	switch {
	case err != nil || g < 0 || math.IsInf(g, 0):
		return 0, fmt.Errorf("%s is not a number of GPUs", n)
	case g > 1 && g != math.Trunc(g):
		return 0, fmt.Errorf("%s: above one GPU, ask for whole GPUs (2, not 1.5)", n)
	case g > 0 && g < 1 && math.Abs(g*1000-math.Round(g*1000)) > 1e-9:
		return 0, fmt.Errorf("%s: a share of a GPU is counted in thousandths (0.5, 0.25, 0.125)", n)
	case g > 1024:
		return 0, fmt.Errorf("%s GPUs: no machine has that many", n)
	}
	return g, nil
}

// parseCPU reads cores as a number or a Kubernetes quantity ("500m", "2").
func parseCPU(v any) (float64, error) {
	q, err := quantity(v, `a number of cores or a quantity like "500m"`)
	if err != nil {
		return 0, err
	}
	if q.Sign() <= 0 {
		return 0, fmt.Errorf(`want a positive number of cores or a quantity like "500m"`)
	}
	return float64(q.MilliValue()) / 1000, nil
}

// parseMemory reads bytes as a number or a Kubernetes quantity ("512Mi", "2G", "1Pi"); a
// fraction of a byte rounds up, as Kubernetes rounds it.
func parseMemory(v any) (int64, error) {
	q, err := quantity(v, `bytes or a quantity like "512Mi" or "2G"`)
	if err != nil {
		return 0, err
	}
	if q.Sign() <= 0 || q.CmpInt64(math.MaxInt64/2) > 0 {
		return 0, fmt.Errorf(`want a positive amount of bytes or a quantity like "512Mi" or "2G"`)
	}
	return q.Value(), nil
}

func toHealth(v any) (*Health, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object with cmd, tcp or http, and optional interval and timeout")
	}
	h := &Health{}
	for _, k := range sortedKeys(m) {
		e := m[k]
		switch k {
		case "cmd":
			c, err := toCommand(e)
			if err != nil {
				return nil, fmt.Errorf("cmd %v", err)
			}
			h.Cmd = c
		case "tcp":
			s, ok := e.(string)
			if !ok || !strings.Contains(s, ":") {
				return nil, fmt.Errorf("tcp must be a host:port string")
			}
			h.TCP = s
		case "http":
			s, ok := e.(string)
			u, err := url.Parse(s)
			if !ok || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("http must be a URL such as \"http://127.0.0.1:8080/healthz\"")
			}
			h.HTTP = s
		case "interval", "timeout":
			b, _ := json.Marshal(e)
			var d Duration
			if err := d.UnmarshalJSON(b); err != nil {
				return nil, fmt.Errorf("%s: %v", k, err)
			}
			if k == "interval" {
				h.Interval = d
			} else {
				h.Timeout = d
			}
		default:
			return nil, fmt.Errorf("unknown field %q; use cmd, tcp, http, interval, timeout", k)
		}
	}
	if n := btoi(!h.Cmd.IsZero()) + btoi(h.TCP != "") + btoi(h.HTTP != ""); n != 1 {
		return nil, fmt.Errorf("set exactly one of cmd, tcp and http")
	}
	return h, nil
}

// toTolerations reads a list of Kubernetes-style tolerations and checks them as the API
// server would, so a typo fails at validation rather than at the first pod.
func toTolerations(v any) ([]Toleration, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be a list of {key, operator, value, effect, toleration_seconds}")
	}
	out := make([]Toleration, 0, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("[%d]: must be an object with key, operator, value, effect, toleration_seconds", i)
		}
		var t Toleration
		for _, k := range sortedKeys(m) {
			var dst *string
			switch k {
			case "key":
				dst = &t.Key
			case "operator":
				dst = &t.Operator
			case "value":
				dst = &t.Value
			case "effect":
				dst = &t.Effect
			case "toleration_seconds":
				n, err := toInt(m[k])
				if err != nil {
					return nil, fmt.Errorf("[%d].toleration_seconds: %v", i, err)
				}
				t.Seconds = &n
				continue
			default:
				return nil, fmt.Errorf("[%d]: unknown field %q%s; use key, operator, value, effect, toleration_seconds", i, k,
					suggest(k, []string{"key", "operator", "value", "effect", "toleration_seconds"}))
			}
			s, ok := m[k].(string)
			if !ok {
				return nil, fmt.Errorf("[%d].%s: must be a string", i, k)
			}
			*dst = s
		}
		switch t.Operator {
		case "", "Equal":
			if t.Key == "" {
				return nil, fmt.Errorf("[%d]: operator Equal needs a key (use operator Exists to tolerate every taint)", i)
			}
		case "Exists":
			if t.Value != "" {
				return nil, fmt.Errorf("[%d]: operator Exists takes no value", i)
			}
		default:
			return nil, fmt.Errorf("[%d].operator: %q; use Equal or Exists", i, t.Operator)
		}
		switch t.Effect {
		case "", "NoSchedule", "PreferNoSchedule", "NoExecute":
		default:
			return nil, fmt.Errorf("[%d].effect: %q; use NoSchedule, PreferNoSchedule or NoExecute", i, t.Effect)
		}
		if t.Seconds != nil && t.Effect != "NoExecute" {
			return nil, fmt.Errorf("[%d]: toleration_seconds applies to effect NoExecute only", i)
		}
		out = append(out, t)
	}
	return out, nil
}

var portSpec = regexp.MustCompile(`^(?:(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):)?(?:(\d{1,5}(?:-\d{1,5})?):)?(\d{1,5}(?:-\d{1,5})?)(?:/(?:tcp|udp|sctp))?$`)

// checkPort accepts Docker's port syntax: [ip:][hostPort:]containerPort[/proto].
func checkPort(s string) error {
	m := portSpec.FindStringSubmatch(s)
	if m == nil {
		return fmt.Errorf("port %q: use [ip:][host_port:]container_port[/tcp|udp], e.g. \"8080:80\"", s)
	}
	for _, group := range m[1:3] {
		for _, part := range strings.Split(group, "-") {
			if n, _ := strconv.Atoi(part); n > 65535 {
				return fmt.Errorf("port %q: %d is above 65535", s, n)
			}
		}
	}
	return nil
}

// checkVolume accepts source:target[:ro|rw] where source is a host path or a volume name.
func checkVolume(s string) error {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return fmt.Errorf("volume %q: use source:target[:ro], where source is a host path or a volume name", s)
	}
	if !strings.HasPrefix(parts[1], "/") {
		return fmt.Errorf("volume %q: the target %q must be an absolute path in the container", s, parts[1])
	}
	if len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw" {
		return fmt.Errorf("volume %q: mode %q must be ro or rw", s, parts[2])
	}
	return nil
}

func toCheckpoint(v any) (*Checkpoint, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object with signal, before, every and/or max_size")
	}
	c := &Checkpoint{}
	for _, k := range sortedKeys(m) {
		e := m[k]
		switch k {
		case "signal":
			s, _ := e.(string)
			s = strings.TrimPrefix(strings.ToUpper(s), "SIG")
			if !slices.Contains(CheckpointSignals, s) {
				return nil, fmt.Errorf("signal: %v is not one of %s", e, strings.Join(CheckpointSignals, ", "))
			}
			c.Signal = s
		case "before", "every":
			b, _ := json.Marshal(e)
			var d Duration
			if err := d.UnmarshalJSON(b); err != nil {
				return nil, fmt.Errorf("%s: %v", k, err)
			}
			if d <= 0 {
				return nil, fmt.Errorf("%s: must be longer than 0s", k)
			}
			if k == "before" {
				c.Before = d
			} else {
				c.Every = d
			}
		case "max_size":
			n, err := parseMemory(e)
			if err != nil {
				return nil, fmt.Errorf("max_size: %v", err)
			}
			c.MaxSize = n
		default:
			return nil, fmt.Errorf("unknown field %q%s; use signal, before, every, max_size", k, suggest(k, []string{"signal", "before", "every", "max_size"}))
		}
	}
	return c, nil
}
