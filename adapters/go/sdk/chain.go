package sdk

import "fmt"

// Serial subscriptions at one boundary (no I/O): what each one is sent.
// Each intercept subscription in turn gets the boundary's request with the
// effective value the earlier ones left, params.state as they settled it
// (Outcome.State), and the event's items projected for it (omit: none). An
// observer, or an intercept subscription the chain never called, gets the
// settled event as hooks/observe.

// locations: where each boundary's target lives in its event.
var locations = map[string][]string{
	"tool.before":             {"tool", "input"},
	"tool.after":              {"items"},
	"turn.finish.before":      {"items"},
	"model.request.before":    {"items"},
	"context.compact.before":  {"instructions"},
	"context.compact.after":   {"summary"},
	"user.message.outbound":   {"message", "messages"},
	"workspace.change.before": {"workspace", "change"},
}

// WithValue is a copy of event whose target holds value; an event without
// the target field keeps it absent while value is still the default.
func (b *Boundary) WithValue(event map[string]any, value any) (map[string]any, error) {
	loc, ok := locations[b.Event]
	if !ok {
		return nil, fmt.Errorf("setting the value of %s is not implemented by ahp-go", b.Event)
	}
	out := Clone(event).(map[string]any)
	if Path(event, loc...) == nil && Equal(value, b.Original(event)) {
		return out, nil
	}
	m := out
	for _, k := range loc[:len(loc)-1] {
		next, isObject := m[k].(map[string]any)
		if !isObject {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[loc[len(loc)-1]] = Clone(value)
	return out, nil
}

// Project is event as one subscription sees it: omit withholds every item
// (items: []; an event without items keeps them absent).
func Project(event map[string]any, content any) map[string]any {
	out := Clone(event).(map[string]any)
	if _, has := out["items"]; has && content == "omit" {
		out["items"] = []any{}
	}
	return out
}

// ChainRequest is the boundary's request for one subscription: the
// effective value, the carried state (nil: the request's own) and the
// projected items.
func ChainRequest(request map[string]any, b *Boundary, value any, state map[string]any, content any) (map[string]any, error) {
	msg := Clone(request).(map[string]any)
	params := msg["params"].(map[string]any)
	event, err := b.WithValue(Object(params["event"]), value)
	if err != nil {
		return nil, err
	}
	params["event"] = Project(event, content)
	if state != nil {
		params["state"] = Clone(state)
	}
	return msg, nil
}

// Observation is the canonical hooks/observe of one event.
func Observation(protocolVersion any, event map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": "hooks/observe",
		"params": map[string]any{"protocolVersion": protocolVersion, "event": event}}
}

// ChainObservation is the hooks/observe one subscription gets once the
// boundary settled with value.
func ChainObservation(request map[string]any, b *Boundary, value any, content any) (map[string]any, error) {
	params := Object(request["params"])
	event, err := b.WithValue(Object(params["event"]), value)
	if err != nil {
		return nil, err
	}
	return Observation(params["protocolVersion"], Project(event, content)), nil
}

// ShortCircuits: an accepted reply that ends the chain (a deny or a flow stop).
func ShortCircuits(o Outcome) bool {
	return o.Actual["permission"] == "deny" || o.Actual["decision"] == "deny" || o.Actual["flow"] == "stop"
}

// EffectiveValue is the target's value an accepted reply left.
func EffectiveValue(b *Boundary, o Outcome) any {
	return Clone(Path(o.Actual, "effective", b.Target))
}

// BodyRefs lists every body.ref of an event's items: parts, and the parts of messages.
func BodyRefs(items any) []string {
	var refs []string
	list, _ := items.([]any)
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		parts := []any{m}
		if ps, ok := m["parts"].([]any); ok {
			parts = append(parts, ps...)
		}
		for _, p := range parts {
			if ref, ok := Path(p, "body", "ref").(string); ok {
				refs = append(refs, ref)
			}
		}
	}
	return refs
}

// RebindRefs is a copy of v with every body.ref found in refs replaced by
// what it maps to (a sender's alias -> the receiver's reference).
func RebindRefs(v any, refs map[string]string) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = RebindRefs(item, refs)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = RebindRefs(item, refs)
		}
		if body, ok := out["body"].(map[string]any); ok {
			if ref, ok := body["ref"].(string); ok {
				if to, found := refs[ref]; found {
					body["ref"] = to
				}
			}
		}
		return out
	}
	return v
}
