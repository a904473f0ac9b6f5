package contract

import (
	"fmt"
	"os"
	"sync"

	"ahp-interop/adapters/go/sdk"
)

// JSON-RPC error codes.
const (
	ParseError         = -32700
	InvalidRequest     = -32600
	MethodNotFound     = -32601
	InvalidParams      = -32602
	InternalError      = -32603
	UnsupportedVersion = -32001
)

// RPCError builds a JSON-RPC error response (an id that is neither a string
// nor a number becomes null).
func RPCError(id any, code int, message string, data any) map[string]any {
	if _, isString := id.(string); !isString && !sdk.IsNumber(id) {
		id = nil
	}
	body := map[string]any{"code": code, "message": message}
	if data != nil {
		body["data"] = data
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": body}
}

// Answer is what a server sends back for one message.
type Answer struct {
	Reply    any
	HasReply bool
	Gate     <-chan struct{} // nil: reply at once
}

// Reply answers at once.
func Reply(v any) Answer { return Answer{Reply: v, HasReply: true} }

// NoReply is the answer to a notification.
var NoReply = Answer{}

// Method handles one JSON-RPC request of a backend.
type Method func(msg map[string]any) Answer

// Backend: scripted replies by scenario id, receipts and barriers, shared by
// every transport of a server.
type Backend struct {
	Receipts *Receipts
	Barriers *Barriers
	Methods  map[string]Method
	// Manifest is the discovery manifest hooks/capabilities is answered with
	// (default sdk.DiscoveryManifest); GET /capabilities answers its
	// tool.before capabilities.
	Manifest func() map[string]any

	mu        sync.RWMutex
	scenarios map[string]Scenario
}

// NewBackend makes a backend with the given rows.
func NewBackend(receipts *Receipts, rows []Scenario) (*Backend, error) {
	b := &Backend{Receipts: receipts, Barriers: NewBarriers(), Methods: map[string]Method{},
		Manifest: sdk.DiscoveryManifest}
	if err := b.Load(rows); err != nil {
		return nil, err
	}
	return b, nil
}

// Load replaces the scenario table.
func (b *Backend) Load(rows []Scenario) error {
	table := map[string]Scenario{}
	for _, row := range rows {
		if _, dup := table[row.ID]; dup {
			return fmt.Errorf("duplicate scenario id %q", row.ID)
		}
		table[row.ID] = row
	}
	b.mu.Lock()
	b.scenarios = table
	b.mu.Unlock()
	return nil
}

// Reset is POST /reset: load the file if named (a bad one changes nothing),
// clear the receipt lists and every release.
func (b *Backend) Reset(scenarioFile string) error {
	if scenarioFile != "" {
		rows, err := ReadScenarios(scenarioFile)
		if err != nil {
			return err
		}
		if err := b.Load(rows); err != nil {
			return err
		}
	}
	b.Barriers.Reset()
	b.Receipts.Clear()
	return nil
}

// Scenario finds the row whose id is the request id.
func (b *Backend) Scenario(id any) (Scenario, bool) {
	s, ok := id.(string)
	if !ok {
		return Scenario{}, false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	row, found := b.scenarios[s]
	return row, found
}

// Scripted is the row's response unchanged, held at its barrier if it names one.
func (b *Backend) Scripted(row Scenario) Answer {
	a := Reply(row.Response())
	if name, ok := row.Barrier(); ok {
		a.Gate = b.Barriers.Wait(name)
	}
	return a
}

// Dispatch records the receipt, then answers one parsed message.
func (b *Backend) Dispatch(message any) (answer Answer) {
	msg, ok := message.(map[string]any)
	if !ok {
		return Reply(RPCError(nil, InvalidRequest, "not a single JSON-RPC object", nil))
	}
	kind := KindOf(msg)
	b.Receipts.Record(kind, msg)
	if kind == KindNotification {
		return NoReply
	}
	name, _ := msg["method"].(string)
	method := b.Methods[name]
	if method == nil {
		return Reply(RPCError(msg["id"], MethodNotFound, "method not found", nil))
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "ahp-go server: internal error: %v\n", r)
			answer = Reply(RPCError(msg["id"], InternalError, "internal error", nil))
		}
	}()
	return method(msg)
}
