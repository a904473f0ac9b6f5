package contract

import (
	"sync"
	"time"

	"ahp-interop/adapters/go/sdk"
)

// Entry kinds of a lifecycle-style server (docs/LIFECYCLE.md): its own, and
// the marks a client posts.
const (
	EntryReceived = "received"
	EntryReplied  = "replied"
	EntryUpload   = "upload"
	EntryObserved = "observed"
	EntryEmitted  = "emitted"
	// a held observer: the client's mark, and the lifecycle server's own
	// {kind, id: event id} just before the notification's observed entry
	EntryObserverBlocked = "observer-blocked"
	// the catalogue suite's
	EntryDiscovery = "discovery"
	EntryRejected  = "rejected"
)

// Marks are the entry kinds POST /mark accepts.
var Marks = map[string]bool{
	"acquired": true, "accepted": true, "cancelled": true, "discarded": true,
	"chain-settled": true, "observer-blocked": true,
	"row-start": true, // the elicitation suite's
}

// WaitLimit bounds a control wait (then 408).
const WaitLimit = 30 * time.Second

type entryKey struct{ kind, id string }

// EntryLog is one ordered receipt log under one lock; GET /receipts answers
// {"entries": [...]} in the order recorded.
type EntryLog struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every record
	entries []any
	counts  map[entryKey]int
}

// NewEntryLog makes an empty log.
func NewEntryLog() *EntryLog {
	return &EntryLog{changed: make(chan struct{}), entries: []any{}, counts: map[entryKey]int{}}
}

// Record appends entry; it returns how many entries of its kind name the same
// value under key ("id", or "eventId" for observations), this one included.
func (l *EntryLog) Record(entry map[string]any, key string) int {
	return l.RecordAfter(nil, entry, key)
}

// RecordAfter is Record with before (nil: none; counted under "id") appended
// just before entry under the same lock, so nothing comes between them.
func (l *EntryLog) RecordAfter(before, entry map[string]any, key string) int {
	kind, _ := entry["kind"].(string)
	k := entryKey{kind, sdk.EncodeString(entry[key])}
	l.mu.Lock()
	defer l.mu.Unlock()
	if before != nil {
		beforeKind, _ := before["kind"].(string)
		l.entries = append(l.entries, before)
		l.counts[entryKey{beforeKind, sdk.EncodeString(before["id"])}]++
	}
	l.entries = append(l.entries, entry)
	l.counts[k]++
	close(l.changed)
	l.changed = make(chan struct{})
	return l.counts[k]
}

// Count of entries of kind naming id.
func (l *EntryLog) Count(kind string, id any) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[entryKey{kind, sdk.EncodeString(id)}]
}

// Snapshot is the GET /receipts answer.
func (l *EntryLog) Snapshot() map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return map[string]any{"entries": sdk.Clone(l.entries)}
}

// Wait blocks until count entries of kind name id (true), or until limit
// passes or stop closes (false).
func (l *EntryLog) Wait(kind string, id any, count int, limit time.Duration, stop <-chan struct{}) bool {
	return l.WaitAny([]string{kind}, id, count, limit, stop)
}

// WaitAny is Wait counting the entries of every kind of kinds together.
func (l *EntryLog) WaitAny(kinds []string, id any, count int, limit time.Duration, stop <-chan struct{}) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	name := sdk.EncodeString(id)
	for {
		l.mu.Lock()
		n, changed := 0, l.changed
		for _, kind := range kinds {
			n += l.counts[entryKey{kind, name}]
		}
		l.mu.Unlock()
		if n >= count {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		case <-stop:
			return false
		}
	}
}
