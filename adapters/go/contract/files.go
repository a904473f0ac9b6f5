package contract

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"ahp-interop/adapters/go/sdk"
)

// WriteJSONAtomic writes v to path through a temporary file in the same
// directory and a rename, so a reader never sees half a file.
func WriteJSONAtomic(path string, v any) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	data := append(sdk.Encode(v), '\n')
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// WriteReadiness writes {"endpoint", "controlEndpoint", "pid"} (endpoint nil over stdio).
func WriteReadiness(path string, endpoint any, control string) error {
	return WriteJSONAtomic(path, map[string]any{
		"endpoint":        endpoint,
		"controlEndpoint": control,
		"pid":             os.Getpid(),
	})
}

// Receipt kinds and the lists GET /receipts answers.
const (
	KindRequest      = "request"
	KindDiscovery    = "discovery"
	KindNotification = "notification"
)

var receiptLists = map[string]string{
	KindRequest:      "requests",
	KindDiscovery:    "discovery",
	KindNotification: "notifications",
}

// Receipts: every AHP message the server received, by kind, in arrival
// order; with a log, each receipt is appended as one line and flushed before
// the reply is written. Clear never truncates the log.
type Receipts struct {
	mu    sync.Mutex
	lists map[string][]any
	log   *os.File
}

// NewReceipts opens the receipt log (append-only) when path is not "".
func NewReceipts(path string) (*Receipts, error) {
	r := &Receipts{lists: map[string][]any{}}
	for kind := range receiptLists {
		r.lists[kind] = []any{}
	}
	if path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		r.log = f
	}
	return r, nil
}

// KindOf classifies a JSON-RPC message object.
func KindOf(msg map[string]any) string {
	if _, has := msg["id"]; !has {
		return KindNotification
	}
	if msg["method"] == "hooks/capabilities" {
		return KindDiscovery
	}
	return KindRequest
}

// Record stores one receipt (and writes it to the log, synced to the file).
func (r *Receipts) Record(kind string, msg any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists[kind] = append(r.lists[kind], msg)
	if r.log != nil {
		line := append(sdk.Encode(map[string]any{"kind": kind, "message": msg}), '\n')
		if _, err := r.log.Write(line); err != nil {
			fmt.Fprintf(os.Stderr, "ahp-go server: receipt log write failed: %v\n", err)
		}
	}
}

// Snapshot is the GET /receipts answer.
func (r *Receipts) Snapshot() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]any{}
	for kind, name := range receiptLists {
		out[name] = append([]any{}, r.lists[kind]...)
	}
	return out
}

// Clear empties the lists (not the log).
func (r *Receipts) Clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for kind := range r.lists {
		r.lists[kind] = []any{}
	}
}

// Barriers are named gates: a release is sticky until Reset; ReleaseAll (at
// shutdown) opens every gate, also later ones.
type Barriers struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
	open  map[string]bool
	all   bool
}

// NewBarriers makes an empty set.
func NewBarriers() *Barriers {
	return &Barriers{gates: map[string]chan struct{}{}, open: map[string]bool{}}
}

func (b *Barriers) gate(name string) chan struct{} {
	ch, ok := b.gates[name]
	if !ok {
		ch = make(chan struct{})
		b.gates[name] = ch
		if b.all {
			close(ch)
			b.open[name] = true
		}
	}
	return ch
}

// Wait is a channel closed once the barrier is released.
func (b *Barriers) Wait(name string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gate(name)
}

// Release opens the barrier (sticky).
func (b *Barriers) Release(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := b.gate(name)
	if !b.open[name] {
		close(ch)
		b.open[name] = true
	}
}

// ReleaseAll opens every barrier, now and later.
func (b *Barriers) ReleaseAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.all = true
	for name, ch := range b.gates {
		if !b.open[name] {
			close(ch)
			b.open[name] = true
		}
	}
}

// Reset forgets every release (replies still held stay held).
func (b *Barriers) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for name := range b.open {
		delete(b.gates, name)
	}
	b.open = map[string]bool{}
}
