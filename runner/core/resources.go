package core

import (
	"container/heap"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/jikken-dev/jikken/trial"
)

// Capacity is what a host offers the trials of a run: CPU cores and memory (0: not counted)
// and the GPU units it may give them. A core without a Capacity admits by the cap alone (a
// cluster backend leaves placement to the cluster).
type Capacity struct {
	CPU    float64
	Memory int64
	GPUs   []Device
}

// Device is one assignable GPU unit: a whole GPU or a MIG instance.
type Device struct {
	// ID is how the trial's runtime names it (CUDA_VISIBLE_DEVICES, Docker's DeviceIDs): the
	// device's UUID when known, else its index.
	ID string
	// MIG is the profile of a MIG instance ("1g.10gb"); empty for a whole GPU.
	MIG string
}

// gpuUnit is a whole GPU in thousandths: shares are counted in them.
const gpuUnit = 1000

// request is what one attempt of a trial takes while it runs; trials with equal requests wait
// in one queue.
type request struct {
	cpu   int64 // thousandths of a core
	mem   int64
	whole int   // whole GPUs
	share int64 // thousandths of one GPU
	mig   string
	// capped is set for the trials a Capped planner caps: they queue apart, and start only
	// under its cap.
	capped bool
}

func requestOf(r trial.Resources) request {
	q := request{cpu: int64(math.Round(r.CPU * 1000)), mem: r.Memory, mig: r.MIG}
	if r.GPU >= 1 {
		q.whole = int(r.GPU)
	} else if r.GPU > 0 {
		q.share = int64(math.Round(r.GPU * gpuUnit))
	}
	return q
}

// pool is the free part of the capacity.
type pool struct {
	limited bool
	cpu     int64 // thousandths; -1: not counted
	mem     int64 // -1: not counted
	devs    []Device
	free    []int64 // per device, thousandths
	// elsewhere marks devices another run on the host holds: not given out until rechecked.
	elsewhere []bool
}

func newPool(c *Capacity) pool {
	p := pool{cpu: -1, mem: -1}
	if c == nil {
		return p
	}
	p.limited = true
	if c.CPU > 0 {
		p.cpu = int64(math.Round(c.CPU * 1000))
	}
	if c.Memory > 0 {
		p.mem = c.Memory
	}
	p.devs = c.GPUs
	p.free = make([]int64, len(c.GPUs))
	p.elsewhere = make([]bool, len(c.GPUs))
	for i := range p.free {
		p.free[i] = gpuUnit
	}
	return p
}

// grant is what one attempt holds.
type grant struct {
	cpu, mem int64
	devs     []int   // indices into pool.devs
	shares   []int64 // thousandths taken of each
}

// take takes and returns the grant for q if it fits now.
func (p *pool) take(q request) (grant, bool) {
	g, ok := p.choose(q)
	if !ok {
		return grant{}, false
	}
	if p.limited {
		if p.cpu >= 0 {
			p.cpu -= q.cpu
		}
		if p.mem >= 0 {
			p.mem -= q.mem
		}
		for k, i := range g.devs {
			p.free[i] -= g.shares[k]
		}
	}
	return g, true
}

// fits reports whether q fits now.
func (p *pool) fits(q request) bool {
	_, ok := p.choose(q)
	return ok
}

// choose returns the grant q would get now, choosing devices deterministically: whole GPUs
// lowest index first, a share on the fullest device it fits (keeping whole GPUs free), a MIG
// instance of the profile lowest index first.
func (p *pool) choose(q request) (grant, bool) {
	g := grant{cpu: q.cpu, mem: q.mem}
	if !p.limited {
		return g, true
	}
	if (p.cpu >= 0 && q.cpu > p.cpu) || (p.mem >= 0 && q.mem > p.mem) {
		return grant{}, false
	}
	switch {
	case q.whole > 0:
		for i, d := range p.devs {
			if len(g.devs) < q.whole && d.MIG == "" && !p.elsewhere[i] && p.free[i] == gpuUnit {
				g.devs, g.shares = append(g.devs, i), append(g.shares, gpuUnit)
			}
		}
		if len(g.devs) < q.whole {
			return grant{}, false
		}
	case q.share > 0:
		best := -1
		for i, d := range p.devs {
			if d.MIG == "" && !p.elsewhere[i] && p.free[i] >= q.share && (best < 0 || p.free[i] < p.free[best]) {
				best = i
			}
		}
		if best < 0 {
			return grant{}, false
		}
		g.devs, g.shares = []int{best}, []int64{q.share}
	case q.mig != "":
		for i, d := range p.devs {
			if d.MIG == q.mig && !p.elsewhere[i] && p.free[i] == gpuUnit {
				g.devs, g.shares = []int{i}, []int64{gpuUnit}
				break
			}
		}
		if len(g.devs) == 0 {
			return grant{}, false
		}
	}
	return g, true
}

