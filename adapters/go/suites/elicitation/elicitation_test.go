package elicitation

import (
	"encoding/base64"
	"strings"
	"testing"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps/stepstest"
	"ahp-interop/adapters/go/sdk"
)

var (
	decode     = stepstest.Decode
	expectJSON = stepstest.ExpectJSON
)

func server(s *sdk.Schemas, proc *contract.SuiteServer) (contract.SuiteDispatcher, error) {
	return NewServer(s, proc, proc.Settings.Scenarios, "authenticated:test"), nil
}

// newRig is an in-process elicitation server and a client of it over HTTP.
func newRig(t *testing.T, raw ...map[string]any) *stepstest.Rig {
	t.Helper()
	t.Setenv(UnauthorizedTokenEnv, "not-the-upload-token-0123")
	return stepstest.New(t, server, &rows{forms: sdk.NewFormSchemas()}, raw...)
}

func eliEvent(id, kind, extra string) string {
	return `{"jsonrpc": "2.0", "id": "` + id + `", "method": "hooks/intercept", "params": {"protocolVersion": "draft",
		"event": {"id": "` + id + `", "source": "urn:x", "type": "` + kind + `", "time": "2026-01-01T00:00:00Z",
		"session": {"id": "s"}` + extra + `}, "capabilities": {"effects": ["deny", "return", "message"]}}}`
}

const seatsBody = `{\"mode\":\"form\",\"message\":\"Seats?\",\"requestedSchema\":{\"type\":\"object\",` +
	`\"properties\":{\"seats\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":6}},\"required\":[\"seats\"]}}`

func TestElicitationWireRow(t *testing.T) {
	data := []byte("attachment bytes")
	attachment := `, "items": [{"id": "att", "kind": "attachment", "mediaType": "application/pdf", "selection": "body",
		"body": {"ref": "alias-1"}}]`
	request := `, "elicitation": {"server": "srv", "mode": "form", "request": {"id": "b", "kind": "text",
		"mediaType": "text/plain", "selection": "body", "text": "` + seatsBody + `"}}`
	row := map[string]any{"id": "wire", "steps": []any{
		map[string]any{"op": "upload", "alias": "alias-1", "credential": "unauthorized", "bodyBase64": base64.StdEncoding.EncodeToString(data)},
		map[string]any{"op": "send", "message": decode(t, eliEvent("w:1", sdk.ElicitationRequest, request+attachment))},
		map[string]any{"op": "upload", "alias": "alias-1", "credential": "upload", "bodyBase64": base64.StdEncoding.EncodeToString(data)},
		map[string]any{"op": "send", "message": decode(t, eliEvent("w:2", sdk.ElicitationRequest, request+attachment))},
		map[string]any{"op": "send", "message": decode(t, `{"jsonrpc": "2.0", "id": 7, "method": "hooks/intercept", "params": {}}`)},
	}}
	r := newRig(t, row)
	defer r.Close()
	steps := r.Run(t, row)["steps"].([]any)
	want := []string{`"status":401`, `"outcome":"rejected","response":null,"status":409`, `"status":201`,
		`"outcome":"accepted"`, `"error":-32602,"op":"send","outcome":"rejected","response":null,"status":400`}
	for i, w := range want {
		if got := sdk.EncodeString(steps[i]); !strings.Contains(got, w) {
			t.Errorf("step %d: %s lacks %s", i, got, w)
		}
	}
	if got := r.Kinds("wire"); got != "row-start" {
		t.Errorf("marks: %s", got)
	}
	if got := r.Kinds("w:2") + "|" + r.Kinds("w:1"); got != "elicitation|" {
		t.Errorf("receipts: %s", got)
	}
}

func TestElicitationAtomicMerge(t *testing.T) {
	request := `, "elicitation": {"server": "srv", "mode": "form", "request": {"id": "b", "kind": "text",
		"mediaType": "text/plain", "selection": "body", "text": "` + seatsBody + `"}}`
	row := map[string]any{"id": "at", "atomic": map[string]any{
		"request":            decode(t, eliEvent("at:request", sdk.ElicitationRequest, request)),
		"userResult":         decode(t, `{"action": "accept", "content": {"seats": 1}}`),
		"resultCapabilities": decode(t, `{"effects": ["modify"], "modify": {"content": {"replace": true, "merge": true}}}`)},
		"responses": map[string]any{"at:result": decode(t, `{"jsonrpc": "2.0", "id": "at:result", "result": {"protocolVersion": "draft",
			"effects": [{"type": "modify", "target": "content", "operation": "merge", "value": {"seats": 3}}]}}`)}}
	broken := map[string]any{"id": "bad", "atomic": map[string]any{
		"request":            decode(t, eliEvent("bad:request", sdk.ElicitationRequest, request)),
		"userResult":         decode(t, `{"action": "accept", "content": {"seats": 1}}`),
		"resultCapabilities": decode(t, `{"effects": []}`)},
		"responses": map[string]any{"bad:request": decode(t, `{"jsonrpc": "2.0", "id": "bad:request", "result": {"protocolVersion": "draft",
			"effects": [{"type": "return", "value": {"action": "accept", "content": {"seats": 99}}}]}}`)}}
	r := newRig(t, row, broken)
	defer r.Close()
	expectJSON(t, "merge", r.Run(t, row), `{"request": "allowed", "result": "accepted",
		"published": {"action": "accept", "content": {"seats": 3}}, "provenance": "hook"}`)
	expectJSON(t, "a return breaking the form", r.Run(t, broken), `{"request": "rejected", "result": "not-sent",
		"published": null, "provenance": null}`)
	if got := r.Kinds("at:request") + "," + r.Kinds("at:result") + "," + r.Kinds("bad:result"); got != "elicitation,elicitation," {
		t.Errorf("receipts: %s", got)
	}
}

// GET /capabilities answers the bare capabilities of the tool.before
// intercept entry of the core manifest: this server answers no
// hooks/capabilities (a POSTed one is judged as an intercept and refused).
func TestGetCapabilities(t *testing.T) {
	got, posted := stepstest.GetCapabilities(t, server)
	want := stepstest.ToolBefore(sdk.DiscoveryManifest())
	if want == nil || !sdk.Equal(got, want) {
		t.Errorf("GET answered %s, the tool.before entry has %s", sdk.EncodeString(got), sdk.EncodeString(want))
	}
	if !sdk.Equal(sdk.Path(posted, "error", "code"), contract.InvalidParams) {
		t.Errorf("a POSTed hooks/capabilities: %s", sdk.EncodeString(posted))
	}
}
