package sdk

// ProtocolVersion is the AHP version this implementation speaks.
const ProtocolVersion = "draft"

var effectOrder = []string{"deny", "allow", "ask", "modify", "message", "return", "flow", "inject"}

func capabilitiesOf(b *Boundary) map[string]any {
	effects := []any{}
	for _, e := range effectOrder {
		if b.Allows(e) {
			effects = append(effects, e)
		}
	}
	caps := map[string]any{"effects": effects}
	if b.Allows("modify") {
		caps["modify"] = map[string]any{b.Target: map[string]any{"replace": true, "merge": true}}
	}
	if b.Allows("flow") {
		ops := []any{}
		for _, op := range b.FlowOps {
			ops = append(ops, op)
		}
		flow := map[string]any{"operations": ops}
		if contains(b.FlowOps, "continue") {
			flow["remainingContinuations"] = 1
			flow["continuationCount"] = 0
			flow["maxContinuations"] = 1
		}
		caps["flow"] = flow
	}
	if b.Allows("inject") {
		caps["inject"] = map[string]any{"context": map[string]any{"append": true, "deliverAt": []any{"now", "next_turn"}}}
	}
	return caps
}

// DiscoveryResult is the result of hooks/capabilities: the manifest of every
// boundary this engine implements.
func DiscoveryResult() map[string]any {
	events := []any{}
	for _, b := range Boundaries() {
		events = append(events, map[string]any{
			"event": b.Event, "modes": []any{"intercept"}, "capabilities": capabilitiesOf(b),
		})
	}
	return map[string]any{
		"protocolVersion": ProtocolVersion,
		"manifest": map[string]any{
			"events":                    events,
			"gaps":                      []any{},
			"transports":                []any{"http", "stdio"},
			"authentication":            []any{"bearer", "oauth"},
			"toolPaths":                 []any{"native"},
			"contentCategories":         []any{"text"},
			"limits":                    map[string]any{},
			"managedPolicy":             map[string]any{"scopes": []any{"user"}, "disableable": true},
			"correlationIdentityFields": []any{"session.id", "call.id"},
		},
	}
}
