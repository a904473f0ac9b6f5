package sdk

import (
	"strconv"
	"strings"
)

// Context compaction as a host runs it (no I/O): what the host does with
// the settled context.compact.before boundary, the synthetic compactor's
// summary, and the context.compact.after request derived from them.

// Compaction event types.
const (
	CompactBefore = "context.compact.before"
	CompactAfter  = "context.compact.after"
)

// afterCapabilities is what the after boundary advertises; an observe-only
// after boundary advertises no effect.
func afterCapabilities(observeOnly bool) map[string]any {
	if observeOnly {
		return map[string]any{"effects": []any{}}
	}
	return map[string]any{"effects": []any{"modify"},
		"modify": map[string]any{"summary": map[string]any{"replace": true, "merge": false}}}
}

// Compaction is what the host did at the before boundary; Summary,
// Execution and Provenance are nil when nothing was compacted.
type Compaction struct {
	Applied    bool
	Summary    any
	Execution  map[string]any
	Provenance map[string]any
}

// SettledResult is the core rules' result of a boundary's request carrying
// its settled value and state (nil: the request's own), with no further effect.
func SettledResult(check Checker, request map[string]any, b *Boundary, value any, state map[string]any) (map[string]any, string) {
	msg, err := ChainRequest(request, b, value, state, nil)
	if err != nil {
		return nil, err.Error()
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": msg["id"], "result": map[string]any{
		"protocolVersion": Path(msg, "params", "protocolVersion"), "effects": []any{}}}
	out := Apply(check, msg, reply, Options{NoHostRule: true})
	if out.Unsupported != "" {
		return nil, out.Unsupported
	}
	if out.Reason != "" {
		return nil, out.Reason
	}
	return out.Actual, ""
}

// Compact turns the core rules' result of the settled before boundary (nil:
// a fail-closed failure) into the host's outcome: a bound supplied summary
// (supplier: the subscription whose accepted return bound it), else the
// synthetic compactor's when the compaction is executed, else nothing.
func Compact(result map[string]any, supplier, summaryID string, items int, instructions any) Compaction {
	if result == nil {
		return Compaction{}
	}
	if supplied, bound := result["result"]; bound && result["decision"] == "allow" && result["flow"] != "stop" {
		var by any
		if supplier != "" {
			by = supplier
		}
		return Compaction{Applied: true, Summary: Clone(supplied),
			Execution:  map[string]any{"status": "skipped", "reason": "supplied_result"},
			Provenance: map[string]any{"kind": "supplied", "supplier": by}}
	}
	if result["executed"] == true {
		return Compaction{Applied: true, Summary: SyntheticSummary(summaryID, items, instructions),
			Execution:  map[string]any{"status": "executed"},
			Provenance: map[string]any{"kind": "generated"}}
	}
	return Compaction{}
}

// SyntheticSummary is the synthetic compactor's one text part: "Summary of
// N items.", then " Instructions: " and the instruction texts joined by a
// single space when that join is not empty.
func SyntheticSummary(id string, items int, instructions any) []any {
	var texts []string
	list, _ := instructions.([]any)
	for _, part := range list {
		if t, ok := Path(part, "text").(string); ok {
			texts = append(texts, t)
		}
	}
	text := "Summary of " + strconv.Itoa(items) + " items."
	if joined := strings.Join(texts, " "); joined != "" {
		text += " Instructions: " + joined
	}
	return []any{map[string]any{"id": id, "kind": "text", "mediaType": "text/plain",
		"selection": "body", "text": text}}
}

// AfterRequest is the context.compact.after intercept (id: its event's id
// too) following the before request's event with summary and execution.
func AfterRequest(id string, before map[string]any, summary any, execution map[string]any, observeOnly bool) map[string]any {
	event := Object(Path(before, "params", "event"))
	after := map[string]any{"id": id}
	for _, k := range []string{"source", "time", "session"} {
		if v, has := event[k]; has {
			after[k] = Clone(v)
		}
	}
	removed := []any{}
	items, _ := event["items"].([]any)
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			removed = append(removed, map[string]any{"id": m["id"]})
		}
	}
	after["type"] = CompactAfter
	after["parentEventId"] = event["id"]
	after["summary"] = Clone(summary)
	after["removed"] = removed
	after["execution"] = Clone(execution)
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "hooks/intercept",
		"params": map[string]any{"protocolVersion": ProtocolVersion, "event": after,
			"capabilities": afterCapabilities(observeOnly)}}
}

// CarriesBody reports whether a text part anywhere in v carries body
// (compaction text is inline, never a reference).
func CarriesBody(v any) bool {
	switch x := v.(type) {
	case []any:
		for _, item := range x {
			if CarriesBody(item) {
				return true
			}
		}
	case map[string]any:
		if _, has := x["body"]; has && x["kind"] == "text" {
			return true
		}
		for _, item := range x {
			if CarriesBody(item) {
				return true
			}
		}
	}
	return false
}
