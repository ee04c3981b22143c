package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// queryFields are the columns Discover asks nvidia-smi for, in order.
const queryFields = "index,uuid,name,memory.total,mig.mode.current"

// smiTimeout bounds one nvidia-smi call: a wedged driver can make it hang.
const smiTimeout = 30 * time.Second

// physical is one GPU as nvidia-smi --query-gpu reports it.
type physical struct {
	index     int
	uuid      string
	name      string
	memoryMiB int64
	mig       bool // MIG mode is on: its instances are the assignable units
}

// parseQuery reads the output of nvidia-smi --query-gpu=queryFields --format=csv,noheader
// (with or without nounits): "0, GPU-…, NVIDIA A100-SXM4-80GB, 81920 MiB, Enabled".
func parseQuery(out []byte) ([]physical, error) {
	var gpus []physical
	n := 0
	for line := range bytes.Lines(out) {
		n++
		s := strings.TrimSpace(string(line))
		if s == "" {
			continue
		}
		f := strings.Split(s, ",")
		if len(f) < 5 {
			return nil, fmt.Errorf("nvidia-smi --query-gpu line %d %q: want %d comma-separated fields (%s)", n, s, 5, queryFields)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		// A name with a comma in it spans fields: the index and UUID come first, memory and MIG
		// mode last.
		g := physical{uuid: f[1], name: strings.Join(f[2:len(f)-2], ", ")}
		idx, err := strconv.Atoi(f[0])
		if err != nil || idx < 0 {
			return nil, fmt.Errorf("nvidia-smi --query-gpu line %d %q: index %q is not a number", n, s, f[0])
		}
		g.index = idx
		if !strings.HasPrefix(g.uuid, "GPU-") {
			return nil, fmt.Errorf("nvidia-smi --query-gpu line %d %q: uuid %q does not start with GPU-", n, s, g.uuid)
		}
		g.memoryMiB = parseMiB(f[len(f)-2])
		g.mig = f[len(f)-1] == "Enabled"
		for _, o := range gpus {
			if o.index == g.index || o.uuid == g.uuid {
				return nil, fmt.Errorf("nvidia-smi --query-gpu line %d %q: GPU %d (%s) is listed twice", n, s, g.index, g.uuid)
			}
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

// parseMiB reads "81920 MiB" or "81920"; "[N/A]" and the like are unknown (0).
func parseMiB(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(s, " MiB")), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// migInstance is one MIG device as nvidia-smi -L lists it under its GPU.
type migInstance struct {
	device  int
	profile string
	uuid    string
}

var (
	// "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-7fdaf0a5-…)"
	listGPU = regexp.MustCompile(`^GPU (\d+): (.*) \(UUID: (GPU-[^)\s]+)\)$`)
	// "  MIG 1g.10gb     Device  0: (UUID: MIG-feb88891-…)"; drivers before R470 wrote the
	// UUID as "MIG-GPU-<uuid>/<gi>/<ci>".
	listMIG = regexp.MustCompile(`^MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)\s]+)\)$`)
)

// parseList reads nvidia-smi -L: each GPU's MIG instances, by the GPU's index. Lines that are
// neither a GPU nor a MIG device (warnings) are skipped; a MIG line that does not parse is an
// error, so an instance is never silently lost.
func parseList(out []byte) (map[int][]migInstance, error) {
	migs := map[int][]migInstance{}
	gpu := -1
	n := 0
	for line := range bytes.Lines(out) {
		n++
		s := strings.TrimSpace(string(line))
		if m := listGPU.FindStringSubmatch(s); m != nil {
			gpu, _ = strconv.Atoi(m[1])
			continue
		}
		if !strings.HasPrefix(s, "MIG ") {
			continue
		}
		m := listMIG.FindStringSubmatch(s)
		if m == nil || gpu < 0 {
			return nil, fmt.Errorf("nvidia-smi -L line %d %q: not a MIG device under a GPU", n, s)
		}
		dev, err := strconv.Atoi(m[2])
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi -L line %d %q: device %q is not a number", n, s, m[2])
		}
		migs[gpu] = append(migs[gpu], migInstance{device: dev, profile: m[1], uuid: m[3]})
	}
	return migs, nil
}

// profileMiB is the nominal memory of a MIG profile: "1g.10gb" 10 GiB, "1c.3g.20gb" 20 GiB,
// "1g.10gb+me" 10 GiB; 0 when the name does not say.
func profileMiB(profile string) int64 {
	p, _, _ := strings.Cut(profile, "+")
	i := strings.LastIndexByte(p, '.')
	gb, ok := strings.CutSuffix(p[i+1:], "gb")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(gb, 10, 64)
	if err != nil || n <= 0 || n > 1<<20 {
		return 0
	}
	return n << 10
}

// units are the assignable units of physical GPUs: each whole GPU without MIG mode, each MIG
// instance of one with it. The notes name GPUs in MIG mode without instances.
func units(gpus []physical, migs map[int][]migInstance) (out []GPU, notes []string) {
	for _, g := range gpus {
		if !g.mig {
			out = append(out, GPU{Index: strconv.Itoa(g.index), UUID: g.uuid, Name: g.name, MemoryMiB: g.memoryMiB})
			continue
		}
		if len(migs[g.index]) == 0 {
			notes = append(notes, fmt.Sprintf("GPU %d (%s) is in MIG mode without MIG instances: nothing on it can be assigned", g.index, g.uuid))
		}
		for _, m := range migs[g.index] {
			out = append(out, GPU{Index: strconv.Itoa(g.index) + ":" + strconv.Itoa(m.device), UUID: m.uuid,
				Name: g.name, MemoryMiB: profileMiB(m.profile), MIG: m.profile})
		}
	}
	return out, notes
}

// selection is a parsed JIKKEN_GPUS / --gpus value.
type selection struct {
	none bool
	// ids are indices ("0", "0:1") or UUIDs, in the order given; nil selects every GPU.
	ids []string
}

var (
	selIndex = regexp.MustCompile(`^\d+(:\d+)?$`)
	selUUID  = regexp.MustCompile(`^(GPU|MIG)-[0-9A-Za-z/-]+$`)
)

// parseSelection reads "0,2,3", "GPU-…,MIG-…", "0:1", "none", "all" or "".
func parseSelection(s string) (selection, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "all":
		return selection{}, nil
	case "none":
		return selection{none: true}, nil
	}
	var sel selection
	for id := range strings.SplitSeq(s, ",") {
		id = strings.TrimSpace(id)
		switch {
		case id == "":
			return selection{}, fmt.Errorf("GPU list %q has an empty entry; write indices or UUIDs separated by commas, like 0,2,3", s)
		case !selIndex.MatchString(id) && !selUUID.MatchString(id):
			return selection{}, fmt.Errorf("GPU list %q: %q is not a GPU index (0, 1, ...), a MIG instance (0:1), a UUID (GPU-..., MIG-...), all or none", s, id)
		case slices.Contains(sel.ids, id):
			return selection{}, fmt.Errorf("GPU list %q names %s twice", s, id)
		}
		sel.ids = append(sel.ids, id)
	}
	return sel, nil
}

// pick restricts units to those sel names, in sel's order. A MIG-enabled GPU's index or UUID
// names all its instances. An id that names nothing is an error that lists what there is.
func (sel selection) pick(all []GPU, gpus []physical) ([]GPU, error) {
	if sel.ids == nil {
		return all, nil
	}
	var out []GPU
	add := func(u GPU) {
		if !slices.ContainsFunc(out, func(o GPU) bool { return o.Index == u.Index }) {
			out = append(out, u)
		}
	}
	for _, id := range sel.ids {
		found := false
		for _, u := range all {
			if u.Index == id || u.UUID == id {
				add(u)
				found = true
			}
		}
		for _, g := range gpus {
			if g.mig && (strconv.Itoa(g.index) == id || g.uuid == id) {
				if !slices.ContainsFunc(all, func(u GPU) bool { return strings.HasPrefix(u.Index, strconv.Itoa(g.index)+":") }) {
					return nil, fmt.Errorf("the GPU list names GPU %s, which is in MIG mode without MIG instances; create instances (nvidia-smi mig -cgi ... -C) or turn MIG mode off", id)
				}
				found = true
				for _, u := range all {
					if strings.HasPrefix(u.Index, strconv.Itoa(g.index)+":") {
						add(u)
					}
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("the GPU list names %s, which nvidia-smi does not show; it shows %s", id, describe(all))
		}
	}
	return out, nil
}

// describe lists units for an error message.
func describe(units []GPU) string {
	if len(units) == 0 {
		return "no assignable GPU"
	}
	var s []string
	for _, u := range units {
		s = append(s, u.Index+" ("+u.UUID+")")
	}
	return strings.Join(s, ", ")
}

// discoverGPUs lists the assignable units and says where they came from.
func discoverGPUs(ctx context.Context, o Options) ([]GPU, []string, error) {
	sel, err := parseSelection(o.GPUs)
	if err != nil {
		return nil, nil, err
	}
	if sel.none {
		return nil, []string{"GPUs: none, as set (JIKKEN_GPUS, --gpus)"}, nil
	}
	smi := o.NvidiaSMI
	if smi == "" {
		smi = "nvidia-smi"
	}
	path, err := exec.LookPath(smi)
	if err != nil {
		if sel.ids == nil {
			return nil, []string{"GPUs: none (no " + smi + " on PATH)"}, nil
		}
		// Without nvidia-smi the list is taken as it is: the devices exist, we cannot check.
		var out []GPU
		for _, id := range sel.ids {
			if !selIndex.MatchString(id) || strings.Contains(id, ":") {
				return nil, nil, fmt.Errorf("the GPU list names %s, but there is no %s on PATH to find it; name whole GPUs by index (0,1,...) or install the NVIDIA driver's tools", id, smi)
			}
			out = append(out, GPU{Index: id})
		}
		return out, []string{"GPUs: " + strings.Join(sel.ids, ",") + ", as listed (JIKKEN_GPUS, --gpus; no " + smi + " on PATH to check them)"}, nil
	}
	q, err := runSMI(ctx, path, "--query-gpu="+queryFields, "--format=csv,noheader")
	if err != nil {
		return nil, nil, err
	}
	gpus, err := parseQuery(q)
	if err != nil {
		return nil, nil, err
	}
	var migs map[int][]migInstance
	if slices.ContainsFunc(gpus, func(g physical) bool { return g.mig }) {
		l, err := runSMI(ctx, path, "-L")
		if err != nil {
			return nil, nil, err
		}
		if migs, err = parseList(l); err != nil {
			return nil, nil, err
		}
	}
	all, notes := units(gpus, migs)
	picked, err := sel.pick(all, gpus)
	if err != nil {
		return nil, nil, err
	}
	note := fmt.Sprintf("GPUs: %d from nvidia-smi", len(picked))
	if sel.ids != nil {
		note += ", restricted to " + strings.Join(sel.ids, ",") + " (JIKKEN_GPUS, --gpus)"
	}
	return picked, append([]string{note}, notes...), nil
}

// runSMI runs nvidia-smi; a failure says what it printed and how to go on without GPUs.
func runSMI(ctx context.Context, path string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, smiTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", smiTimeout)
	}
	msg := strings.TrimSpace(stderr.String())
	if msg == "" {
		msg = strings.TrimSpace(stdout.String())
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg != "" {
		msg = ": " + msg
	}
	return nil, fmt.Errorf("%s %s failed (%v)%s; fix the NVIDIA driver, or set JIKKEN_GPUS=none (--gpus none) to run without GPUs",
		path, strings.Join(args, " "), err, msg)
}

// CheckGPUList reports whether s is a well-formed GPU list (JIKKEN_GPUS, --gpus), before
// anything asks nvidia-smi, so that a typo is a usage error.
func CheckGPUList(s string) error {
	_, err := parseSelection(s)
	return err
}
