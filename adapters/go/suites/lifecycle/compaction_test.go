package lifecycle

import (
	"net/http/httptest"
	"testing"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

func compactionRequest(t *testing.T, id, instructions string) map[string]any {
	return decode(t, `{"jsonrpc": "2.0", "id": "`+id+`:before", "method": "hooks/intercept", "params": {
		"protocolVersion": "draft", "event": {"id": "`+id+`:before", "source": "urn:ahp:test",
		"type": "context.compact.before", "time": "2026-01-01T00:00:00Z", "session": {"id": "s"}, "trigger": "manual",
		"items": [{"id": "`+id+`:m1", "role": "user", "parts": [{"id": "`+id+`:m1:t", "kind": "text",
		"mediaType": "text/plain", "selection": "body", "text": "hello"}]}]`+instructions+`},
		"capabilities": {"effects": ["deny", "modify", "return", "message"],
		"modify": {"instructions": {"replace": true, "merge": false}}},
		"state": {"permission": "none", "candidate": null}}}`)
}

func textPart(id, text string) string {
	return `{"id": "` + id + `", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "` + text + `"}`
}

// newCompactionRig is an in-process compaction server and a client over HTTP.
func newCompactionRig(t *testing.T, rows ...map[string]any) *rig {
	t.Helper()
	s := schemas(t)
	var scenarios []contract.Scenario
	for _, row := range rows {
		scenarios = append(scenarios, contract.Scenario{ID: row["id"].(string), Raw: row})
	}
	proc := contract.NewSuiteServer(&contract.SuiteServerSettings{ServerSettings: &contract.ServerSettings{},
		Suite: contract.SuiteCompaction, UploadToken: uploadToken})
	proc.Backend = NewCompactionServer(s, proc, scenarios)
	ahp := httptest.NewServer(contract.NewSuiteHandler(proc, nil))
	control := httptest.NewServer(contract.NewSuiteControl(proc.Entries, proc.Barriers))
	settings := &contract.SuiteClientSettings{
		ClientSettings: &contract.ClientSettings{Transport: "http", TimeoutMs: 5000, Scenarios: scenarios,
			Endpoint: ahp.URL + "/intercept", Auth: &contract.ClientAuth{Mode: "none", Profile: "strict"}},
		Suite: contract.SuiteCompaction, Backends: map[string]contract.BackendSettings{},
	}
	c := newClient(settings, s)
	c.control = contract.NewControlClient(control.URL)
	c.channel = contract.NewHTTPChannel(settings.Endpoint, "", nil)
	return &rig{client: c, proc: proc, close: func() {
		c.close()
		proc.Shutdown()
		ahp.Close()
		control.Close()
	}}
}

func TestCompactionSuppliedSummaryThenEdit(t *testing.T) {
	id := "sup"
	row := map[string]any{"id": id, "request": compactionRequest(t, id, ""),
		"before": steps(t, `[{"id": "store", "mode": "intercept"}, {"id": "audit", "mode": "observe"}]`),
		"after":  steps(t, `[{"id": "trim", "mode": "intercept"}]`),
		"responseSequences": decode(t, `{
			"before": [{"jsonrpc": "2.0", "id": "sup:before", "result": {"protocolVersion": "draft",
				"effects": [{"type": "return", "value": [`+textPart("g", "given")+`]}]}}],
			"after": [{"jsonrpc": "2.0", "id": "sup:after", "result": {"protocolVersion": "draft",
				"effects": [{"type": "modify", "target": "summary", "operation": "replace",
				"value": [`+textPart("g", "edited")+`]}]}}]}`)}
	r := newCompactionRig(t, row)
	defer r.close()
	expectJSON(t, "actual", r.run(t, row), `{"applied": true, "instructions": [],
		"summary": [`+textPart("g", "edited")+`],
		"execution": {"status": "skipped", "reason": "supplied_result"},
		"provenance": {"kind": "supplied", "supplier": "store"},
		"before": {"called": ["store"], "failures": [], "observations": ["audit"]},
		"after": {"called": ["trim"], "failures": [], "observations": []}}`)
	if got := r.kinds("sup:before"); got != "received,replied,chain-settled,observed" {
		t.Errorf("before entries: %s", got)
	}
	if got := r.kinds("sup:after"); got != "received,replied,chain-settled" {
		t.Errorf("after entries: %s", got)
	}
	// the after request carries the supplied summary and no state on its first call
	for _, e := range r.proc.Entries.Snapshot()["entries"].([]any) {
		if sdk.Path(e, "id") == "sup:after" && sdk.Path(e, "kind") == "received" {
			if sdk.Path(e, "message", "params", "state") != nil {
				t.Error("the first after call carries a state")
			}
			expectJSON(t, "after summary", sdk.Path(e, "message", "params", "event", "summary"), `[`+textPart("g", "given")+`]`)
		}
	}
}

func TestCompactionGeneratedAndFailClosedAfter(t *testing.T) {
	id := "gen"
	row := map[string]any{"id": id, "request": compactionRequest(t, id, `, "instructions": [`+textPart("i", "Keep dates.")+`]`),
		"after":             steps(t, `[{"id": "gate", "mode": "intercept", "failurePolicy": "fail-closed"}, {"id": "late", "mode": "intercept"}]`),
		"responseSequences": decode(t, `{"before": [{"fault": "server-error"}], "after": [{"fault": "malformed"}]}`)}
	r := newCompactionRig(t, row)
	defer r.close()
	expectJSON(t, "actual", r.run(t, row), `{"applied": false, "instructions": [`+textPart("i", "Keep dates.")+`],
		"summary": null, "execution": null, "provenance": null,
		"before": {"called": [], "failures": [], "observations": []},
		"after": {"called": ["gate"], "failures": ["gate"], "observations": ["late"]}}`)
	var observed any
	for _, e := range r.proc.Entries.Snapshot()["entries"].([]any) {
		if sdk.Path(e, "kind") == "observed" {
			observed = sdk.Path(e, "event", "summary")
		}
	}
	expectJSON(t, "the uncalled subscription's summary", observed,
		`[`+textPart("gen:summary", "Summary of 1 items. Instructions: Keep dates.")+`]`)
}

func TestCompactionNegativeUnrecorded(t *testing.T) {
	run := map[string]any{"id": "run", "request": compactionRequest(t, "run", ""),
		"responseSequences": decode(t, `{"before": [], "after": []}`)}
	negatives := []map[string]any{
		{"id": "neg-body", "negative": compactionRequest(t, "run", `, "instructions": [{"id": "i", "kind": "text",
			"mediaType": "text/plain", "selection": "body", "text": "x", "body": {"ref": "urn:x", "size": 1, "sha256": "`+
			"0000000000000000000000000000000000000000000000000000000000000000"+`"}}]`)},
		{"id": "neg-id", "negative": compactionRequest(t, "nobody", "")},
		{"id": "neg-schema", "negative": decode(t, `{"jsonrpc": "2.0", "id": "run:before", "method": "hooks/intercept", "params": {}}`)},
	}
	r := newCompactionRig(t, run)
	defer r.close()
	for _, neg := range negatives {
		expectJSON(t, neg["id"].(string), r.run(t, neg), `{"error": -32602}`)
	}
	if n := len(r.proc.Entries.Snapshot()["entries"].([]any)); n != 0 {
		t.Errorf("%d entries recorded", n)
	}
}
