package sim

// eventKind says what an event does when it fires.
type eventKind uint8

const (
	evSubmit eventKind = iota
	evFinish
	evPodFail
	evRetry
	evNodeFail
	evNodeRecover
	evNodeAdd
	evNodeRemove
	evNodeDrain
	evNodeCordon
	evNodeUncordon
	evTick
	evWake
	evGangTimeout
)

// event is one entry of the queue. Events are values in a slice-backed heap, not pointers,
// so a run with millions of events does not stress the garbage collector.
type event struct {
	t    Time
	seq  uint64
	kind eventKind
	// foreground events keep the simulation alive; ticks, wake-ups and random failure draws
	// do not, so a run ends when the workload is done even though they recur forever.
	foreground bool
	gen        uint32
	idx        int // submitter index, or index into Config.Events
	pod        *Pod
	node       *Node
	gang       *Gang
	model      int // failure model index + 1, or 0
}

func (a *event) before(b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

// eventQueue is a binary min-heap ordered by (time, sequence): a total order, so simultaneous
// events always fire in the order they were scheduled.
type eventQueue struct {
	h []event
}

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) peek() *event { return &q.h[0] }

func (q *eventQueue) push(e event) {
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !q.h[i].before(&q.h[parent]) {
			break
		}
		q.h[i], q.h[parent] = q.h[parent], q.h[i]
		i = parent
	}
}

func (q *eventQueue) pop() event {
	top := q.h[0]
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h[last] = event{}
	q.h = q.h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && q.h[r].before(&q.h[l]) {
			m = r
		}
		if !q.h[m].before(&q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}