// fitsAll reports whether every request of reqs fits now, together.
func (p *pool) fitsAll(reqs []request) bool {
	if !p.limited {
		return true
	}
	trial := pool{limited: true, cpu: p.cpu, mem: p.mem, devs: p.devs, free: slices.Clone(p.free), elsewhere: p.elsewhere}
	for _, q := range reqs {
		if _, ok := trial.take(q); !ok {
			return false
		}
	}
	return true
}

// holding reports whether devices are left alone because other runs held them: a recheck is due.
func (p *pool) holding() bool { return slices.Contains(p.elsewhere, true) }

// heldElsewhere reports whether one of g's devices is held by another run.
func (p *pool) heldElsewhere(g grant) bool {
	for _, i := range g.devs {
		if p.elsewhere[i] {
			return true
		}
	}
	return false
}

// hold marks the devices named ids as held by another run.
func (p *pool) hold(ids []string) {
	for i, d := range p.devs {
		for _, id := range ids {
			if d.ID == id {
				p.elsewhere[i] = true
			}
		}
	}
}

// recheck forgets which devices other runs held: the next starts ask again.
func (p *pool) recheck() {
	for i := range p.elsewhere {
		p.elsewhere[i] = false
	}
}

func (p *pool) give(g grant) {
	if !p.limited {
		return
	}
	if p.cpu >= 0 {
		p.cpu += g.cpu
	}
	if p.mem >= 0 {
		p.mem += g.mem
	}
	for k, i := range g.devs {
		p.free[i] += g.shares[k]
	}
}

func (p *pool) ids(g grant) []string {
	if len(g.devs) == 0 {
		return nil
	}
	out := make([]string, len(g.devs))
	for k, i := range g.devs {
		out[k] = p.devs[i].ID
	}
	return out
}

// alwaysOn lists, in plan order, the services that run all along: the declared services nothing
// depends on, and the declared services they depend on (and theirs), which are in use as long.
// The core starts them first and keeps, for each, the devices it was placed on (pinAlwaysOn).
func alwaysOn(trials []trial.Trial) []int {
	index := make(map[string]int, len(trials))
	dependedOn := make([]bool, len(trials))
	for i, t := range trials {
		index[t.Name] = i
	}
	for _, t := range trials {
		for _, d := range t.Depends {
			dependedOn[index[d.Trial]] = true
		}
	}
	on := make([]bool, len(trials))
	var visit func(j int)
	visit = func(j int) {
		if on[j] {
			return
		}
		on[j] = true
		for _, d := range trials[j].Depends {
			if k := index[d.Trial]; trials[k].DeclaredService() {
				visit(k)
			}
		}
	}
	for i, t := range trials {
		if t.DeclaredService() && !dependedOn[i] {
			visit(i)
		}
	}
	var out []int
	for i := range trials {
		if on[i] {
			out = append(out, i)
		}
	}
	return out
}

// pinAlwaysOn takes from p, in plan order, what each service that runs all along asks for, and
// returns the grant each got, by trial (nil for other trials, and for one that does not fit).
// These grants are held for the whole run, whether the service runs, waits to restart or has
// not started yet: a restart on other devices could leave the GPUs in pieces no waiting trial
// fits in, and admission (Unfit) checks each trial against exactly what these grants leave.
func pinAlwaysOn(trials []trial.Trial, p *pool) []*grant {
	pins := make([]*grant, len(trials))
	for _, i := range alwaysOn(trials) {
		if g, ok := p.take(requestOf(trials[i].Resources)); ok {
			pins[i] = &g
		}
	}
	return pins
}

