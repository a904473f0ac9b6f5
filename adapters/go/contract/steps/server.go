package steps

import (
	"fmt"
	"os"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// Schema names the step engine checks against.
const (
	ObserveNotification = "observe-notification.schema.json"
	UploadReceipt       = "content-upload-receipt.schema.json"
)

// Scripted faults [ext]: a responseSequences entry {"fault": KIND}, and
// observeFaults entries "silent".
const (
	FaultServerError = "server-error"
	FaultMalformed   = "malformed"
	FaultTimeout     = "timeout"
	Silent           = "silent"
)

// MalformedBody is the 25 bytes a malformed fault sends (not JSON).
var MalformedBody = []byte(`{"jsonrpc": "2.0", "id": `)

func unsolicitedObserver() map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": "unsolicited-observer", "result": map[string]any{
		"protocolVersion": "draft",
		"effects":         []any{map[string]any{"type": "deny", "reason": "observer must not decide"}},
	}}
}

// Logf writes one stderr line of role.
func Logf(role, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ahp-go %s: %s\n", role, fmt.Sprintf(format, args...))
}

// FaultOf is the fault a sequence entry scripts, else "".
func FaultOf(entry any) string {
	m, ok := entry.(map[string]any)
	if !ok || len(m) != 1 {
		return ""
	}
	switch f, _ := m["fault"].(string); f {
	case FaultServerError, FaultMalformed, FaultTimeout:
		return f
	}
	return ""
}

type rowKey struct {
	row contract.Scenario
	key string
}

// Server is the step server's AHP side (docs/LIFECYCLE.md): each request
// of the rows answered by its id from their responses or response
// sequences (held at its barrier until released, or a scripted fault), each
// observation recorded and answered by an unsolicited frame unless a silent
// observer never answers it.
type Server struct {
	schemas  *sdk.Schemas
	proc     *contract.SuiteServer
	requests map[string]rowKey // request id -> its scenario and key (the first wins)
	events   map[string]rowKey // event id -> likewise
	// the boundary event ids (requests.a's event) of the chains with held observers
	heldObservers map[string]bool
}

// NewServer indexes the rows' requests by id and event id.
func NewServer(schemas *sdk.Schemas, proc *contract.SuiteServer, rows []contract.Scenario) *Server {
	s := &Server{schemas: schemas, proc: proc, requests: map[string]rowKey{}, events: map[string]rowKey{},
		heldObservers: map[string]bool{}}
	for _, row := range rows {
		if id, ok := sdk.Path(row.Raw, "requests", "a", "params", "event", "id").(string); ok &&
			sdk.Path(row.Raw, "chain", "holdObservers") == true {
			s.heldObservers[id] = true
		}
		requests, _ := row.Raw["requests"].(map[string]any)
		for _, key := range sortedKeys(requests) {
			if id, ok := sdk.Path(requests[key], "id").(string); ok {
				if _, seen := s.requests[id]; !seen {
					s.requests[id] = rowKey{row, key}
				}
			}
			if id, ok := sdk.Path(requests[key], "params", "event", "id").(string); ok {
				if _, seen := s.events[id]; !seen {
					s.events[id] = rowKey{row, key}
				}
			}
		}
	}
	return s
}

// Dispatch answers one parsed message.
func (s *Server) Dispatch(message any) (answer contract.SuiteAnswer) {
	msg, ok := message.(map[string]any)
	if !ok {
		return Reply(contract.RPCError(nil, contract.InvalidRequest, "not a single JSON-RPC object", nil))
	}
	method, _ := msg["method"].(string)
	if method == "hooks/observe" {
		return s.observe(msg) // one with an id fails the schema (400)
	}
	id, hasID := msg["id"]
	if !hasID {
		Logf("server", "ignored a notification %s", sdk.EncodeString(msg["method"]))
		return contract.SuiteAnswer{}
	}
	defer func() {
		if r := recover(); r != nil {
			Logf("server", "internal error: %v", r)
			answer = Reply(contract.RPCError(id, contract.InternalError, "internal error", nil))
		}
	}()
	switch method {
	case "hooks/intercept":
		return s.intercept(msg)
	case "hooks/capabilities":
		return Reply(map[string]any{"jsonrpc": "2.0", "id": id, "result": sdk.DiscoveryResult()})
	}
	return Reply(contract.RPCError(id, contract.MethodNotFound, "method not found", nil))
}

