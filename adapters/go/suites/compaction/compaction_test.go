package compaction

import (
	"testing"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps/stepstest"
	"ahp-interop/adapters/go/sdk"
)

var (
	decode     = stepstest.Decode
	expectJSON = stepstest.ExpectJSON
	list       = stepstest.List
)

func server(s *sdk.Schemas, proc *contract.SuiteServer) (contract.SuiteDispatcher, error) {
	return NewServer(s, proc, proc.Settings.Scenarios), nil
}

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

// newRig is an in-process compaction server and a client of it over HTTP.
func newRig(t *testing.T, raw ...map[string]any) *stepstest.Rig {
	t.Helper()
	return stepstest.New(t, server, rows{}, raw...)
}

func TestCompactionSuppliedSummaryThenEdit(t *testing.T) {
	id := "sup"
	row := map[string]any{"id": id, "request": compactionRequest(t, id, ""),
		"before": list(t, `[{"id": "store", "mode": "intercept"}, {"id": "audit", "mode": "observe"}]`),
		"after":  list(t, `[{"id": "trim", "mode": "intercept"}]`),
		"responseSequences": decode(t, `{
			"before": [{"jsonrpc": "2.0", "id": "sup:before", "result": {"protocolVersion": "draft",
				"effects": [{"type": "return", "value": [`+textPart("g", "given")+`]}]}}],
			"after": [{"jsonrpc": "2.0", "id": "sup:after", "result": {"protocolVersion": "draft",
				"effects": [{"type": "modify", "target": "summary", "operation": "replace",
				"value": [`+textPart("g", "edited")+`]}]}}]}`)}
	r := newRig(t, row)
	defer r.Close()
	expectJSON(t, "actual", r.Run(t, row), `{"applied": true, "instructions": [],
		"summary": [`+textPart("g", "edited")+`],
		"execution": {"status": "skipped", "reason": "supplied_result"},
		"provenance": {"kind": "supplied", "supplier": "store"},
		"before": {"called": ["store"], "failures": [], "observations": ["audit"]},
		"after": {"called": ["trim"], "failures": [], "observations": []}}`)
	if got := r.Kinds("sup:before"); got != "received,replied,chain-settled,observed" {
		t.Errorf("before entries: %s", got)
	}
	if got := r.Kinds("sup:after"); got != "received,replied,chain-settled" {
		t.Errorf("after entries: %s", got)
	}
	// the after request carries the supplied summary and no state on its first call
	for _, e := range r.Proc.Entries.Snapshot()["entries"].([]any) {
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
		"after":             list(t, `[{"id": "gate", "mode": "intercept", "failurePolicy": "fail-closed"}, {"id": "late", "mode": "intercept"}]`),
		"responseSequences": decode(t, `{"before": [{"fault": "server-error"}], "after": [{"fault": "malformed"}]}`)}
	r := newRig(t, row)
	defer r.Close()
	expectJSON(t, "actual", r.Run(t, row), `{"applied": false, "instructions": [`+textPart("i", "Keep dates.")+`],
		"summary": null, "execution": null, "provenance": null,
		"before": {"called": [], "failures": [], "observations": []},
		"after": {"called": ["gate"], "failures": ["gate"], "observations": ["late"]}}`)
	var observed any
	for _, e := range r.Proc.Entries.Snapshot()["entries"].([]any) {
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
	r := newRig(t, run)
	defer r.Close()
	for _, neg := range negatives {
		expectJSON(t, neg["id"].(string), r.Run(t, neg), `{"error": -32602}`)
	}
	if n := len(r.Proc.Entries.Snapshot()["entries"].([]any)); n != 0 {
		t.Errorf("%d entries recorded", n)
	}
}

// GET /capabilities answers the bare capabilities of the tool.before
// intercept entry of the core manifest, the one hooks/capabilities answers.
func TestGetCapabilities(t *testing.T) {
	got, posted := stepstest.GetCapabilities(t, server)
	manifest := sdk.Path(posted, "result", "manifest")
	want := stepstest.ToolBefore(manifest)
	if want == nil || !sdk.Equal(got, want) || !sdk.Equal(manifest, sdk.DiscoveryManifest()) {
		t.Errorf("GET answered %s, the tool.before entry has %s", sdk.EncodeString(got), sdk.EncodeString(want))
	}
}