// Unfit lists the trials that can never start on c, each with the numbers and what to do: a
// run refuses them before anything starts. The services that run all along are placed first,
// as the run places them (pinAlwaysOn), and each must fit beside those before it; every other
// trial must then fit, with the services it depends on (and theirs), in what they leave.
func Unfit(trials []trial.Trial, c *Capacity) []string {
	if c == nil {
		return nil
	}
	index := make(map[string]int, len(trials))
	for i, t := range trials {
		index[t.Name] = i
	}
	p := newPool(c)
	pins := pinAlwaysOn(trials, &p)
	always := make([]bool, len(trials))
	var out []string
	var held []string // the services placed, each with what it holds where
	for _, i := range alwaysOn(trials) {
		always[i] = true
		t := trials[i]
		switch {
		case pins[i] != nil:
			held = append(held, describeHeld(t, pins[i], &p))
		case unfit(trials, []int{i}, c) != "":
			out = append(out, fmt.Sprintf("service %s %s", t.Name, unfit(trials, []int{i}, c)))
		default:
			out = append(out, fmt.Sprintf("service %s, which runs all along, asks for %s: that does not fit in what the services placed before it leave free (%s), as the run starts them in plan order, each on the same devices every time (%s); give those services fewer resources",
				t.Name, describeResources(t.Resources), describeFree(&p, []request{requestOf(t.Resources)}), strings.Join(held, "; ")))
		}
	}
	// The services a trial runs beside, other than those that run all along: those it depends
	// on (and theirs), and the services implied by depends that those that run all along need
	// (trials of their own).
	var visit func(j int, with map[int]bool)
	visit = func(j int, with map[int]bool) {
		for _, d := range trials[j].Depends {
			if k := index[d.Trial]; trials[k].Service && !always[k] && !with[k] {
				with[k] = true
				visit(k, with)
			}
		}
	}
	base := map[int]bool{}
	for i := range trials {
		if always[i] {
			visit(i, base)
		}
	}
	for i, t := range trials {
		if always[i] {
			continue
		}
		with := maps.Clone(base)
		visit(i, with)
		delete(with, i)
		group := []int{i}
		var names []string
		for k := range trials {
			if with[k] {
				group = append(group, k)
				names = append(names, trials[k].Name)
			}
		}
		if t.DeclaredService() {
			// A service trials depend on runs beside them: their lines say what does not fit,
			// unless it cannot fit even an empty host.
			if why := unfit(trials, []int{i}, c); why != "" {
				out = append(out, fmt.Sprintf("service %s %s", t.Name, why))
			}
			continue
		}
		if why := unfit(trials, group, c); why != "" {
			if len(names) > 0 {
				why += " with the services it runs beside (" + strings.Join(names, ", ") + ")"
			}
			out = append(out, fmt.Sprintf("trial %s %s", t.Name, why))
			continue
		}
		reqs := make([]request, len(group))
		var beside []string
		for k, j := range group {
			reqs[k] = requestOf(trials[j].Resources)
			if k > 0 {
				beside = append(beside, trials[j].Name+": "+describeResources(trials[j].Resources))
			}
		}
		if !p.fitsAll(reqs) {
			ask := describeResources(t.Resources)
			if len(beside) > 0 {
				ask += ", with the services it runs beside (" + strings.Join(beside, "; ") + ")"
			}
			out = append(out, fmt.Sprintf("trial %s asks for %s: that does not fit in what the services that run all along leave free (%s), as the run starts them first, each on the same devices every time (%s); give those services fewer resources, or run %s in a run of its own",
				t.Name, ask, describeFree(&p, reqs), strings.Join(held, "; "), t.Name))
		}
	}
	return out
}

