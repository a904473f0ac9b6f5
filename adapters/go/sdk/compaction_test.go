package sdk

import (
	"os"
	"testing"
)

func text(t *testing.T, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSyntheticSummary(t *testing.T) {
	cases := []struct {
		instructions string
		want         string
	}{
		{`null`, "Summary of 3 items."},
		{`[]`, "Summary of 3 items."},
		{`[{"text": ""}]`, "Summary of 3 items."},
		{`[{"text": "a"}, {"text": ""}, {"text": "b"}]`, "Summary of 3 items. Instructions: a  b"},
		{`[{"text": "Grüße"}]`, "Summary of 3 items. Instructions: Grüße"},
	}
	for _, c := range cases {
		got := SyntheticSummary("r:summary", 3, text(t, c.instructions))
		want := []any{map[string]any{"id": "r:summary", "kind": "text", "mediaType": "text/plain",
			"selection": "body", "text": c.want}}
		if !Equal(got, want) {
			t.Errorf("%s: got %s", c.instructions, EncodeString(got))
		}
	}
}

func TestCompact(t *testing.T) {
	supplied := []any{map[string]any{"id": "s", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "S"}}
	got := Compact(map[string]any{"decision": "allow", "executed": false, "result": supplied}, "sub", "r:summary", 1, nil)
	if !got.Applied || !Equal(got.Summary, supplied) || got.Provenance["supplier"] != "sub" ||
		got.Execution["reason"] != "supplied_result" {
		t.Errorf("supplied: %+v", got)
	}
	got = Compact(map[string]any{"decision": "none", "executed": true}, "", "r:summary", 2, nil)
	if !got.Applied || got.Provenance["kind"] != "generated" || got.Execution["status"] != "executed" {
		t.Errorf("generated: %+v", got)
	}
	for _, res := range []map[string]any{nil, {"decision": "deny", "executed": false},
		{"decision": "deny", "executed": false, "result": supplied}} {
		if got := Compact(res, "sub", "r:summary", 1, nil); got.Applied || got.Summary != nil {
			t.Errorf("%v: applied %+v", res, got)
		}
	}
}

func TestAfterRequest(t *testing.T) {
	before := text(t, `{"jsonrpc": "2.0", "id": "r:before", "method": "hooks/intercept", "params": {
		"protocolVersion": "draft", "event": {"id": "r:before", "source": "urn:x", "type": "context.compact.before",
		"time": "2026-01-01T00:00:00Z", "trigger": "manual",
		"items": [{"id": "m1", "role": "user", "parts": [{"id": "p", "kind": "text", "mediaType": "text/plain",
		"selection": "body", "text": "hi"}]}, {"id": "m2", "role": "assistant", "parts": []}]},
		"capabilities": {"effects": []}}}`).(map[string]any)
	summary := SyntheticSummary("r:summary", 2, nil)
	s, err := LoadSchemas(os.DirFS("../../../schemas/draft"))
	if err != nil {
		t.Fatal(err)
	}
	for _, observeOnly := range []bool{false, true} {
		msg := AfterRequest("r:after", before, summary, map[string]any{"status": "executed"}, observeOnly)
		if problem := s.Check(InterceptRequest, msg); problem != "" {
			t.Fatalf("observeOnly %v: %s", observeOnly, problem)
		}
		event := Object(Path(msg, "params", "event"))
		if _, has := event["session"]; has {
			t.Error("session added")
		}
		if !Equal(event["removed"], text(t, `[{"id": "m1"}, {"id": "m2"}]`)) || event["parentEventId"] != "r:before" {
			t.Errorf("event %s", EncodeString(event))
		}
		effects, _ := Path(msg, "params", "capabilities", "effects").([]any)
		if (len(effects) == 0) != observeOnly {
			t.Errorf("observeOnly %v: capabilities %s", observeOnly, EncodeString(Path(msg, "params", "capabilities")))
		}
	}
}

func TestCarriesBody(t *testing.T) {
	if !CarriesBody(text(t, `{"event": {"instructions": [{"kind": "text", "body": {"ref": "x"}}]}}`)) {
		t.Error("a text part with body")
	}
	if CarriesBody(text(t, `{"event": {"items": [{"kind": "file", "body": {"ref": "x"}}, {"kind": "text", "text": "t"}]}}`)) {
		t.Error("a file part's body is not a text part's")
	}
}
