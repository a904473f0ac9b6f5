package sdk

import (
	"os"
	"strings"
	"testing"
)

const formBody = `{\"mode\":\"form\",\"message\":\"Seats?\",\"requestedSchema\":{\"type\":\"object\",` +
	`\"properties\":{\"seats\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":6},\"note\":{\"type\":\"string\",\"format\":\"email\"}},\"required\":[\"seats\"]}}`

func elicitationSchemas(t *testing.T) *Schemas {
	t.Helper()
	s, err := LoadSchemas(os.DirFS("../../../schemas/draft"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func eliRequest(t *testing.T, id, session, body string) any {
	return text(t, `{"jsonrpc": "2.0", "id": "`+id+`", "method": "hooks/intercept", "params": {"protocolVersion": "draft",
		"event": {"id": "`+id+`", "source": "urn:x", "type": "user.elicitation.request", "time": "2026-01-01T00:00:00Z",
		"session": {"id": "`+session+`"}, "elicitation": {"server": "srv", "mode": "form",
		"request": {"id": "`+id+`:b", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "`+body+`"}}},
		"capabilities": {"effects": ["deny", "return", "message"]}}}`)
}

func eliResult(t *testing.T, id, parent, session, action, body string) any {
	return text(t, `{"jsonrpc": "2.0", "id": "`+id+`", "method": "hooks/intercept", "params": {"protocolVersion": "draft",
		"event": {"id": "`+id+`", "source": "urn:x", "type": "user.elicitation.result", "time": "2026-01-01T00:00:00Z",
		"session": {"id": "`+session+`"}, "parentEventId": "`+parent+`", "elicitation": {"server": "srv", "mode": "form",
		"action": "`+action+`", "result": {"id": "`+id+`:b", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "`+body+`"}}},
		"capabilities": {"effects": []}}}`)
}

func TestReceiverCorrelation(t *testing.T) {
	s := elicitationSchemas(t)
	r := NewReceiver(s, func(string) bool { return false }, "authenticated:test")
	var receipts []Accepted
	record := func(a Accepted) { receipts = append(receipts, a) }
	mustAccept := func(what string, msg any) {
		t.Helper()
		if _, refusal := r.Accept(msg, record); refusal != nil {
			t.Fatalf("%s refused: %s", what, refusal.Msg)
		}
	}
	mustRefuse := func(what string, msg any, status int, contains string) {
		t.Helper()
		n := len(receipts)
		_, refusal := r.Accept(msg, record)
		if refusal == nil || refusal.Status != status || !strings.Contains(refusal.Msg, contains) {
			t.Fatalf("%s: %+v", what, refusal)
		}
		if len(receipts) != n {
			t.Fatalf("%s left a receipt", what)
		}
	}
	mustAccept("request", eliRequest(t, "r1", "s1", formBody))
	mustRefuse("a live id again", eliRequest(t, "r1", "s1", formBody), 400, "already live")
	mustRefuse("another session", eliResult(t, "x1", "r1", "s2", "accept", `{\"action\":\"accept\",\"content\":{\"seats\":2}}`), 400, "session.id")
	mustRefuse("above maximum", eliResult(t, "x1", "r1", "s1", "accept", `{\"action\":\"accept\",\"content\":{\"seats\":9}}`), 400, "requested schema")
	mustRefuse("content on decline", eliResult(t, "x1", "r1", "s1", "decline", `{\"action\":\"decline\",\"content\":{\"seats\":2}}`), 400, "")
	mustRefuse("duplicate keys", eliResult(t, "x1", "r1", "s1", "accept", `{\"action\":\"accept\",\"action\":\"accept\"}`), 400, "strict JSON")
	// formats are annotations
	mustAccept("result", eliResult(t, "x1", "r1", "s1", "accept", `{\"action\":\"accept\",\"content\":{\"seats\":2,\"note\":\"not an email\"}}`))
	mustRefuse("answered twice", eliResult(t, "x2", "r1", "s1", "accept", `{\"action\":\"accept\",\"content\":{\"seats\":2}}`), 400, "not a live request")
	if len(receipts) != 2 || receipts[1].Summary["externalCompletion"] != false ||
		Path(receipts[1].Summary, "provenance", "authenticatedSource") != "authenticated:test" ||
		Path(receipts[0].Summary, "request", "message") != "Seats?" {
		t.Errorf("receipts: %s", EncodeString(receipts))
	}
	withItem := eliRequest(t, "r2", "s1", formBody).(map[string]any)
	Object(Path(withItem, "params", "event"))["items"] = text(t, `[{"id": "a", "kind": "attachment", "mediaType": "application/pdf",
		"selection": "body", "body": {"ref": "never-uploaded"}}]`)
	if _, refusal := r.Accept(withItem, record); refusal == nil || refusal.Status != 409 {
		t.Errorf("an item naming content not stored: %+v", refusal)
	}
	bad := `{\"mode\":\"form\",\"message\":\"m\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"nonsense\"}}}}`
	if _, refusal := r.Accept(eliRequest(t, "r3", "s1", bad), record); refusal == nil {
		t.Error("an uncompilable requested schema accepted")
	}
}

// An absent request / result part is the omit selection (interaction-payloads.md,
// "MCP elicitation binding": "Omission has no part"), and a result without a
// part correlates to a request without one.
func TestAbsentPartIsOmit(t *testing.T) {
	s := elicitationSchemas(t)
	r := NewReceiver(s, func(string) bool { return false }, "authenticated:test")
	withoutPart := func(msg any, name string) any {
		delete(Object(Path(msg, "params", "event", "elicitation")), name)
		return msg
	}
	request := withoutPart(eliRequest(t, "r1", "s1", formBody), "request")
	noSession := withoutPart(eliRequest(t, "r0", "s1", formBody), "request")
	delete(Object(Path(noSession, "params", "event")), "session")
	if _, refusal := r.Accept(noSession, nil); refusal == nil || !strings.Contains(refusal.Msg, "session.id") {
		t.Fatalf("no session, no part: %+v", refusal)
	}
	got, refusal := r.Accept(request, nil)
	if refusal != nil || EncodeString(got.Summary) != `{"selection":"omit"}` {
		t.Fatalf("a request without its part: %+v %s", refusal, EncodeString(got.Summary))
	}
	decline := withoutPart(eliResult(t, "x1", "r1", "s1", "decline", `{\"action\":\"decline\"}`), "result")
	got, refusal = r.Accept(decline, nil)
	if refusal != nil || EncodeString(got.Summary["selection"]) != `{"request":"omit","result":"omit"}` ||
		got.Summary["bodyValidation"] != "not-selected" || got.Summary["externalCompletion"] != false {
		t.Fatalf("a result without its part: %+v %s", refusal, EncodeString(got.Summary))
	}
	if _, refusal := r.Accept(eliRequest(t, "r2", "s1", formBody), nil); refusal != nil {
		t.Fatal(refusal.Msg)
	}
	accept := withoutPart(eliResult(t, "x2", "r2", "s1", "accept", `{\"action\":\"accept\"}`), "result")
	got, refusal = r.Accept(accept, nil)
	if refusal != nil || EncodeString(got.Summary["selection"]) != `{"request":"body","result":"omit"}` {
		t.Fatalf("an accepted form without its part: %+v %s", refusal, EncodeString(got.Summary))
	}
}

func TestJudgeRequestAndResult(t *testing.T) {
	s := elicitationSchemas(t)
	forms := NewFormSchemas()
	request := eliRequest(t, "a:request", "s", formBody).(map[string]any)
	reply := func(id, effects string) any {
		return text(t, `{"jsonrpc": "2.0", "id": "`+id+`", "result": {"protocolVersion": "draft", "effects": `+effects+`}}`)
	}
	if v, ret, why := JudgeRequest(s, forms, request, reply("a:request", `[{"type": "return", "value": {"action": "accept", "content": {"seats": 3}}}]`), false); v != Allowed || ret["content"] == nil {
		t.Errorf("a valid return: %s %v %s", v, ret, why)
	}
	if v, _, _ := JudgeRequest(s, forms, request, reply("a:request", `[{"type": "return", "value": {"action": "accept", "content": {"seats": 0}}}]`), false); v != Rejected {
		t.Errorf("a return breaking the form schema: %s", v)
	}
	if v, _, _ := JudgeRequest(s, forms, request, reply("a:request", `[{"type": "deny", "reason": "no"}]`), false); v != Denied {
		t.Errorf("a deny: %s", v)
	}
	if v, _, _ := JudgeRequest(s, forms, request, reply("other", `[]`), false); v != Rejected {
		t.Errorf("another id: %s", v)
	}
	event := Object(Path(request, "params", "event"))
	user := text(t, `{"action": "accept", "content": {"seats": 1}}`).(map[string]any)
	caps := text(t, `{"effects": ["modify"], "modify": {"content": {"replace": true, "merge": true}}}`)
	msg := ResultRequest("a", event, user, caps)
	if problem := s.Check(InterceptRequest, msg); problem != "" {
		t.Fatal(problem)
	}
	schema := RequestedSchema(BodyOf(event, "request"))
	published, edited, why := JudgeResult(s, forms, msg, user, reply("a:result",
		`[{"type": "modify", "target": "content", "operation": "merge", "value": {"seats": 4}}]`), false, schema)
	if !edited || Path(published, "content", "seats") == nil || why != "" {
		t.Errorf("a merge: %v %v %s", published, edited, why)
	}
	if published, _, _ := JudgeResult(s, forms, msg, user, reply("a:result",
		`[{"type": "modify", "target": "content", "operation": "merge", "value": {"seats": 40}}]`), false, schema); published != nil {
		t.Error("a merge breaking the form schema published")
	}
}

// A requested schema naming another dialect in "$schema" is still applied as
// Draft 2020-12 with formats not asserted (docs/ELICITATION.md, Readings).
func TestFormSchemaDialectIgnored(t *testing.T) {
	forms := NewFormSchemas()
	for _, dialect := range []string{
		"http://json-schema.org/draft-07/schema#",
		"http://json-schema.org/draft-04/schema#",
		"https://json-schema.org/draft/2020-12/schema",
		"urn:not-a-known-dialect",
	} {
		schema := text(t, `{"$schema": "`+dialect+`", "type": "object",
			"properties": {"contact": {"type": "string", "format": "email"}}, "required": ["contact"]}`)
		if why := forms.Problem(schema, text(t, `{"contact": "not an email"}`)); why != "" {
			t.Errorf("%s: a format was asserted: %s", dialect, why)
		}
		if why := forms.Problem(schema, text(t, `{}`)); why == "" {
			t.Errorf("%s: required was not asserted", dialect)
		}
	}
	// Draft 2020-12 semantics, not draft-07's: a $ref's siblings apply.
	schema := text(t, `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
		"$defs": {"s": {"type": "string"}},
		"properties": {"code": {"$ref": "#/$defs/s", "maxLength": 2}}}`)
	if why := forms.Problem(schema, text(t, `{"code": "abc"}`)); why == "" {
		t.Error("a $ref sibling was ignored (draft-07 semantics)")
	}
}
