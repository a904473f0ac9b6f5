package catalogue

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps"
	"ahp-interop/adapters/go/contract/steps/stepstest"
	"ahp-interop/adapters/go/sdk"
)

var decode = stepstest.Decode

func server(s *sdk.Schemas, proc *contract.SuiteServer) (contract.SuiteDispatcher, error) {
	return NewServer(s, proc), nil
}

// newRig is an in-process catalogue server and a client of it over HTTP.
func newRig(t *testing.T, raw ...map[string]any) (*stepstest.Rig, *rows) {
	t.Helper()
	r := &rows{}
	return stepstest.New(t, server, r, raw...), r
}

func observeText(id, kind, fields string) string {
	return `{"jsonrpc": "2.0", "method": "hooks/observe", "params": {"protocolVersion": "draft", "event": {"id": "` + id +
		`", "source": "urn:ahp:test", "time": "2026-01-01T00:00:00Z", "type": "` + kind + `"` + fields + `}}}`
}

const turnEnd = `, "turn": {"id": "t"}, "outcome": "completed", "continuationCount": 0, "items": []`

func TestCatalogueReceiver(t *testing.T) {
	r, _ := newRig(t)
	defer r.Close()
	status, body := stepstest.Post(t, r.URL, "/capabilities",
		`{"jsonrpc": "2.0", "id": 7, "method": "hooks/capabilities", "params": {"protocolVersion": "draft"}}`)
	answer, _ := sdk.Decode([]byte(body))
	if status != 200 || !sdk.Equal(sdk.Path(answer, "id"), 7) ||
		!sdk.Equal(sdk.Path(answer, "result", "manifest"), sdk.CatalogueManifest()) {
		t.Fatalf("discovery: %d %s", status, body)
	}
	status, body = stepstest.Post(t, r.URL, "/x", `{"jsonrpc": "2.0", "id": 8, "method": "hooks/capabilities", "params": {}}`)
	if answer, _ = sdk.Decode([]byte(body)); status != 200 || !sdk.Equal(sdk.Path(answer, "error", "code"), contract.InvalidParams) {
		t.Fatalf("an invalid discovery: %d %s", status, body)
	}
	// GET /capabilities: the bare capabilities of M's tool.before entry, unrecorded
	resp, err := http.Get(r.URL + "/capabilities")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /capabilities: %v", err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	first := sdk.CatalogueManifest()["events"].([]any)[0] // tool.before, intercept and observe
	if got, _ := sdk.Decode(data); !sdk.Equal(sdk.Path(first, "event"), "tool.before") ||
		!sdk.Equal(got, sdk.Path(first, "capabilities")) ||
		!sdk.Equal(got, map[string]any{"effects": []any{"deny", "allow", "ask", "modify", "message", "flow"},
			"modify": map[string]any{"input": map[string]any{"replace": true, "merge": true}},
			"flow":   map[string]any{"operations": []any{"stop"}}}) {
		t.Errorf("GET /capabilities: %s", data)
	}
	for _, probe := range []struct {
		what, message string
		status        int
	}{
		{"accepted", observeText("a", "turn.end", turnEnd), 202},
		{"no outcome", observeText("b", "turn.end", `, "turn": {"id": "t"}, "continuationCount": 0, "items": []`), 400},
		{"its own parent", observeText("c", "task.change.before", `, "parentEventId": "c", "task": {"id": "k", "operation": "create", "change": {}}`), 409},
		{"a redelivery", observeText("a", "turn.end", turnEnd), 202},
		{"another type", observeText("a", "task.change.before", `, "task": {"id": "k", "operation": "create", "change": {}}`), 409},
		{"a child of the rejected", observeText("d", "task.change.after", `, "parentEventId": "c", "task": {"id": "k2", "operation": "create", "change": {"s": 1}}`), 202},
		{"a no-op", observeText("e", "task.change.after", `, "task": {"id": "k", "operation": "update", "change": {"s": 1}, "prior": {"s": 1}}`), 409},
		{"an id", strings.Replace(observeText("f", "turn.end", turnEnd), `"jsonrpc": "2.0",`, `"jsonrpc": "2.0", "id": 1,`, 1), 400},
	} {
		if status, body := stepstest.Post(t, r.URL, "/observe", probe.message); status != probe.status || body != "" {
			t.Errorf("%s: %d %q", probe.what, status, body)
		}
	}
	if status, body := stepstest.Post(t, r.URL, "/", `{"jsonrpc": "2.0", "id": 9, "method": "hooks/intercept", "params": {}}`); status != 200 ||
		!strings.Contains(body, "-32601") {
		t.Errorf("another request: %d %s", status, body)
	}
	if status, _ := stepstest.Post(t, r.URL, "/", `{"jsonrpc": "2.0", "method": "hooks/other"}`); status != 204 {
		t.Errorf("another notification: %d", status)
	}
	var kinds []string
	for _, e := range r.Entries() {
		kinds = append(kinds, sdk.Path(e, "kind").(string)+":"+sdk.EncodeString(sdk.Path(e, "eventId"))+
			":"+sdk.EncodeString(sdk.Path(e, "errorKind")))
	}
	want := `discovery:null:null,discovery:null:null,observed:"a":null,rejected:"b":"schema",rejected:"c":"lineage",` +
		`observed:"a":null,rejected:"a":"lineage",observed:"d":null,rejected:"e":"lineage",rejected:"f":"schema"`
	if got := strings.Join(kinds, ","); got != want {
		t.Errorf("entries:\n got %s\nwant %s", got, want)
	}
	if e := r.Entries()[1].(map[string]any); !sdk.Equal(sdk.Path(e, "response", "error", "code"), contract.InvalidParams) {
		t.Errorf("the invalid discovery's receipt: %s", sdk.EncodeString(e))
	}
	// /wait-observed counts observed and rejected entries alike
	if status, body := stepstest.Post(t, r.ControlURL, "/wait-observed", `{"eventId": "a", "count": 3}`); status != 200 {
		t.Errorf("/wait-observed: %d %s", status, body)
	}
	if status, _ := stepstest.Post(t, r.ControlURL, "/mark", `{"scenario": "s", "kind": "accepted", "id": "x"}`); status != 404 {
		t.Errorf("/mark is no catalogue call: %d", status)
	}
}

func TestCatalogueClient(t *testing.T) {
	valid := decode(t, observeText("cc-1", "turn.end", turnEnd))
	invalid := decode(t, observeText("cc-2", "turn.end", ""))
	rows := []map[string]any{
		{"id": "notify", "category": "execution", "steps": []any{
			map[string]any{"op": "notify", "message": valid},
			map[string]any{"op": "notify", "message": invalid},
			map[string]any{"op": "rawNotify", "message": invalid},
			map[string]any{"op": "rawNotify", "message": valid},
		}},
		{"id": "register", "category": "registration", "steps": []any{
			map[string]any{"op": "register", "registration": decode(t, `{"protocolVersion": "draft", "hooks": [{"id": "com.example.x",
				"transport": {"type": "http", "url": "https://x.example.invalid/"},
				"subscriptions": [{"events": ["tool.*"], "mode": "intercept", "timeoutMs": 99, "failurePolicy": "fail-open",
				"content": {"default": "metadata"}}]}]}`), "requirements": []any{}, "context": decode(t, `{"interactive": false, "environment": {}}`)},
			map[string]any{"op": "register", "registration": map[string]any{}, "requirements": []any{}, "context": map[string]any{}},
		}},
		{"id": "bad-register", "category": "registration", "steps": []any{
			map[string]any{"op": "register", "registration": map[string]any{}, "requirements": map[string]any{}, "context": map[string]any{}},
		}},
		{"id": "odd", "category": "execution", "steps": []any{map[string]any{"op": "teleport"}}},
	}
	r, client := newRig(t, rows...)
	defer r.Close()
	client.Start(r.Client)
	if client.manifest == nil || !sdk.Equal(sdk.Path(client.discovery, "id"), "discovery") {
		t.Fatalf("discovery: %s (%s)", sdk.EncodeString(client.discovery), client.manifestProblem)
	}
	var got []any
	for _, row := range r.Client.Settings().Scenarios {
		got = append(got, r.Client.Row(client, row))
	}
	stepstest.ExpectJSON(t, "notify", got[0], `{"id": "notify", "status": "completed", "actual": {"sent": [`+
		sdk.EncodeString(valid)+`, `+sdk.EncodeString(invalid)+`, `+sdk.EncodeString(valid)+`], "registrations": []}}`)
	stepstest.ExpectJSON(t, "register", got[1], `{"id": "register", "status": "completed", "actual": {"sent": [],
		"registrations": [{"accepted": false, "rule": "timeout"}, {"accepted": false, "rule": "schema"}]}}`)
	if sdk.Path(got[2], "status") != "failed" || !strings.Contains(sdk.Path(got[2], "error").(string), "requirements") {
		t.Errorf("bad-register: %s", sdk.EncodeString(got[2]))
	}
	if sdk.Path(got[3], "status") != "unsupported" || !strings.Contains(sdk.Path(got[3], "error").(string), "teleport") {
		t.Errorf("odd: %s", sdk.EncodeString(got[3]))
	}
	var kinds []string
	for _, e := range r.Entries() {
		kinds = append(kinds, sdk.Path(e, "kind").(string))
	}
	if k := strings.Join(kinds, ","); k != "discovery,observed,rejected,observed" {
		t.Errorf("entries: %s", k)
	}
}

func TestCatalogueClientWithoutDiscovery(t *testing.T) {
	row := map[string]any{"id": "register", "category": "registration", "steps": []any{
		map[string]any{"op": "register", "registration": map[string]any{}, "requirements": []any{}, "context": map[string]any{}}}}
	r, _ := newRig(t, row)
	defer r.Close()
	// a client with no channel to the server: strict refuses mtls over plain HTTP
	settings := *r.Client.Settings()
	base := *settings.ClientSettings
	base.Auth = &contract.ClientAuth{Mode: "mtls", Profile: "strict"}
	settings.ClientSettings = &base
	c, err := steps.Open(&settings, stepstest.Schemas(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	client := &rows{}
	client.Start(c)
	if client.discovery != nil || client.manifest != nil {
		t.Fatalf("discovery: %s", sdk.EncodeString(client.discovery))
	}
	got := c.Row(client, settings.Scenarios[0])
	if sdk.Path(got, "status") != "failed" || !strings.Contains(sdk.Path(got, "error").(string), "over plain HTTP") {
		t.Errorf("a register row without a manifest: %s", sdk.EncodeString(got))
	}
}

// GET /capabilities answers the bare capabilities of the tool.before
// intercept entry of M, the manifest hooks/capabilities answers.
func TestGetCapabilities(t *testing.T) {
	got, posted := stepstest.GetCapabilities(t, server)
	want := stepstest.ToolBefore(sdk.Path(posted, "result", "manifest"))
	if want == nil || !sdk.Equal(got, want) {
		t.Errorf("GET answered %s, the tool.before entry has %s", sdk.EncodeString(got), sdk.EncodeString(want))
	}
}
