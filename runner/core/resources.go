package core

import (
	"container/heap"
	"fmt"
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

// Unfit lists the trials that can never start on c, each with the numbers: a run refuses them
// before anything starts. A trial runs beside the services it depends on (and theirs), and
// beside the services nothing depends on, which run all along: together they must fit.
func Unfit(trials []trial.Trial, c *Capacity) []string {
	if c == nil {
		return nil
	}
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
	var always []int // services that run all along
	for i, t := range trials {
		if t.Service && !dependedOn[i] {
			always = append(always, i)
		}
	}
	var out []string
	for i, t := range trials {
		with := map[int]bool{}
		var visit func(j int)
		visit = func(j int) {
			for _, d := range trials[j].Depends {
				if k := index[d.Trial]; trials[k].Service && !with[k] && k != i {
					with[k] = true
					visit(k)
				}
			}
		}
		visit(i)
		for _, k := range always {
			if k != i && !with[k] {
				with[k] = true
				visit(k)
			}
		}
		delete(with, i)
		group := []int{i}
		var names []string
		for k := range trials {
			if with[k] {
				group = append(group, k)
				names = append(names, trials[k].Name)
			}
		}
		if why := unfit(trials, group, c); why != "" {
			if len(names) > 0 {
				why += " with the services it runs beside (" + strings.Join(names, ", ") + ")"
			}
			out = append(out, fmt.Sprintf("trial %s %s", t.Name, why))
		}
	}
	return out
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