// Manifest is the core discovery manifest, as hooks/capabilities answers.
func (s *Server) Manifest() map[string]any { return sdk.DiscoveryManifest() }

// Reply is the answer that writes v.
func Reply(v any) contract.SuiteAnswer { return contract.SuiteAnswer{Reply: v, HasReply: true} }

func (s *Server) missingRefs(msg map[string]any) []string {
	var missing []string
	for _, ref := range sdk.BodyRefs(sdk.Path(msg, "params", "event", "items")) {
		if !s.proc.Store.Has(ref) {
			missing = append(missing, ref)
		}
	}
	return missing
}

func (s *Server) intercept(msg map[string]any) contract.SuiteAnswer {
	id := msg["id"]
	n := s.proc.Entries.Record(map[string]any{"kind": contract.EntryReceived, "id": id, "message": msg}, "id")
	replied := func() {
		s.proc.Entries.Record(map[string]any{"kind": contract.EntryReplied, "id": id}, "id")
	}
	refuse := func(status int, format string, args ...any) contract.SuiteAnswer {
		text := fmt.Sprintf(format, args...)
		Logf("server", "intercept %s: %s", sdk.EncodeString(id), text)
		a := Reply(contract.RPCError(id, contract.InvalidParams, text, nil))
		a.Before, a.Status = replied, status
		return a
	}
	if problem := s.schemas.Check(sdk.InterceptRequest, msg); problem != "" {
		return refuse(0, "invalid intercept request: %s", problem)
	}
	if missing := s.missingRefs(msg); len(missing) > 0 {
		return refuse(409, "no stored content for body ref %s", sdk.EncodeString(missing[0]))
	}
	sid, _ := id.(string)
	found, ok := s.requests[sid]
	if !ok {
		return refuse(0, "unknown scenario request id")
	}
	var response any
	if seq, isList := sdk.Path(found.row.Raw, "responseSequences", found.key).([]any); isList && len(seq) > 0 {
		response = seq[min(n, len(seq))-1]
	} else if responses, isObject := found.row.Raw["responses"].(map[string]any); isObject && hasKey(responses, found.key) {
		response = responses[found.key]
	} else {
		return refuse(0, "scenario %s has no response for %s", found.row.ID, found.key)
	}
	gate := s.proc.Barriers.Wait(sid)
	switch FaultOf(response) {
	case FaultTimeout:
		Logf("server", "intercept %s: scripted timeout (receipt %d)", sid, n)
		return contract.SuiteAnswer{Never: true}
	case FaultServerError:
		a := Reply(contract.RPCError(id, contract.InternalError, "scripted server error", nil))
		a.Status, a.Gate, a.Before = 500, gate, replied
		return a
	case FaultMalformed:
		return contract.SuiteAnswer{Raw: MalformedBody, HasReply: true, Gate: gate, Before: replied}
	}
	a := Reply(response)
	a.Gate, a.Before = gate, replied
	return a
}

func (s *Server) observe(msg map[string]any) contract.SuiteAnswer {
	if problem := s.schemas.Check(ObserveNotification, msg); problem != "" {
		Logf("server", "invalid observation: %s", problem)
		return contract.SuiteAnswer{Status: 400}
	}
	if missing := s.missingRefs(msg); len(missing) > 0 {
		Logf("server", "observation names no stored content: %s", sdk.EncodeString(missing[0]))
		return contract.SuiteAnswer{Status: 409}
	}
	event, _ := sdk.Path(msg, "params", "event").(map[string]any)
	eid, _ := event["id"].(string)
	// a held observer, recorded as upstream servers do (the client marks it too)
	var blocked map[string]any
	if s.heldObservers[eid] {
		blocked = map[string]any{"kind": contract.EntryObserverBlocked, "id": eid}
	}
	n := s.proc.Entries.RecordAfter(blocked, map[string]any{"kind": contract.EntryObserved, "eventId": event["id"],
		"event": event, "message": msg}, "eventId")
	found, ok := s.events[eid]
	if !ok {
		return contract.SuiteAnswer{}
	}
	if faults, isList := sdk.Path(found.row.Raw, "observeFaults", found.key).([]any); isList &&
		n <= len(faults) && faults[n-1] == Silent {
		Logf("server", "observation %d of %s: a silent observer", n, eid)
		return contract.SuiteAnswer{Never: true}
	}
	return Reply(unsolicitedObserver()) // deliberately adversarial: a client must ignore it
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }
