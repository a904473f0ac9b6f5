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

// DiscoveryManifest is the manifest of every boundary this engine implements
// (fresh at every call).
func DiscoveryManifest() map[string]any {
	events := []any{}
	for _, b := range Boundaries() {
		events = append(events, map[string]any{
			"event": b.Event, "modes": []any{"intercept"}, "capabilities": capabilitiesOf(b),
		})
	}
	return map[string]any{
		"events":                    events,
		"gaps":                      []any{},
		"transports":                []any{"http", "stdio"},
		"authentication":            []any{"bearer", "oauth"},
		"toolPaths":                 []any{"native"},
		"contentCategories":         []any{"text"},
		"limits":                    map[string]any{},
		"managedPolicy":             map[string]any{"scopes": []any{"user"}, "disableable": true},
		"correlationIdentityFields": []any{"session.id", "call.id"},
	}
}

// DiscoveryResult is the result of hooks/capabilities: DiscoveryManifest.
func DiscoveryResult() map[string]any {
	return map[string]any{"protocolVersion": ProtocolVersion, "manifest": DiscoveryManifest()}
}

// GetCapabilitiesEvent is the event whose capabilities GET /capabilities answers.
const GetCapabilitiesEvent = "tool.before"

// GetCapabilities is what GET /capabilities answers: the capabilities object
// of the manifest's tool.before entry whose modes include "intercept", as it
// is (a copy), not a JSON-RPC envelope: upstream clients validate the answer
// against capabilities.schema.json. A manifest without such an entry answers
// its first intercept entry's capabilities (every manifest here has one);
// nil when it has no intercept entry at all.
func GetCapabilities(manifest map[string]any) map[string]any {
	events, _ := manifest["events"].([]any)
	var first map[string]any
	for _, e := range events {
		entry, _ := e.(map[string]any)
		modes, _ := entry["modes"].([]any)
		caps, isObject := entry["capabilities"].(map[string]any)
		if !isObject || !containsValue(modes, "intercept") {
			continue
		}
		if entry["event"] == GetCapabilitiesEvent {
			return Clone(caps).(map[string]any)
		}
		if first == nil {
			first = caps
		}
	}
	if first == nil {
		return nil
	}
	return Clone(first).(map[string]any)
}

func containsValue(list []any, v any) bool {
	for _, item := range list {
		if item == v {
			return true
		}
	}
	return false
}

// CatalogueEventTypes is every event type of the protocol but hook.failure,
// in the order of common.schema.json#/$defs/eventType (a test compares them).
var CatalogueEventTypes = []string{
	"tool.before", "tool.after", "session.start", "config.change.before", "turn.start",
	"turn.finish.before", "model.request.before", "model.response.after", "model.switch.before",
	"tool.permission.request", "tool.batch.after", "context.compact.before", "context.compact.after",
	"task.change.before", "user.elicitation.request", "user.elicitation.result", "user.message.inbound",
	"user.message.outbound", "workspace.change.before", "session.end", "config.change.after", "turn.end",
	"turn.progress", "model.error", "model.switch.after", "tool.permission.resolved", "tool.progress",
	"task.change.after", "user.attention", "workspace.change.after", "file.changed",
}

// catalogueIntercepted are the three events the catalogue manifest also
// offers for interception, with their capabilities.
func catalogueIntercepted(event string) map[string]any {
	switch event {
	case "tool.before":
		return map[string]any{
			"effects": []any{"deny", "allow", "ask", "modify", "message", "flow"},
			"modify":  map[string]any{"input": map[string]any{"replace": true, "merge": true}},
			"flow":    map[string]any{"operations": []any{"stop"}},
		}
	case "tool.after":
		return map[string]any{
			"effects": []any{"modify", "message"},
			"modify":  map[string]any{"output": map[string]any{"replace": true, "merge": false}},
		}
	case "turn.start":
		return map[string]any{"effects": []any{"deny", "message"}}
	}
	return nil
}

// CatalogueManifest is M, the catalogue suite's manifest (docs/CATALOGUE.md,
// "Discovery"), built here and fresh at every call.
func CatalogueManifest() map[string]any {
	events := []any{}
	for _, event := range CatalogueEventTypes {
		entry := map[string]any{"event": event, "modes": []any{"observe"}}
		if caps := catalogueIntercepted(event); caps != nil {
			entry["modes"] = []any{"intercept", "observe"}
			entry["capabilities"] = caps
		}
		events = append(events, entry)
	}
	return map[string]any{
		"events":                    events,
		"gaps":                      []any{},
		"transports":                []any{"http"},
		"authentication":            []any{"bearer"},
		"toolPaths":                 []any{"native"},
		"contentCategories":         []any{"text"},
		"limits":                    map[string]any{"minTimeoutMs": 100, "maxTimeoutMs": 30000},
		"managedPolicy":             map[string]any{"scopes": []any{"user", "project"}, "disableable": true},
		"correlationIdentityFields": []any{"session.id", "call.id"},
	}
}

// CatalogueDiscoveryResult is the result of hooks/capabilities in the
// catalogue suite.
func CatalogueDiscoveryResult() map[string]any {
	return map[string]any{"protocolVersion": ProtocolVersion, "manifest": CatalogueManifest()}
}
