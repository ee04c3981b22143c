package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
)

// gatedBlob is a store in memory whose Puts of the keys in gates wait until the gate is opened.
// It fails the test when two Puts of one key overlap.
type gatedBlob struct {
	t     *testing.T
	mu    sync.Mutex
	objs  map[string][]byte
	busy  map[string]bool
	gates map[string]chan struct{}
	// entered is told the key of each Put that reached its gate.
	entered chan string
}

func (b *gatedBlob) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	b.mu.Lock()
	if b.busy[key] {
		b.t.Errorf("two writes of %s at once", key)
	}
	b.busy[key] = true
	gate := b.gates[key]
	b.mu.Unlock()
	if gate != nil {
		b.entered <- key
		<-gate
	}
	b.mu.Lock()
	b.objs[key] = data
	b.busy[key] = false
	b.mu.Unlock()
	return nil
}

func (b *gatedBlob) Create(ctx context.Context, key string, r io.Reader, size int64) error {
	return b.Put(ctx, key, r, size)
}

func (b *gatedBlob) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.objs[key]
	if !ok {
		return nil, store.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (b *gatedBlob) Stat(ctx context.Context, key string) (store.Info, error) {
	return store.Info{}, errors.New("not used")
}

func (b *gatedBlob) List(ctx context.Context, prefix string, fn func(store.Info) error) error {
	return errors.New("not used")
}

func (b *gatedBlob) Delete(ctx context.Context, key string) error { return errors.New("not used") }

func (b *gatedBlob) Location() string { return "memory" }

// A record that a start waits for is not held behind a write that takes long, and a trial's
// records are still written one at a time, in order.
func TestPersisterWritesAroundASlowWrite(t *testing.T) {
	gate := make(chan struct{})
	keyA := store.TrialKey("r", "a", "trial.json")
	blob := &gatedBlob{t: t, objs: map[string][]byte{}, busy: map[string]bool{}, gates: map[string]chan struct{}{keyA: gate}, entered: make(chan string, 4)}
	events := make(chan core.Event, 16)
	p := newPersister(store.Runs{Blob: blob}, func(ev core.Event) { events <- ev }, discard{})
	p.start(context.Background())
	rec := func(trial, version int, name string) core.Persist {
		return core.Persist{Trial: trial, Version: version, Record: &store.TrialRecord{Run: "r", Name: name, Status: store.Status(fmt.Sprint("v", version))}}
	}
	p.add([]core.Persist{rec(0, 1, "a")})
	<-blob.entered // a's first record is being written, and waits
	p.add([]core.Persist{rec(1, 1, "b")})
	if ev, ok := (<-events).(core.Persisted); !ok || ev.Trial != 1 || ev.Version != 1 {
		t.Fatalf("while a's write waits: %#v, want b's record stored", ev)
	}
	// a's next record waits for the one being written, whichever writer takes it.
	p.add([]core.Persist{rec(0, 2, "a")})
	close(gate)
	var got []int
	for range 2 {
		ev := (<-events).(core.Persisted)
		if ev.Trial != 0 {
			t.Fatalf("unexpected %#v", ev)
		}
		got = append(got, ev.Version)
	}
	p.close()
	if fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("a's records stored in the order %v, want [1 2]", got)
	}
	var last store.TrialRecord
	if err := json.Unmarshal(blob.objs[keyA], &last); err != nil || last.Status != "v2" {
		t.Fatalf("a's record in the store: %+v (%v), want its second", last, err)
	}
}

type discard struct{}

func (discard) Error(string, ...any) {}
