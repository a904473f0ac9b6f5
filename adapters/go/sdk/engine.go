package sdk

import (
	"fmt"
)

// Checker validates a value against a canonical schema name: "" when valid,
// else a one-line reason. *Schemas is one.
type Checker interface {
	Check(name string, v any) string
}

// Outcome of applying one response. Exactly one of Unsupported, or Actual, is
// set; Reason explains a rejection (Actual is then {"rejected": true}).
type Outcome struct {
	Actual      map[string]any
	Reason      string
	Unsupported string
	// State is what the next interceptor of a chain receives as params.state
	// (accepted responses only).
	State map[string]any
}

var permissionRank = map[string]int{"none": 0, "allow": 1, "ask": 2, "deny": 3}

func strongest(a, b string) string {
	if permissionRank[b] > permissionRank[a] {
		return b
	}
	return a
}

type rejection struct{ reason string }

func reject(format string, args ...any) { panic(rejection{fmt.Sprintf(format, args...)}) }

// Options of Apply.
type Options struct {
	// NoHostRule disables the synthetic host's task rule (the core suite's
	// host has it; a host with no local rule does not).
	NoHostRule bool
}

// Apply derives what a host publishes from response, the answer to the
// hooks/intercept request, under the composition rules of docs/scenarios.md:
// phase 1 accepts the whole response or rejects it; phase 2 applies it.
func Apply(check Checker, request map[string]any, response any, opts Options) (out Outcome) {
	eventType, _ := Path(request, "params", "event", "type").(string)
	b := BoundaryFor(eventType)
	if b == nil {
		return Outcome{Unsupported: fmt.Sprintf("event type %q is not implemented by ahp-go", eventType)}
	}
	return ApplyAt(b, check, request, response, opts)
}

// ApplyAt is Apply at the boundary b (one outside the core set's table).
func ApplyAt(b *Boundary, check Checker, request map[string]any, response any, opts Options) (out Outcome) {
	params := Object(request["params"])
	event := Object(params["event"])
	t := &transaction{
		b: b, check: check, request: request, event: event,
		caps: Object(params["capabilities"]), state: Object(params["state"]),
		protocolVersion: params["protocolVersion"], hostRule: !opts.NoHostRule,
		messages: []any{}, instructions: []any{}, injections: []any{},
		responsePermission: "none",
	}
	defer func() {
		if r := recover(); r != nil {
			rej, ok := r.(rejection)
			if !ok {
				panic(r)
			}
			out = Outcome{Actual: map[string]any{"rejected": true}, Reason: rej.reason}
		}
	}()
	actual, state := t.run(response)
	return Outcome{Actual: actual, State: state}
}

type transaction struct {
	b               *Boundary
	check           Checker
	request         map[string]any
	event           map[string]any
	caps            map[string]any
	state           map[string]any
	protocolVersion any
	hostRule        bool

	original           any
	current            any
	responsePermission string
	stop               bool
	continued          bool
	instructions       []any
	messages           []any
	injections         []any
	returned           *any
}

func (t *transaction) validate(def string, v any, what string) {
	switch def {
	case DefAny:
		return
	case DefObject:
		if _, ok := v.(map[string]any); !ok {
			reject("%s is not an object", what)
		}
		return
	}
	if problem := t.check.Check(def, v); problem != "" {
		reject("%s: %s", what, problem)
	}
}

// Phase 1, rule 1 and 2: the envelope and the canonical response schema.
func (t *transaction) envelope(response any) []any {
	msg, ok := response.(map[string]any)
	if !ok {
		reject("response is not a JSON object")
	}
	if msg["jsonrpc"] != "2.0" {
		reject("jsonrpc is not \"2.0\"")
	}
	id, has := msg["id"]
	if !has || !idEqual(id, t.request["id"]) {
		reject("response id does not match the request id")
	}
	if _, has := msg["error"]; has {
		reject("response carries a JSON-RPC error")
	}
	result, ok := msg["result"].(map[string]any)
	if !ok {
		reject("result is not an object")
	}
	if problem := t.check.Check(InterceptResponse, msg); problem != "" {
		reject("schema: %s", problem)
	}
	version, ok := result["protocolVersion"].(string)
	if want, isString := t.protocolVersion.(string); !ok || !isString || version != want {
		reject("result protocolVersion differs from the request's")
	}
	effects, ok := result["effects"].([]any)
	if !ok {
		reject("result effects is not an array")
	}
	for i, e := range effects {
		if _, ok := e.(map[string]any); !ok {
			reject("effect %d is not an object", i)
		}
	}
	return effects
}

