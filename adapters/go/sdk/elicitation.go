package sdk

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Elicitation events (docs/ELICITATION.md), no I/O: the receiver's checks
// and correlation state, and the host's rules at both boundaries. An MCP
// elicitation/create request and its ElicitResult travel as
// user.elicitation.request / .result events whose request / result part is
// one text part holding the serialized MCP body.

// Elicitation names.
const (
	ElicitationRequest     = "user.elicitation.request"
	ElicitationResultEvent = "user.elicitation.result"
	DefRequestParams       = "mcp-elicitation.schema.json#/$defs/requestParams"
	DefMCPResult           = "mcp-elicitation.schema.json#/$defs/result"
)

// ElicitationDefinitions are the MCP definitions this file checks against.
func ElicitationDefinitions() []string { return list(DefRequestParams, DefMCPResult) }

// Refusal is the receiver refusing an intercept (nothing recorded): HTTP
// Status (400, or 409 for content it does not have), JSON-RPC -32602.
type Refusal struct {
	Msg    string
	Status int
}

func (r *Refusal) Error() string { return r.Msg }

func refuse(format string, args ...any) *Refusal {
	return &Refusal{Msg: fmt.Sprintf(format, args...), Status: 400}
}

// FormSchemas compiles requested form schemas as Draft 2020-12 (formats are
// annotations; nothing is loaded from anywhere), one per distinct schema,
// whatever dialect the schema's own top-level "$schema" names (MCP allows
// one; docs/ELICITATION.md, "Readings settled"): it is dropped before
// compiling, so a draft-07 "$schema" neither switches the draft nor turns
// format assertions on.
type FormSchemas struct {
	mu        sync.Mutex
	compiled  map[string]*jsonschema.Schema
	failures  map[string]string
	resources int
}

// NewFormSchemas is an empty cache.
func NewFormSchemas() *FormSchemas {
	return &FormSchemas{compiled: map[string]*jsonschema.Schema{}, failures: map[string]string{}}
}

// Compile is the validator of schema, or why it is no usable schema.
func (f *FormSchemas) Compile(schema any) (*jsonschema.Schema, string) {
	if _, ok := schema.(map[string]any); !ok {
		return nil, "the requested schema is not an object"
	}
	key := EncodeString(schema)
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.compiled[key]; ok {
		return s, ""
	}
	if why, ok := f.failures[key]; ok {
		return nil, why
	}
	f.resources++
	url := fmt.Sprintf("urn:ahp-go:form:%d", f.resources)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no remote or file references
	var s *jsonschema.Schema
	document := Clone(schema).(map[string]any)
	delete(document, "$schema") // always Draft 2020-12 (DefaultDraft), never the named dialect
	err := c.AddResource(url, document)
	if err == nil {
		s, err = compileSafely(c, url)
	}
	if err != nil {
		why := "the requested schema is not a usable JSON Schema: " + strings.Join(strings.Fields(err.Error()), " ")
		if len(why) > 400 {
			why = why[:400]
		}
		f.failures[key] = why
		return nil, why
	}
	f.compiled[key] = s
	return s, ""
}

func compileSafely(c *jsonschema.Compiler, url string) (s *jsonschema.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return c.Compile(url)
}

// Problem is "" when instance is valid against the form schema, else why.
func (f *FormSchemas) Problem(schema, instance any) string {
	s, why := f.Compile(schema)
	if why != "" {
		return why
	}
	if err := s.Validate(instance); err != nil {
		var ve *jsonschema.ValidationError
		msg := err.Error()
		if errors.As(err, &ve) {
			msg = ve.Error()
		}
		msg = "the requested schema: " + strings.Join(strings.Fields(msg), " ")
		if len(msg) > 400 {
			msg = msg[:400]
		}
		return msg
	}
	return ""
}

// ParseBody parses a part's text as one strict JSON object.
func ParseBody(text any) (map[string]any, error) {
	s, ok := text.(string)
	if !ok {
		return nil, errors.New("the part has no text")
	}
	v, err := Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("the body is not strict JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the body is not a JSON object")
	}
	return m, nil
}

// RequestMode is the mode of MCP request params (absent: form).
func RequestMode(params map[string]any) any {
	if m, has := params["mode"]; has {
		return m
	}
	return "form"
}

// RequestedSchema is the form schema of request params (nil: not a form body).
func RequestedSchema(params map[string]any) any {
	if params == nil || RequestMode(params) != "form" {
		return nil
	}
	return params["requestedSchema"]
}