// describeResources writes what a trial asks for ("gpu 0.7, cpu 2").
func describeResources(r trial.Resources) string {
	var parts []string
	if r.GPU > 0 {
		parts = append(parts, fmt.Sprintf("gpu %g", r.GPU))
	}
	if r.MIG != "" {
		parts = append(parts, "mig "+r.MIG)
	}
	if r.CPU > 0 {
		parts = append(parts, fmt.Sprintf("cpu %g", r.CPU))
	}
	if r.Memory > 0 {
		parts = append(parts, "memory "+quantity(r.Memory))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// describeHeld writes what service t holds, and on which devices ("s1: gpu 0.3 on GPU-0").
func describeHeld(t trial.Trial, g *grant, p *pool) string {
	s := t.Name + ": " + describeResources(t.Resources)
	if ids := p.ids(*g); len(ids) > 0 {
		s += " on " + strings.Join(ids, " and ")
	}
	return s
}

// describeFree writes what p has free of the kinds reqs ask for ("GPU-0 0.3, GPU-1 0.4, cpu 2").
func describeFree(p *pool, reqs []request) string {
	var gpu, cpu, mem bool
	for _, q := range reqs {
		gpu = gpu || q.whole > 0 || q.share > 0 || q.mig != ""
		cpu, mem = cpu || q.cpu > 0, mem || q.mem > 0
	}
	var parts []string
	for i, d := range p.devs {
		if gpu {
			parts = append(parts, fmt.Sprintf("%s %g", d.ID, float64(p.free[i])/gpuUnit))
		}
	}
	if cpu && p.cpu >= 0 {
		parts = append(parts, fmt.Sprintf("cpu %g", float64(p.cpu)/1000))
	}
	if mem && p.mem >= 0 {
		// In whole MiB: a host's memory is seldom a round number of bytes.
		parts = append(parts, "memory "+quantity(p.mem&^(1<<20-1)))
	}
	// Not empty: what asks for nothing of a kind the host counts fits anywhere.
	return strings.Join(parts, ", ")
}

// unfit says why the trials of group cannot run at once on c, or "".
func unfit(trials []trial.Trial, group []int, c *Capacity) string {
	var cpu float64
	var mem int64
	reqs := make([]request, 0, len(group))
	wholes, shares, migs := 0, 0.0, map[string]int{}
	for _, k := range group {
		r := trials[k].Resources
		cpu += r.CPU
		mem += r.Memory
		reqs = append(reqs, requestOf(r))
		switch {
		case r.GPU >= 1:
			wholes += int(r.GPU)
		case r.GPU > 0:
			shares += r.GPU
		case r.MIG != "":
			migs[r.MIG]++
		}
	}
	p := newPool(c)
	if p.fitsAll(reqs) {
		return ""
	}
	var why []string
	if c.CPU > 0 && cpu > c.CPU {
		why = append(why, fmt.Sprintf("%g CPUs of the host's %g", cpu, c.CPU))
	}
	if c.Memory > 0 && mem > c.Memory {
		why = append(why, fmt.Sprintf("%s of memory of the host's %s", quantity(mem), quantity(c.Memory)))
	}
	hostWhole, hostMIG := 0, map[string]int{}
	for _, d := range c.GPUs {
		if d.MIG == "" {
			hostWhole++
		} else {
			hostMIG[d.MIG]++
		}
	}
	if wholes > 0 || shares > 0 {
		ask := fmt.Sprintf("%d GPUs", wholes)
		if shares > 0 {
			ask = fmt.Sprintf("%d GPUs and %g of shared ones", wholes, shares)
		}
		if wholes > hostWhole || (shares > 0 && hostWhole == 0) || len(why) == 0 {
			why = append(why, fmt.Sprintf("%s of the host's %d", ask, hostWhole))
		}
	}
	for profile, n := range migs {
		if n > hostMIG[profile] {
			why = append(why, fmt.Sprintf("%d MIG instances %s of the host's %d", n, profile, hostMIG[profile]))
		}
	}
	if len(why) == 0 {
		why = append(why, "more than the host has")
	}
	return "asks for " + strings.Join(why, " and ")
}

// queues holds the trials waiting for a slot and resources: one queue per request, each lowest
// plan index first, so that a trial that does not fit does not hold back smaller ones behind
// it, and finding the next trial to start costs one look per kind of request.
type queues struct {
	byReq map[request]*readyQueue
	order []request
}

func (qs *queues) push(r request, i int) {
	if qs.byReq == nil {
		qs.byReq = map[request]*readyQueue{}
	}
	q := qs.byReq[r]
	if q == nil {
		q = &readyQueue{}
		qs.byReq[r] = q
		qs.order = append(qs.order, r)
	}
	heap.Push(q, i)
}

// next returns the lowest plan index among the queues whose request ok accepts, and removes it.
func (qs *queues) next(ok func(request) bool) (int, bool) {
	best, bestReq := -1, request{}
	for _, r := range qs.order {
		q := qs.byReq[r]
		if q.Len() == 0 || (best >= 0 && (*q)[0] > best) || !ok(r) {
			continue
		}
		best, bestReq = (*q)[0], r
	}
	if best < 0 {
		return 0, false
	}
	heap.Pop(qs.byReq[bestReq])
	return best, true
}

func (qs *queues) clear() {
	for _, q := range qs.byReq {
		*q = (*q)[:0]
	}
}

// readyQueue holds trials, lowest plan index first.
type readyQueue []int

func (q readyQueue) Len() int           { return len(q) }
func (q readyQueue) Less(i, j int) bool { return q[i] < q[j] }
func (q readyQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)        { *q = append(*q, x.(int)) }
func (q *readyQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// quantity writes bytes as experiment files do ("24Gi").
func quantity(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }
