package lifecycle

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// catalogueRig is an in-process catalogue server (AHP and control
// listeners) and a client connected to it over HTTP.
type catalogueRig struct {
	client       *Client
	proc         *contract.SuiteServer
	ahp, control *httptest.Server
	close        func()
}

func newCatalogueRig(t *testing.T, rows ...map[string]any) *catalogueRig {
	t.Helper()
	s := schemas(t)
	var scenarios []contract.Scenario
	for _, row := range rows {
		scenarios = append(scenarios, contract.Scenario{ID: row["id"].(string), Raw: row})
	}
	proc := contract.NewSuiteServer(&contract.SuiteServerSettings{ServerSettings: &contract.ServerSettings{},
		Suite: contract.SuiteCatalogue})
	proc.Backend = NewCatalogueServer(s, proc)
	ahp := httptest.NewServer(contract.NewSuiteHandler(proc, nil))
	control := httptest.NewServer(proc.NewControl())
	settings := &contract.SuiteClientSettings{
		ClientSettings: &contract.ClientSettings{Transport: "http", TimeoutMs: 5000, Scenarios: scenarios,
			Endpoint: ahp.URL + "/intercept", Auth: &contract.ClientAuth{Mode: "none", Profile: "strict"}},
		Suite: contract.SuiteCatalogue,
	}
	c := newClient(settings, s)
	c.control = contract.NewControlClient(control.URL)
	c.channel = contract.NewHTTPChannel(settings.Endpoint, "", nil)
	return &catalogueRig{client: c, proc: proc, ahp: ahp, control: control, close: func() {
		c.close()
		proc.Shutdown()
		ahp.Close()
		control.Close()
	}}
}

func (r *catalogueRig) entries() []any { return r.proc.Entries.Snapshot()["entries"].([]any) }

func (r *catalogueRig) post(t *testing.T, base, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(base+path, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func observeText(id, kind, fields string) string {
	return `{"jsonrpc": "2.0", "method": "hooks/observe", "params": {"protocolVersion": "draft", "event": {"id": "` + id +
		`", "source": "urn:ahp:test", "time": "2026-01-01T00:00:00Z", "type": "` + kind + `"` + fields + `}}}`
}

const turnEnd = `, "turn": {"id": "t"}, "outcome": "completed", "continuationCount": 0, "items": []`

func TestCatalogueReceiver(t *testing.T) {
	r := newCatalogueRig(t)
	defer r.close()
	status, body := r.post(t, r.ahp.URL, "/capabilities",
		`{"jsonrpc": "2.0", "id": 7, "method": "hooks/capabilities", "params": {"protocolVersion": "draft"}}`)
	answer, _ := sdk.Decode([]byte(body))
	if status != 200 || !sdk.Equal(sdk.Path(answer, "id"), 7) ||
		!sdk.Equal(sdk.Path(answer, "result", "manifest"), sdk.CatalogueManifest()) {
		t.Fatalf("discovery: %d %s", status, body)
	}
	status, body = r.post(t, r.ahp.URL, "/x", `{"jsonrpc": "2.0", "id": 8, "method": "hooks/capabilities", "params": {}}`)
	if answer, _ = sdk.Decode([]byte(body)); status != 200 || !sdk.Equal(sdk.Path(answer, "error", "code"), contract.InvalidParams) {
		t.Fatalf("an invalid discovery: %d %s", status, body)
	}
	// GET /capabilities: the bare capabilities of M's tool.before entry, unrecorded
	resp, err := http.Get(r.ahp.URL + "/capabilities")
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
		if status, body := r.post(t, r.ahp.URL, "/observe", probe.message); status != probe.status || body != "" {
			t.Errorf("%s: %d %q", probe.what, status, body)
		}
	}
	if status, body := r.post(t, r.ahp.URL, "/", `{"jsonrpc": "2.0", "id": 9, "method": "hooks/intercept", "params": {}}`); status != 200 ||
		!strings.Contains(body, "-32601") {
		t.Errorf("another request: %d %s", status, body)
	}
	if status, _ := r.post(t, r.ahp.URL, "/", `{"jsonrpc": "2.0", "method": "hooks/other"}`); status != 204 {
		t.Errorf("another notification: %d", status)
	}
	var kinds []string
	for _, e := range r.entries() {
		kinds = append(kinds, sdk.Path(e, "kind").(string)+":"+sdk.EncodeString(sdk.Path(e, "eventId"))+
			":"+sdk.EncodeString(sdk.Path(e, "errorKind")))
	}
	want := `discovery:null:null,discovery:null:null,observed:"a":null,rejected:"b":"schema",rejected:"c":"lineage",` +
		`observed:"a":null,rejected:"a":"lineage",observed:"d":null,rejected:"e":"lineage",rejected:"f":"schema"`
	if got := strings.Join(kinds, ","); got != want {
		t.Errorf("entries:\n got %s\nwant %s", got, want)
	}
	if e := r.entries()[1].(map[string]any); !sdk.Equal(sdk.Path(e, "response", "error", "code"), contract.InvalidParams) {
		t.Errorf("the invalid discovery's receipt: %s", sdk.EncodeString(e))
	}
	// /wait-observed counts observed and rejected entries alike
	if status, body := r.post(t, r.control.URL, "/wait-observed", `{"eventId": "a", "count": 3}`); status != 200 {
		t.Errorf("/wait-observed: %d %s", status, body)
	}
	if status, _ := r.post(t, r.control.URL, "/mark", `{"scenario": "s", "kind": "accepted", "id": "x"}`); status != 404 {
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
	r := newCatalogueRig(t, rows...)
	defer r.close()
	r.client.discover()
	if r.client.catalogue.manifest == nil || !sdk.Equal(sdk.Path(r.client.catalogue.discovery, "id"), "discovery") {
		t.Fatalf("discovery: %s (%s)", sdk.EncodeString(r.client.catalogue.discovery), r.client.catalogue.manifestProblem)
	}
	var got []any
	for _, row := range r.client.settings.Scenarios {
		got = append(got, r.client.row(row))
	}
	expectJSON(t, "notify", got[0], `{"id": "notify", "status": "completed", "actual": {"sent": [`+
		sdk.EncodeString(valid)+`, `+sdk.EncodeString(invalid)+`, `+sdk.EncodeString(valid)+`], "registrations": []}}`)
	expectJSON(t, "register", got[1], `{"id": "register", "status": "completed", "actual": {"sent": [],
		"registrations": [{"accepted": false, "rule": "timeout"}, {"accepted": false, "rule": "schema"}]}}`)
	if sdk.Path(got[2], "status") != "failed" || !strings.Contains(sdk.Path(got[2], "error").(string), "requirements") {
		t.Errorf("bad-register: %s", sdk.EncodeString(got[2]))
	}
	if sdk.Path(got[3], "status") != "unsupported" || !strings.Contains(sdk.Path(got[3], "error").(string), "teleport") {
		t.Errorf("odd: %s", sdk.EncodeString(got[3]))
	}
	var kinds []string
	for _, e := range r.entries() {
		kinds = append(kinds, sdk.Path(e, "kind").(string))
	}
	if k := strings.Join(kinds, ","); k != "discovery,observed,rejected,observed" {
		t.Errorf("entries: %s", k)
	}
}

func TestCatalogueClientWithoutDiscovery(t *testing.T) {
	row := map[string]any{"id": "register", "category": "registration", "steps": []any{
		map[string]any{"op": "register", "registration": map[string]any{}, "requirements": []any{}, "context": map[string]any{}}}}
	r := newCatalogueRig(t, row)
	defer r.close()
	r.client.channel = contract.BrokenChannel{Reason: "no server"}
	r.client.discover()
	if r.client.catalogue.discovery != nil || r.client.catalogue.manifest != nil {
		t.Fatalf("discovery: %s", sdk.EncodeString(r.client.catalogue.discovery))
	}
	got := r.client.row(r.client.settings.Scenarios[0])
	if sdk.Path(got, "status") != "failed" || !strings.Contains(sdk.Path(got, "error").(string), "no server") {
		t.Errorf("a register row without a manifest: %s", sdk.EncodeString(got))
	}
}