// ResultProblem says why an MCP result is no valid answer in mode ("": it
// is): valid against the result definition, content only for accept in
// form mode, and then (absent: {}) valid against formSchema when known.
func ResultProblem(check Checker, forms *FormSchemas, result map[string]any, mode, formSchema any) string {
	if problem := check.Check(DefMCPResult, result); problem != "" {
		return problem
	}
	if mode == "form" && result["action"] == "accept" {
		if formSchema == nil {
			return ""
		}
		content, has := result["content"]
		if !has {
			content = map[string]any{}
		}
		return forms.Problem(formSchema, content)
	}
	if _, has := result["content"]; has {
		return fmt.Sprintf("a %v result in %v mode carries no content", result["action"], mode)
	}
	return ""
}

// BodyOf is the parsed body of the event's elicitation.<name> part when it
// is body-selected, has no gap and parses as one object (else nil).
func BodyOf(event map[string]any, name string) map[string]any {
	part, ok := Path(event, "elicitation", name).(map[string]any)
	if !ok || part["selection"] != "body" {
		return nil
	}
	if _, gap := part["gap"]; gap {
		return nil
	}
	body, err := ParseBody(part["text"])
	if err != nil {
		return nil
	}
	return body
}

// liveRequest is a request accepted and not yet answered.
type liveRequest struct {
	session, source, server, mode any
	selection                     any
	params                        map[string]any // the parsed body (nil: metadata or omit)
}

// Accepted is an accepted intercept's receipt.
type Accepted struct {
	EventID, Type string
	Summary       map[string]any
}

// Entry is the receipt entry.
func (a Accepted) Entry() map[string]any {
	return map[string]any{"kind": "elicitation", "eventId": a.EventID, "type": a.Type, "summary": a.Summary}
}

// Receiver holds the receiver's correlation state (the live requests, for
// the whole server) and runs its checks in order.
type Receiver struct {
	check               Checker
	stored              func(ref string) bool
	authenticatedSource string
	forms               *FormSchemas
	mu                  sync.Mutex
	live                map[string]liveRequest
}

// NewReceiver: stored says whether a body ref names bytes stored here.
func NewReceiver(check Checker, stored func(string) bool, authenticatedSource string) *Receiver {
	return &Receiver{check: check, stored: stored, authenticatedSource: authenticatedSource,
		forms: NewFormSchemas(), live: map[string]liveRequest{}}
}

// Accept checks message: a Refusal (state unchanged), or its receipt with
// the state updated; record runs under the same lock (receipts in the order
// the state changed).
func (r *Receiver) Accept(message any, record func(Accepted)) (Accepted, *Refusal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	accepted, change, refusal := r.checkMessage(message)
	if refusal != nil {
		return Accepted{}, refusal
	}
	change()
	if record != nil {
		record(accepted)
	}
	return accepted, nil
}

func (r *Receiver) checkMessage(message any) (Accepted, func(), *Refusal) {
	// 1. The canonical envelope, the id, an elicitation event.
	if problem := r.check.Check(InterceptRequest, message); problem != "" {
		return Accepted{}, nil, refuse("invalid intercept request: %s", problem)
	}
	msg := message.(map[string]any)
	event := Object(Path(msg, "params", "event"))
	if !Equal(msg["id"], event["id"]) {
		return Accepted{}, nil, refuse("the JSON-RPC id is not the event's id")
	}
	kind, _ := event["type"].(string)
	if kind != ElicitationRequest && kind != ElicitationResultEvent {
		return Accepted{}, nil, refuse("the event is a %s, not an elicitation request or result", kind)
	}
	// 2. Content the event names must be stored here.
	for _, ref := range BodyRefs(event["items"]) {
		if !r.stored(ref) {
			return Accepted{}, nil, &Refusal{Msg: fmt.Sprintf("no stored content for body ref %s", EncodeString(ref)), Status: 409}
		}
	}
	// 3. The session and the part; a selected gap fails closed.
	session, _ := Path(event, "session", "id").(string)
	if session == "" {
		return Accepted{}, nil, refuse("the event carries no session.id")
	}
	name := "request"
	if kind == ElicitationResultEvent {
		name = "result"
	}
	// An absent part is the omit selection (interaction-payloads.md, "MCP
	// elicitation binding": "Omission has no part").
	raw, present := Object(event["elicitation"])[name]
	if !present {
		raw = map[string]any{"selection": "omit"}
	}
	part, ok := raw.(map[string]any)
	if !ok {
		return Accepted{}, nil, refuse("elicitation.%s is not a part", name)
	}
	if _, gap := part["gap"]; gap && part["selection"] == "body" {
		return Accepted{}, nil, refuse("elicitation.%s is selected with a gap: no body to validate", name)
	}
	if kind == ElicitationRequest {
		return r.request(event, session, part)
	}
	return r.result(event, session, part)
}

