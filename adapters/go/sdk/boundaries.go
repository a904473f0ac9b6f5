package sdk

// The canonical definition of each value slot (docs/scenarios.md, Phase 1, item 4).
const (
	DefMessages          = "content-item.schema.json#/$defs/messages"
	DefAssistantMessages = "interaction-event.schema.json#/$defs/assistantMessages"
	DefTextParts         = "content-item.schema.json#/$defs/textParts"
	DefWorkspaceChange   = "common.schema.json#/$defs/workspaceChange"
	DefAnswerContent     = "mcp-elicitation.schema.json#/$defs/answerContent"
	// DefObject and DefAny are not schema names: the tool input is an object
	// (tool-before.schema.json says no more) and a tool result is any JSON.
	DefObject = "object"
	DefAny    = "any"
)

// Boundary is one row of the boundary table.
type Boundary struct {
	Event      string
	Target     string // the modify target
	Definition string // the canonical definition of every value the target holds
	List       bool   // the target is a list (merge appends; replace minds withheld content)
	Gated      bool   // gates an operation, and so has permission semantics
	Effects    []string
	FlowOps    []string
	Returns    bool   // a return is allowed
	ReturnDef  string // the return value's definition (DefAny: any JSON)
	original   func(event map[string]any) any
	editable   func(event map[string]any) string
}

// Original is the event's own value of the target (a fresh copy).
func (b *Boundary) Original(event map[string]any) any { return Clone(b.original(event)) }

// Editable says why the target may not be edited in this event ("" when it may).
func (b *Boundary) Editable(event map[string]any) string {
	if b.editable == nil {
		return ""
	}
	return b.editable(event)
}

// Allows reports whether the protocol allows the effect type at this boundary.
func (b *Boundary) Allows(effect string) bool { return contains(b.Effects, effect) }

func valueAt(def any, keys ...string) func(map[string]any) any {
	return func(event map[string]any) any {
		v := Path(event, keys...)
		if v == nil {
			return def
		}
		return v
	}
}

// ElicitationResult is the parsed MCP result carried as text in
// elicitation.result: only a text part with body selection (and no gap)
// carries one, and it must be a strict JSON object.
func ElicitationResult(event map[string]any) map[string]any {
	part, ok := Path(event, "elicitation", "result").(map[string]any)
	if !ok || part["selection"] != "body" || part["kind"] != "text" {
		return nil
	}
	if _, gap := part["gap"]; gap {
		return nil
	}
	text, ok := part["text"].(string)
	if !ok {
		return nil
	}
	parsed, err := Decode([]byte(text))
	if err != nil {
		return nil
	}
	obj, _ := parsed.(map[string]any)
	return obj
}

func elicitationAnswer(event map[string]any) any {
	if parsed := ElicitationResult(event); parsed != nil {
		return parsed["content"]
	}
	return nil
}

func elicitationEditable(event map[string]any) string {
	if Path(event, "elicitation", "mode") != "form" {
		return "content edits need a form elicitation"
	}
	if Path(event, "elicitation", "action") != "accept" {
		return "content edits need an accepted elicitation"
	}
	parsed := ElicitationResult(event)
	if parsed == nil {
		return "content edits need a result part with body selection carrying a JSON object"
	}
	if action, ok := parsed["action"]; ok && action != "accept" {
		return "the carried result is not an accepted one"
	}
	return ""
}

func list(s ...string) []string { return s }

var boundaryTable = []*Boundary{
	{Event: "tool.before", Target: "input", Definition: DefObject, Gated: true,
		Effects: list("deny", "allow", "ask", "modify", "message", "return", "flow", "inject"),
		FlowOps: list("stop"), Returns: true, ReturnDef: DefAny,
		original: valueAt(map[string]any{}, "tool", "input")},
	{Event: "tool.after", Target: "output", Definition: DefMessages, List: true,
		Effects: list("modify", "message", "flow", "inject"), FlowOps: list("stop", "continue"),
		original: valueAt([]any{}, "items")},
	{Event: "turn.finish.before", Target: "response", Definition: DefMessages, List: true,
		Effects: list("modify", "message", "flow"), FlowOps: list("stop", "continue"),
		original: valueAt([]any{}, "items")},
	{Event: "model.request.before", Target: "request", Definition: DefMessages, List: true, Gated: true,
		Effects: list("deny", "modify", "message", "return", "flow", "inject"), FlowOps: list("stop"),
		Returns: true, ReturnDef: DefMessages,
		original: valueAt([]any{}, "items")},
	{Event: "context.compact.before", Target: "instructions", Definition: DefTextParts, List: true, Gated: true,
		Effects: list("deny", "modify", "message", "return", "inject"),
		Returns: true, ReturnDef: DefTextParts,
		original: valueAt([]any{}, "instructions")},
	{Event: "context.compact.after", Target: "summary", Definition: DefTextParts, List: true,
		Effects:  list("modify", "message", "inject"),
		original: valueAt([]any{}, "summary")},
	{Event: "user.message.outbound", Target: "content", Definition: DefAssistantMessages, List: true, Gated: true,
		Effects:  list("deny", "modify", "message"),
		original: valueAt([]any{}, "message", "messages")},
	{Event: "user.elicitation.result", Target: "content", Definition: DefAnswerContent,
		Effects:  list("modify", "message"),
		original: elicitationAnswer, editable: elicitationEditable},
	{Event: "workspace.change.before", Target: "workspace", Definition: DefWorkspaceChange, Gated: true,
		Effects:  list("deny", "modify", "message"),
		original: valueAt(nil, "workspace", "change")},
}

var boundaries = func() map[string]*Boundary {
	m := map[string]*Boundary{}
	for _, b := range boundaryTable {
		m[b.Event] = b
	}
	return m
}()

// BoundaryFor is the boundary of an event type, or nil outside the core set.
func BoundaryFor(eventType string) *Boundary { return boundaries[eventType] }

// Boundaries lists the core set in table order.
func Boundaries() []*Boundary { return boundaryTable }

// Definitions lists every canonical schema definition the engine checks against.
func Definitions() []string {
	return list(DefMessages, DefAssistantMessages, DefTextParts, DefWorkspaceChange, DefAnswerContent)
}
