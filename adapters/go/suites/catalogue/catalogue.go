// Package catalogue is the catalogue suite (docs/CATALOGUE.md): discovery
// of the catalogue manifest, a receiver that judges every hooks/observe by
// its schema, then by source-local lineage (sdk/lineage.go), and a host
// that evaluates registration documents against the discovered manifest
// (sdk/registration.go). The client never reads a row's expected.
package catalogue

import (
	"sync"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps"
	"ahp-interop/adapters/go/sdk"
)

// Name is the config's suite.
const Name = "catalogue"

// Suite registers the catalogue suite: both lifecycle commands, on the step
// engine. Its configs carry no upload blocks (uploadAuth may be present and
// is unused).
var Suite = steps.Suite{
	Spec:          contract.SuiteSpec{Name: Name},
	ClientSchemas: Schemas,
	ServerSchemas: append(steps.ServerSchemas(), sdk.CapabilitiesRequest),
	Server: func(schemas *sdk.Schemas, proc *contract.SuiteServer) (contract.SuiteDispatcher, error) {
		return NewServer(schemas, proc), nil
	},
	Rows: func() steps.Rows { return &rows{} },
}.Registration()

// Error kinds of a rejected delivery.
const (
	SchemaError  = "schema"
	LineageError = "lineage"
)

// Ops are the catalogue step ops this client runs.
var Ops = map[string]bool{"notify": true, "rawNotify": true, "register": true}

// Schemas are the canonical schemas the catalogue client uses.
var Schemas = []string{sdk.CapabilitiesRequest, sdk.CapabilitiesResponse, steps.ObserveNotification,
	sdk.RegistrationSchema}

// NotificationStatuses are the HTTP answers of a receiver that judged a
// notification (202 or 204 accepted, 400 and 409 rejected); any other
// status means it refused the message before judging it.
var NotificationStatuses = map[int]bool{202: true, 204: true, 400: true, 409: true}

// Server is the AHP side of a catalogue server: discovery and the
// receiver, over one receipt log and one lineage state.
type Server struct {
	schemas *sdk.Schemas
	proc    *contract.SuiteServer
	mu      sync.Mutex // a verdict and its receipt, in one order
	lineage *sdk.Lineage
}

// NewServer makes the receiver of proc; its control listener's
// /wait-observed counts observed and rejected entries, and it serves no
// control call but /wait-observed (besides /health, /receipts, /shutdown).
func NewServer(schemas *sdk.Schemas, proc *contract.SuiteServer) *Server {
	proc.ObservedKinds = []string{contract.EntryObserved, contract.EntryRejected}
	proc.ControlCalls = map[string]bool{"/wait-observed": true}
	return &Server{schemas: schemas, proc: proc, lineage: sdk.NewLineage()}
}

// Dispatch answers one parsed message.
func (s *Server) Dispatch(message any) (answer contract.SuiteAnswer) {
	msg, ok := message.(map[string]any)
	if !ok {
		return steps.Reply(contract.RPCError(nil, contract.InvalidRequest, "not a single JSON-RPC object", nil))
	}
	id, hasID := msg["id"]
	defer func() {
		if r := recover(); r != nil {
			steps.Logf("server", "internal error: %v", r)
			answer = steps.Reply(contract.RPCError(id, contract.InternalError, "internal error", nil))
		}
	}()
	method, _ := msg["method"].(string)
	if method == "hooks/observe" {
		return s.observe(msg) // one with an id fails the schema (400)
	}
	if !hasID {
		steps.Logf("server", "ignored a notification %s", sdk.EncodeString(msg["method"]))
		return contract.SuiteAnswer{}
	}
	if method == "hooks/capabilities" {
		return s.discovery(msg)
	}
	steps.Logf("server", "method %s is not served by the catalogue suite", sdk.EncodeString(msg["method"]))
	return steps.Reply(contract.RPCError(id, contract.MethodNotFound, "method not found", nil))
}

// Manifest is M: GET /capabilities (for upstream clients) answers the bare
// capabilities of its tool.before entry, unrecorded: it is no request a
// client sent.
func (s *Server) Manifest() map[string]any { return sdk.CatalogueManifest() }

// discovery answers hooks/capabilities with M (an invalid request -32602)
// and records both just before the answer is written.
func (s *Server) discovery(msg map[string]any) contract.SuiteAnswer {
	id := msg["id"]
	var response map[string]any
	if problem := s.schemas.Check(sdk.CapabilitiesRequest, msg); problem != "" {
		steps.Logf("server", "invalid discovery request: %s", problem)
		response = contract.RPCError(id, contract.InvalidParams, "invalid capabilities request", nil)
	} else {
		response = map[string]any{"jsonrpc": "2.0", "id": id, "result": sdk.CatalogueDiscoveryResult()}
	}
	entry := map[string]any{"kind": contract.EntryDiscovery, "request": sdk.Clone(msg), "response": sdk.Clone(response)}
	a := steps.Reply(response)
	a.Before = func() { s.proc.Entries.Record(entry, "id") }
	return a
}

// observe judges one hooks/observe: schema (400), lineage (409), else
// observed (202); the verdict is recorded before the answer. Over stdio
// none of these answers is written.
func (s *Server) observe(msg map[string]any) contract.SuiteAnswer {
	event, _ := sdk.Path(msg, "params", "event").(map[string]any)
	var eventID any
	if id, isString := event["id"].(string); isString {
		eventID = id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if problem := s.schemas.Check(steps.ObserveNotification, msg); problem != "" || event == nil {
		steps.Logf("server", "observation %s rejected (schema): %s", sdk.EncodeString(eventID), problem)
		s.reject(eventID, msg, SchemaError)
		return contract.SuiteAnswer{Status: 400}
	}
	if v := s.lineage.Admit(event); !v.Accepted {
		steps.Logf("server", "observation %s rejected (lineage, %s): %s", sdk.EncodeString(eventID), v.Rule, v.Reason)
		s.reject(eventID, msg, LineageError)
		return contract.SuiteAnswer{Status: 409}
	}
	s.proc.Entries.Record(map[string]any{"kind": contract.EntryObserved, "eventId": eventID,
		"event": sdk.Clone(event), "message": sdk.Clone(msg)}, "eventId")
	return contract.SuiteAnswer{Status: 202}
}

func (s *Server) reject(eventID any, msg map[string]any, kind string) {
	s.proc.Entries.Record(map[string]any{"kind": contract.EntryRejected, "eventId": eventID,
		"message": sdk.Clone(msg), "errorKind": kind}, "eventId")
}

// rows are one client run's rows; the discovery is the run's.
type rows struct {
	discovery       any // the discovery response as it arrived (nil: none)
	manifest        any // its result.manifest when the response is usable
	manifestProblem string
}

// Start makes the run's discovery.
func (r *rows) Start(c *steps.Client) { r.discover(c) }

// Report carries the discovery response as it arrived (null: none).
func (r *rows) Report(c *steps.Client, report map[string]any) { report["discovery"] = r.discovery }

// discover sends the one hooks/capabilities of the run (over HTTP to the
// endpoint's /capabilities) and keeps the answer.
func (r *rows) discover(c *steps.Client) {
	r.manifestProblem = "no discovery was made"
	if c.Problem() != "" {
		r.manifestProblem = c.Problem()
		return
	}
	request := contract.Discovery()
	if problem := c.Schemas().Check(sdk.CapabilitiesRequest, request); problem != "" {
		r.manifestProblem = "the discovery request is invalid: " + problem
		return
	}
	status, answer, err := c.ExchangeAt("capabilities", request)
	fail := func(format string, args ...any) {
		r.manifestProblem = "discovery: " + steps.Failf(format, args...).Error()
		steps.Logf("client", "%s", r.manifestProblem)
	}
	switch {
	case err != nil:
		fail("%v", err)
		return
	case answer == any(steps.Malformed):
		fail("the answer is not strict JSON")
		return
	}
	r.discovery = answer
	if !c.Stdio() && status != 200 {
		fail("HTTP status %d", status)
		return
	}
	if problem := c.Schemas().Check(sdk.CapabilitiesResponse, answer); problem != "" {
		fail("the answer is not a capabilities response: %s", problem)
		return
	}
	if !sdk.Equal(sdk.Path(answer, "id"), request["id"]) {
		fail("the answer's id %s is not the request's", sdk.EncodeString(sdk.Path(answer, "id")))
		return
	}
	r.manifest = sdk.Path(answer, "result", "manifest")
}

// Row runs one row's steps.
func (r *rows) Row(c *steps.Client, row contract.Scenario) (map[string]any, error) {
	steplist, ok := row.Raw["steps"].([]any)
	if !ok {
		return nil, steps.Failf("the scenario has no steps array")
	}
	for _, step := range steplist {
		if op, _ := sdk.Path(step, "op").(string); !Ops[op] {
			return nil, steps.Unsupported("step op " + sdk.EncodeString(sdk.Path(step, "op")) + " is not implemented by ahp-go")
		}
	}
	sent, registrations := []any{}, []any{}
	for i, raw := range steplist {
		step := raw.(map[string]any)
		op := step["op"].(string)
		message, hasMessage := step["message"]
		var err error
		switch op {
		case "register":
			var entry map[string]any
			if entry, err = r.register(c, row.ID, step); err == nil {
				registrations = append(registrations, entry)
			}
		case "notify":
			if problem := c.Schemas().Check(steps.ObserveNotification, message); problem != "" {
				steps.Logf("client", "%s: steps[%d]: not sent, the SDK finds it invalid: %s", row.ID, i, problem)
				continue
			}
			fallthrough
		case "rawNotify":
			if !hasMessage {
				err = steps.Failf("the step has no message")
			} else if err = deliver(c, message); err == nil {
				sent = append(sent, sdk.Clone(message))
			}
		}
		if err != nil {
			return nil, steps.Failf("steps[%d] (%s): %v", i, op, err)
		}
	}
	return map[string]any{"sent": sent, "registrations": registrations}, nil
}

// deliver sends one notification unchanged through the real transport,
// then POST /wait-observed with its event id and the number of messages
// this run sent with that id, so its verdict is recorded before the next
// step. Over HTTP the answer is a verdict status (any other: the row fails).
func deliver(c *steps.Client, message any) error {
	eventID, ok := sdk.Path(message, "params", "event", "id").(string)
	if !ok {
		return steps.Failf("the message has no string params.event.id to wait for")
	}
	if ch, isHTTP := c.Channel().(*contract.HTTPChannel); isHTTP {
		status, _, err := ch.ExchangeAt("observe", message, c.Timeout())
		if err != nil {
			return steps.Failf("notification: %v", err)
		}
		if !NotificationStatuses[status] {
			return steps.Failf("the receiver answered HTTP %d: it refused the notification before judging it", status)
		}
	} else if err := c.Channel().Notify(message); err != nil {
		return steps.Failf("notification: %v", err)
	}
	return c.WaitObserved(eventID)
}

// register evaluates a register step's document against the discovered
// manifest; nothing is sent.
func (r *rows) register(c *steps.Client, rowID string, step map[string]any) (map[string]any, error) {
	requirements, ok := step["requirements"].([]any)
	if !ok {
		return nil, steps.Failf("requirements must be an array")
	}
	context, ok := step["context"].(map[string]any)
	if !ok {
		return nil, steps.Failf("context must be an object")
	}
	if r.manifest == nil {
		return nil, steps.Failf("no discovered manifest (%s)", r.manifestProblem)
	}
	verdict := sdk.EvaluateRegistration(step["registration"], r.manifest, requirements, context,
		func(doc any) string { return c.Schemas().Check(sdk.RegistrationSchema, doc) })
	if !verdict.Accepted {
		steps.Logf("client", "%s: registration rejected (%s): %s", rowID, verdict.Rule, verdict.Reason)
	}
	return verdict.Entry(), nil
}