// 4. A request: a fresh id, and a valid body in the event's mode.
func (r *Receiver) request(event map[string]any, session string, part map[string]any) (Accepted, func(), *Refusal) {
	id, _ := event["id"].(string)
	if _, live := r.live[id]; live {
		return Accepted{}, nil, refuse("request %s is already live", EncodeString(id))
	}
	e := Object(event["elicitation"])
	var params map[string]any
	if part["selection"] == "body" {
		var err error
		if params, err = ParseBody(part["text"]); err != nil {
			return Accepted{}, nil, refuse("elicitation.request: %v", err)
		}
		if problem := r.check.Check(DefRequestParams, params); problem != "" {
			return Accepted{}, nil, refuse("elicitation.request: %s", problem)
		}
		if mode := RequestMode(params); !Equal(mode, e["mode"]) {
			return Accepted{}, nil, refuse("the body's mode %s is not the event's %s", EncodeString(mode), EncodeString(e["mode"]))
		}
		if schema := RequestedSchema(params); schema != nil {
			if _, why := r.forms.Compile(schema); why != "" {
				return Accepted{}, nil, refuse("elicitation.request: %s", why)
			}
		}
	}
	live := liveRequest{session: session, source: event["source"], server: e["server"], mode: e["mode"],
		selection: part["selection"], params: params}
	summary := map[string]any{"selection": part["selection"]}
	if params != nil {
		summary = map[string]any{"request": Clone(params)}
	}
	return Accepted{EventID: id, Type: ElicitationRequest, Summary: summary}, func() { r.live[id] = live }, nil
}

// 5. A result: correlated to a live request, and a valid answer to it.
func (r *Receiver) result(event map[string]any, session string, part map[string]any) (Accepted, func(), *Refusal) {
	parentID, ok := event["parentEventId"].(string)
	if !ok {
		return Accepted{}, nil, refuse("the result has no parentEventId")
	}
	parent, live := r.live[parentID]
	if !live {
		return Accepted{}, nil, refuse("the parent %s is not a live request", EncodeString(parentID))
	}
	e := Object(event["elicitation"])
	for _, c := range []struct {
		what         string
		mine, theirs any
	}{{"session.id", session, parent.session}, {"source", event["source"], parent.source},
		{"elicitation.server", e["server"], parent.server}, {"elicitation.mode", e["mode"], parent.mode}} {
		if !Equal(c.mine, c.theirs) {
			return Accepted{}, nil, refuse("the result's %s %s is not its request's %s", c.what,
				EncodeString(c.mine), EncodeString(c.theirs))
		}
	}
	var result map[string]any
	if part["selection"] == "body" {
		var err error
		if result, err = ParseBody(part["text"]); err != nil {
			return Accepted{}, nil, refuse("elicitation.result: %v", err)
		}
		if problem := r.check.Check(DefMCPResult, result); problem != "" {
			return Accepted{}, nil, refuse("elicitation.result: %s", problem)
		}
		if !Equal(result["action"], e["action"]) {
			return Accepted{}, nil, refuse("the body's action %s is not the event's %s",
				EncodeString(result["action"]), EncodeString(e["action"]))
		}
		if problem := ResultProblem(r.check, r.forms, result, parent.mode, RequestedSchema(parent.params)); problem != "" {
			return Accepted{}, nil, refuse("elicitation.result: %s", problem)
		}
	}
	provenance := map[string]any{"kind": "mcp", "authenticatedSource": r.authenticatedSource}
	var summary map[string]any
	if result != nil && parent.params != nil {
		summary = map[string]any{"request": Clone(parent.params), "result": Clone(result),
			"provenance": provenance, "externalCompletion": false}
	} else {
		summary = map[string]any{"selection": map[string]any{"request": parent.selection, "result": part["selection"]},
			"bodyValidation": "not-selected", "provenance": provenance, "externalCompletion": false}
	}
	id, _ := event["id"].(string)
	return Accepted{EventID: id, Type: ElicitationResultEvent, Summary: summary}, func() { delete(r.live, parentID) }, nil
}