// idEqual: a JSON-RPC id (string or number) equal under JSON typing.
func idEqual(a, b any) bool {
	switch a.(type) {
	case string:
	default:
		if !IsNumber(a) {
			return false
		}
	}
	return Equal(a, b)
}

func (t *transaction) run(response any) (map[string]any, map[string]any) {
	effects := t.envelope(response)
	t.original = t.b.Original(t.event)
	t.current = Clone(t.original)
	advertised := Strings(t.caps["effects"])
	for i, raw := range effects {
		e := raw.(map[string]any)
		kind, _ := e["type"].(string)
		if !contains(advertised, kind) {
			reject("effect %d: %s is not advertised", i, kind)
		}
		if !t.b.Allows(kind) {
			reject("effect %d: %s is not allowed at %s", i, kind, t.b.Event)
		}
		switch kind {
		case "deny", "ask", "allow":
			t.responsePermission = strongest(t.responsePermission, kind)
		case "message":
			text, ok := e["text"].(string)
			if !ok {
				reject("effect %d: message text is not a string", i)
			}
			t.messages = append(t.messages, text)
		case "return":
			t.onReturn(i, e)
		case "inject":
			t.onInject(i, e)
		case "flow":
			t.onFlow(i, e)
		case "modify":
			t.onModify(i, e)
		default:
			reject("effect %d: unknown type %q", i, kind)
		}
	}
	t.checkHostRule()
	return t.derive()
}

func (t *transaction) onReturn(i int, e map[string]any) {
	if !t.b.Returns {
		reject("effect %d: return is not allowed at %s", i, t.b.Event)
	}
	value, ok := e["value"]
	if !ok {
		reject("effect %d: return has no value", i)
	}
	t.validate(t.b.ReturnDef, value, fmt.Sprintf("effect %d: return value", i))
	v := Clone(value)
	t.returned = &v
}

func (t *transaction) onInject(i int, e map[string]any) {
	context := Object(Path(t.caps, "inject", "context"))
	if context["append"] != true {
		reject("effect %d: context append is not advertised", i)
	}
	if e["target"] != "context" || e["operation"] != "append" {
		reject("effect %d: inject must append to context", i)
	}
	at, _ := e["deliverAt"].(string)
	if !contains(Strings(context["deliverAt"]), at) {
		reject("effect %d: deliverAt %q is not advertised", i, at)
	}
	value, ok := e["value"]
	if !ok {
		reject("effect %d: inject has no value", i)
	}
	t.validate(DefMessages, value, fmt.Sprintf("effect %d: inject value", i))
	t.injections = append(t.injections, Clone(e))
}

func (t *transaction) remaining() int64 {
	n, ok := Integer(Path(t.caps, "flow", "remainingContinuations"))
	if !ok {
		return 0
	}
	return n
}

func (t *transaction) continueAdvertised() bool {
	return contains(Strings(Path(t.caps, "flow", "operations")), "continue")
}

func (t *transaction) onFlow(i int, e map[string]any) {
	op, _ := e["operation"].(string)
	if !contains(Strings(Path(t.caps, "flow", "operations")), op) {
		reject("effect %d: flow %s is not advertised", i, op)
	}
	if !contains(t.b.FlowOps, op) {
		reject("effect %d: flow %s is not allowed at %s", i, op, t.b.Event)
	}
	switch op {
	case "stop":
		t.stop = true
	case "continue":
		if t.remaining() <= 0 {
			reject("effect %d: continue with no continuation allowance left", i)
		}
		t.continued = true
		if instruction, ok := e["instruction"]; ok {
			s, isString := instruction.(string)
			if !isString || s == "" {
				reject("effect %d: continue instruction is not a non-empty string", i)
			}
			t.instructions = append(t.instructions, s)
		}
	default:
		reject("effect %d: unknown flow operation %q", i, op)
	}
}

