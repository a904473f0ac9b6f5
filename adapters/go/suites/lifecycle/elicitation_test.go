package lifecycle

import (
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// newElicitationRig is an in-process elicitation server (AHP, control and
// upload listeners) and a client over HTTP.
func newElicitationRig(t *testing.T, rows ...map[string]any) *rig {
	t.Helper()
	s := schemas(t)
	var scenarios []contract.Scenario
	for _, row := range rows {
		scenarios = append(scenarios, contract.Scenario{ID: row["id"].(string), Raw: row})
	}
	proc := contract.NewSuiteServer(&contract.SuiteServerSettings{ServerSettings: &contract.ServerSettings{},
		Suite: contract.SuiteElicitation, UploadToken: uploadToken})
	proc.Backend = NewElicitationServer(s, proc, scenarios, "authenticated:test")
	ahp := httptest.NewServer(contract.NewSuiteHandler(proc, nil))
	control := httptest.NewServer(contract.NewSuiteControl(proc.Entries, proc.Barriers))
	upload := httptest.NewServer(&contract.UploadHandler{Token: uploadToken, Store: proc.Store, Entries: proc.Entries})
	t.Setenv("AHP_TEST_UPLOAD_TOKEN", uploadToken)
	t.Setenv(UnauthorizedTokenEnv, "not-the-upload-token-0123")
	settings := &contract.SuiteClientSettings{
		ClientSettings: &contract.ClientSettings{Transport: "http", TimeoutMs: 5000, Scenarios: scenarios,
			Endpoint: ahp.URL + "/intercept", Auth: &contract.ClientAuth{Mode: "none", Profile: "strict"}},
		Suite:  contract.SuiteElicitation,
		Upload: contract.UploadRoute{Endpoint: upload.URL + contract.UploadPath, TokenEnv: "AHP_TEST_UPLOAD_TOKEN", Timeout: 5 * time.Second},
	}
	c := newClient(settings, s)
	c.control = contract.NewControlClient(control.URL)
	c.channel = contract.NewHTTPChannel(settings.Endpoint, "", nil)
	return &rig{client: c, proc: proc, close: func() {
		c.close()
		proc.Shutdown()
		ahp.Close()
		control.Close()
		upload.Close()
	}}
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
	r := newElicitationRig(t, row)
	defer r.close()
	steps := r.run(t, row)["steps"].([]any)
	want := []string{`"status":401`, `"outcome":"rejected","response":null,"status":409`, `"status":201`,
		`"outcome":"accepted"`, `"error":-32602,"op":"send","outcome":"rejected","response":null,"status":400`}
	for i, w := range want {
		if got := sdk.EncodeString(steps[i]); !strings.Contains(got, w) {
			t.Errorf("step %d: %s lacks %s", i, got, w)
		}
	}
	if got := r.kinds("wire"); got != "row-start" {
		t.Errorf("marks: %s", got)
	}
	if got := r.kinds("w:2") + "|" + r.kinds("w:1"); got != "elicitation|" {
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
	r := newElicitationRig(t, row, broken)
	defer r.close()
	expectJSON(t, "merge", r.run(t, row), `{"request": "allowed", "result": "accepted",
		"published": {"action": "accept", "content": {"seats": 3}}, "provenance": "hook"}`)
	expectJSON(t, "a return breaking the form", r.run(t, broken), `{"request": "rejected", "result": "not-sent",
		"published": null, "provenance": null}`)
	if got := r.kinds("at:request") + "," + r.kinds("at:result") + "," + r.kinds("bad:result"); got != "elicitation,elicitation," {
		t.Errorf("receipts: %s", got)
	}
}