// ElicitationRequestBoundary is the request boundary as the engine sees it:
// gated, with deny, return (an MCP result) and message; nothing to modify.
var ElicitationRequestBoundary = &Boundary{Event: ElicitationRequest, Target: "request", Definition: DefMCPResult,
	Gated: true, Effects: list("deny", "return", "message"), Returns: true, ReturnDef: DefMCPResult,
	original: func(map[string]any) any { return nil }}

// Request verdicts.
const (
	Allowed  = "allowed"
	Denied   = "denied"
	Rejected = "rejected"
)

func effectsOf(reply any) []any {
	effects, _ := Path(reply, "result", "effects").([]any)
	return effects
}

// JudgeRequest is the reply at the request boundary: the core envelope and
// effect rules, then each return value's answer rules for the request's mode
// and form schema. Any failure rejects the whole reply (with why); a deny
// denies; otherwise the last return value (nil: none) is the effective result.
func JudgeRequest(check Checker, forms *FormSchemas, request map[string]any, reply any, malformed bool) (string, map[string]any, string) {
	if malformed {
		return Rejected, nil, "the reply is not strict JSON"
	}
	out := ApplyAt(ElicitationRequestBoundary, check, request, reply, Options{NoHostRule: true})
	if out.Reason != "" {
		return Rejected, nil, out.Reason
	}
	if out.Unsupported != "" {
		return Rejected, nil, out.Unsupported
	}
	event := Object(Path(request, "params", "event"))
	mode := Path(event, "elicitation", "mode")
	schema := RequestedSchema(BodyOf(event, "request"))
	var returned map[string]any
	for i, effect := range effectsOf(reply) {
		if Path(effect, "type") != "return" {
			continue
		}
		value, _ := Path(effect, "value").(map[string]any)
		if problem := ResultProblem(check, forms, value, mode, schema); problem != "" {
			return Rejected, nil, fmt.Sprintf("effect %d: return value: %s", i, problem)
		}
		returned = Clone(value).(map[string]any)
	}
	if out.Actual["decision"] == "deny" {
		return Denied, nil, ""
	}
	return Allowed, returned, ""
}

// ResultRequest is the hooks/intercept of the result event the host sends.
func ResultRequest(rowID string, requestEvent, result map[string]any, capabilities any) map[string]any {
	event := map[string]any{"id": rowID + ":result", "source": requestEvent["source"], "time": requestEvent["time"],
		"type": ElicitationResultEvent, "parentEventId": rowID + ":request",
		"elicitation": map[string]any{
			"server": Path(requestEvent, "elicitation", "server"),
			"mode":   Path(requestEvent, "elicitation", "mode"),
			"action": result["action"],
			"result": map[string]any{"id": rowID + ":result-body", "kind": "text", "mediaType": "text/plain",
				"selection": "body", "text": EncodeString(result)},
		}}
	if session, has := requestEvent["session"]; has {
		event["session"] = Clone(session)
	}
	return map[string]any{"jsonrpc": "2.0", "id": rowID + ":result", "method": "hooks/intercept",
		"params": map[string]any{"protocolVersion": ProtocolVersion, "event": event, "capabilities": Clone(capabilities)}}
}

// JudgeResult is the reply at the result boundary for the effective result
// the host sent in message: the core rules at user.elicitation.result, then
// the effective content against formSchema (when known; absent: {}). It
// returns the published result (nil: rejected, with why) and whether an edit
// was applied.
func JudgeResult(check Checker, forms *FormSchemas, message, result map[string]any, reply any, malformed bool,
	formSchema any) (map[string]any, bool, string) {
	if malformed {
		return nil, false, "the reply is not strict JSON"
	}
	out := Apply(check, message, reply, Options{NoHostRule: true})
	if out.Reason != "" {
		return nil, false, out.Reason
	}
	if out.Unsupported != "" {
		return nil, false, out.Unsupported
	}
	edited := false
	for _, effect := range effectsOf(reply) {
		edited = edited || Path(effect, "type") == "modify"
	}
	published := Clone(result).(map[string]any)
	if edited {
		published["content"] = Clone(Path(out.Actual, "effective", "content"))
	}
	mode := Path(message, "params", "event", "elicitation", "mode")
	if mode == "form" && published["action"] == "accept" && formSchema != nil {
		content, has := published["content"]
		if !has {
			content = map[string]any{}
		}
		if problem := forms.Problem(formSchema, content); problem != "" {
			return nil, false, "the effective content: " + problem
		}
	}
	return published, edited, ""
}