func (t *transaction) onModify(i int, e map[string]any) {
	target, _ := e["target"].(string)
	op, _ := e["operation"].(string)
	value, has := e["value"]
	where := fmt.Sprintf("effect %d", i)
	if target != t.b.Target {
		reject("%s: target %q does not exist at %s", where, target, t.b.Event)
	}
	if Path(t.caps, "modify", target, op) != true {
		reject("%s: %s of %s is not advertised", where, op, target)
	}
	if !has {
		reject("%s: modify has no value", where)
	}
	if why := t.b.Editable(t.event); why != "" {
		reject("%s: %s", where, why)
	}
	t.validate(t.b.Definition, value, where+": value")
	value = Clone(value)
	switch op {
	case "replace":
		if t.b.List && HoldsWithheld(t.current) {
			reject("%s: whole-list replace over withheld content", where)
		}
		t.current = value
	case "merge":
		var staged any
		if t.b.List {
			cur, ok1 := t.current.([]any)
			add, ok2 := value.([]any)
			if !ok1 || !ok2 {
				reject("%s: merge needs lists", where)
			}
			staged = append(append([]any{}, cur...), add...)
		} else {
			cur, ok1 := t.current.(map[string]any)
			add, ok2 := value.(map[string]any)
			if !ok1 || !ok2 {
				reject("%s: merge needs objects", where)
			}
			m := make(map[string]any, len(cur)+len(add))
			for k, v := range cur {
				m[k] = v
			}
			for k, v := range add {
				m[k] = v
			}
			staged = m
		}
		t.validate(t.b.Definition, staged, where+": effective value")
		t.current = staged
	default:
		reject("%s: unknown modify operation %q", where, op)
	}
}

// checkHostRule: the synthetic host's one rule, on the final staged input.
func (t *transaction) checkHostRule() {
	if !t.hostRule || t.b.Event != "tool.before" || Path(t.event, "tool", "name") != "task" {
		return
	}
	input, ok := t.current.(map[string]any)
	if !ok || !IsPositiveInteger(input["task"]) {
		reject("host rule: the task tool needs a positive integer task")
	}
}

// Phase 2: publish.
func (t *transaction) derive() (map[string]any, map[string]any) {
	b := t.b
	unchanged := Equal(t.current, t.original)
	incoming, _ := t.state["permission"].(string)
	if _, known := permissionRank[incoming]; !known {
		incoming = "none"
	}
	decision := "allow"
	permission := ""
	if b.Gated {
		permission = strongest(incoming, t.responsePermission)
		if permission == "allow" && !unchanged {
			permission = "none" // an allow was given for the value as it stood
		}
		if permission != "none" {
			decision = permission
		}
	}
	flow := ""
	incomingFlow := t.state["flow"]
	switch {
	case t.stop || incomingFlow == "stop":
		flow = "stop"
	case t.continued || (incomingFlow == "continue" && t.continueAdvertised() &&
		contains(b.FlowOps, "continue") && t.remaining() >= 1):
		flow = "continue"
	}
	var candidate *any
	if b.Returns {
		if t.returned != nil {
			candidate = t.returned
		} else if c, ok := t.state["candidate"].(map[string]any); ok && unchanged {
			if v, has := c["value"]; has {
				v = Clone(v)
				candidate = &v
			}
		}
	}
	proceeds := decision == "allow" && flow != "stop"
	actual := map[string]any{"decision": decision}
	if b.Gated {
		actual["permission"] = permission
	}
	actual["executed"] = proceeds && candidate == nil && b.Gated
	actual["messages"] = t.messages
	if b.Target == "input" {
		actual["input"] = t.current
	}
	actual["effective"] = map[string]any{b.Target: t.current}
	if candidate != nil && proceeds {
		actual["result"] = *candidate
	}
	if flow != "" {
		actual["flow"] = flow
	}
	if t.continueAdvertised() {
		left := t.remaining()
		if flow == "continue" {
			left--
		}
		actual["continuationInstructions"] = t.instructions
		actual["continuationRemaining"] = left
	}
	if len(t.injections) > 0 {
		actual["injections"] = t.injections
	}
	next := map[string]any{"permission": incoming, "candidate": nil}
	if b.Gated {
		next["permission"] = permission
	}
	if candidate != nil {
		next["candidate"] = map[string]any{"value": Clone(*candidate)}
	}
	if flow != "" {
		next["flow"] = flow
	}
	return actual, next
}

// HoldsWithheld reports whether a message or part list holds content the host
// withheld: a part with selection omit or metadata, or a gap.
func HoldsWithheld(v any) bool {
	items, _ := v.([]any)
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if parts, ok := m["parts"].([]any); ok {
			for _, p := range parts {
				if partWithheld(p) {
					return true
				}
			}
		} else if partWithheld(m) {
			return true
		}
	}
	return false
}

func partWithheld(p any) bool {
	m, ok := p.(map[string]any)
	if !ok {
		return false
	}
	if s := m["selection"]; s == "omit" || s == "metadata" {
		return true
	}
	_, gap := m["gap"]
	return gap
}
