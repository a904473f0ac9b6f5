package steps_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps"
	"ahp-interop/adapters/go/contract/steps/stepstest"
	"ahp-interop/adapters/go/sdk"
)

var (
	decode     = stepstest.Decode
	expectJSON = stepstest.ExpectJSON
	list       = stepstest.List
)

func request(t *testing.T, id string, items string) map[string]any {
	event := `{"id": "` + id + `", "source": "urn:ahp:test", "type": "tool.before", "time": "2026-01-01T00:00:00Z",
		"session": {"id": "s"}, "call": {"id": "c"}, "path": "native",
		"tool": {"origin": "native", "name": "task", "kind": "task", "input": {"value": "original"}}` + items + `}`
	return decode(t, `{"jsonrpc": "2.0", "id": "`+id+`", "method": "hooks/intercept", "params": {
		"protocolVersion": "draft", "event": `+event+`,
		"capabilities": {"effects": ["allow", "deny", "modify"], "modify": {"input": {"replace": true, "merge": false}}},
		"state": {"permission": "none", "candidate": null}}}`)
}

func response(t *testing.T, id, effects string) map[string]any {
	return decode(t, `{"jsonrpc": "2.0", "id": "`+id+`", "result": {"protocolVersion": "draft", "effects": `+effects+`}}`)
}

// stepRows run every row as a step row.
type stepRows struct{}

func (stepRows) Start(*steps.Client)                  {}
func (stepRows) Report(*steps.Client, map[string]any) {}
func (stepRows) Row(c *steps.Client, row contract.Scenario) (map[string]any, error) {
	return c.RunSteps(row)
}

func stepServer(s *sdk.Schemas, proc *contract.SuiteServer) (contract.SuiteDispatcher, error) {
	return steps.NewServer(s, proc, proc.Settings.Scenarios), nil
}

// newRig is the step server in process and a client of it over HTTP.
func newRig(t *testing.T, rows ...map[string]any) *stepstest.Rig {
	t.Helper()
	t.Setenv("AHP_TEST_OTHER_TOKEN", "not-the-upload-token-0123")
	return stepstest.New(t, stepServer, stepRows{}, rows...)
}

func TestStepsCancelBeforeReply(t *testing.T) {
	row := map[string]any{"id": "cancel", "requests": map[string]any{"a": request(t, "t-cancel", "")},
		"responses": map[string]any{"a": response(t, "t-cancel", `[{"type": "allow"}]`)},
		"steps": list(t, `[{"op": "send", "key": "a", "slot": "a"}, {"op": "wait", "key": "a", "count": 1},
			{"op": "cancel", "key": "a"}, {"op": "failOpen", "key": "a"}, {"op": "release", "key": "a"},
			{"op": "receive", "slot": "a"}, {"op": "accept", "key": "a"}]`)}
	r := newRig(t, row)
	defer r.Close()
	actual := r.Run(t, row)
	expectJSON(t, "actual", actual, `{"published": [], "cancelled": ["t-cancel"], "ignored": ["a"], "states": {},
		"observations": [], "uploadStatuses": []}`)
	if k := r.Kinds("t-cancel"); k != "received,cancelled,replied" {
		t.Errorf("receipts: %s", k)
	}
}

func TestStepsAcceptDuplicateAndObserve(t *testing.T) {
	row := map[string]any{"id": "accept", "requests": map[string]any{"a": request(t, "t-accept", "")},
		"responses": map[string]any{"a": response(t, "t-accept",
			`[{"type": "modify", "target": "input", "operation": "replace", "value": {"value": "settled"}}, {"type": "allow"}]`)},
		"steps": list(t, `[{"op": "send", "key": "a", "slot": "a"}, {"op": "wait", "key": "a", "count": 1},
			{"op": "release", "key": "a"}, {"op": "receive", "slot": "a"}, {"op": "accept", "key": "a"},
			{"op": "send", "key": "a", "slot": "dup", "bypassSDK": true}, {"op": "wait", "key": "a", "count": 2},
			{"op": "receive", "slot": "dup"}, {"op": "accept", "key": "a"},
			{"op": "observe", "key": "a", "subscription": "metadata"}]`)}
	r := newRig(t, row)
	defer r.Close()
	actual := r.Run(t, row)
	expectJSON(t, "actual", actual, `{"published": ["t-accept"], "cancelled": [], "ignored": ["dup"],
		"states": {"t-accept": {"decision": "allow", "executed": true, "input": {"value": "settled"}, "messages": []}},
		"observations": [{"eventId": "t-accept", "subscription": "metadata", "input": {"value": "settled"}}],
		"uploadStatuses": []}`)
	if k := r.Kinds("t-accept"); k != "received,replied,acquired,accepted,received,replied,observed" {
		t.Errorf("receipts: %s", k)
	}
}

func TestStepsRejectedReplyThenFailOpen(t *testing.T) {
	row := map[string]any{"id": "reject", "requests": map[string]any{"a": request(t, "t-reject", "")},
		"responses": map[string]any{"a": response(t, "t-reject", `[{"type": "ask"}]`)}, // not advertised
		"steps": list(t, `[{"op": "send", "key": "a", "slot": "a"}, {"op": "release", "key": "a"},
			{"op": "receive", "slot": "a"}, {"op": "accept", "key": "a"}, {"op": "failOpen", "key": "a"}]`)}
	r := newRig(t, row)
	defer r.Close()
	actual := r.Run(t, row)
	expectJSON(t, "states", actual["states"],
		`{"t-reject": {"decision": "allow", "executed": true, "input": {"value": "original"}, "messages": []}}`)
}

func TestStepsUploadAndContent(t *testing.T) {
	body := []byte("attachment bytes")
	item := `, "items": [{"id": "i", "kind": "attachment", "mediaType": "application/octet-stream", "selection": "body", "body": {"ref": "alias-1"}}]`
	row := map[string]any{"id": "upload", "requests": map[string]any{"a": request(t, "t-upload", item)},
		"responses": map[string]any{"a": response(t, "t-upload", `[]`)},
		"steps": []any{
			map[string]any{"op": "upload", "subscription": "body", "ref": "alias-1", "bodyBase64": base64.StdEncoding.EncodeToString(body),
				"size": len(body), "sha256": contract.SHA256Hex(body)},
			map[string]any{"op": "upload", "subscription": "body", "ref": "alias-2", "bodyBase64": base64.StdEncoding.EncodeToString(body),
				"size": len(body), "sha256": contract.SHA256Hex(body),
				"upload": map[string]any{"auth": map[string]any{"type": "bearer", "tokenEnv": "AHP_TEST_OTHER_TOKEN"}, "timeoutMs": 5000}},
			map[string]any{"op": "send", "key": "a", "slot": "a"}, map[string]any{"op": "release", "key": "a"},
			map[string]any{"op": "receive", "slot": "a"}, map[string]any{"op": "accept", "key": "a"},
		}}
	r := newRig(t, row)
	defer r.Close()
	actual := r.Run(t, row)
	expectJSON(t, "uploadStatuses", actual["uploadStatuses"], `[201, 401]`)
	expectJSON(t, "published", actual["published"], `["t-upload"]`)
	got := sent(t, r, "t-upload")
	ref, _ := sdk.Path(sdk.Path(got, "params", "event", "items").([]any)[0], "body", "ref").(string)
	if !strings.HasPrefix(ref, "urn:uuid:") || !r.Proc.Store.Has(ref) {
		t.Errorf("the alias was not rebound to the receiver's ref: %q", ref)
	}
}

// sent is the first intercept the server received with id.
func sent(t *testing.T, r *stepstest.Rig, id string) any {
	for _, e := range r.Entries() {
		if sdk.Path(e, "kind") == "received" && sdk.Path(e, "id") == id {
			return sdk.Path(e, "message")
		}
	}
	t.Fatalf("%s was never received", id)
	return nil
}

func chainRow(t *testing.T, id, subs string, sequence ...map[string]any) map[string]any {
	seq := []any{}
	for _, m := range sequence {
		seq = append(seq, m)
	}
	return map[string]any{"id": id, "chain": decode(t, `{"subscriptions": `+subs+`}`),
		"requests":  map[string]any{"a": request(t, id, `, "items": [{"id": "m", "kind": "text", "mediaType": "text/plain", "selection": "metadata"}]`)},
		"responses": map[string]any{"a": response(t, id, `[]`)}, "responseSequences": map[string]any{"a": seq}, "steps": []any{}}
}

func TestChainFailOpenThenDenyShortCircuits(t *testing.T) {
	row := chainRow(t, "t-chain-open", `[
		{"id": "a", "backend": "x", "mode": "intercept", "failurePolicy": "fail-open", "content": "metadata"},
		{"id": "b", "backend": "x", "mode": "intercept", "failurePolicy": "fail-open", "content": "omit"},
		{"id": "c", "backend": "x", "mode": "intercept", "failurePolicy": "fail-open", "content": "metadata"},
		{"id": "audit", "backend": "x", "mode": "observe", "failurePolicy": "fail-open", "content": "omit"}]`,
		response(t, "t-chain-open", `[{"type": "return", "value": 1}]`), // not advertised: a failure
		response(t, "t-chain-open", `[{"type": "modify", "target": "input", "operation": "replace", "value": {"value": "settled"}}, {"type": "deny", "reason": "no"}]`))
	r := newRig(t, row)
	defer r.Close()
	expectJSON(t, "actual", r.Run(t, row), `{"called": ["a", "b"], "failures": ["a"], "observations": ["c", "audit"], "input": {"value": "settled"}}`)
	if k := r.Kinds("t-chain-open"); k != "received,replied,received,replied,chain-settled,observed,observed" {
		t.Errorf("receipts: %s", k)
	}
	// the second call carries the omit projection; the observer sees the settled input, items withheld
	var received, observed []any
	for _, e := range r.Proc.Entries.Snapshot()["entries"].([]any) {
		switch sdk.Path(e, "kind") {
		case "received":
			received = append(received, sdk.Path(e, "message"))
		case "observed":
			observed = append(observed, sdk.Path(e, "message"))
		}
	}
	expectJSON(t, "items of the omit call", sdk.Path(received[1], "params", "event", "items"), `[]`)
	expectJSON(t, "observed input", sdk.Path(observed[1], "params", "event", "tool", "input"), `{"value": "settled"}`)
	expectJSON(t, "observed items", sdk.Path(observed[1], "params", "event", "items"), `[]`)
}

// As upstream servers record it: {kind: observer-blocked, id: the event id}, no
// scenario, just before the observed entry of a held observer's notification;
// none for a chain without holdObservers; the answer unchanged (the hostile
// frame at once). Over HTTP, then as the stdio loop hands each line over.
func TestHeldObserversAreRecordedJustBeforeObserved(t *testing.T) {
	held := chainRow(t, "t-held", `[]`, response(t, "t-held", `[{"type": "deny", "reason": "d"}]`))
	held["chain"].(map[string]any)["holdObservers"] = true
	plain := chainRow(t, "t-plain", `[]`, response(t, "t-plain", `[{"type": "deny", "reason": "d"}]`))
	notes := map[string]map[string]any{}
	for _, row := range []map[string]any{held, plain} { // boundary event ids of their own
		event := sdk.Path(row, "requests", "a", "params", "event").(map[string]any)
		event["id"] = row["id"].(string) + ":event"
		notes[row["id"].(string)] = map[string]any{"jsonrpc": "2.0", "method": "hooks/observe",
			"params": map[string]any{"protocolVersion": "draft", "event": sdk.Clone(event)}}
	}
	order := []string{"t-held", "t-plain", "t-held"}
	var want []any
	for _, id := range order {
		if id == "t-held" {
			want = append(want, map[string]any{"kind": "observer-blocked", "id": "t-held:event"})
		}
		note := notes[id]
		want = append(want, map[string]any{"kind": "observed", "eventId": id + ":event",
			"event": sdk.Path(note, "params", "event"), "message": note})
	}
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) { heldObservers(t, transport, []map[string]any{held, plain}, order, notes, want) })
	}
}

func heldObservers(t *testing.T, transport string, rows []map[string]any, order []string,
	notes map[string]map[string]any, want []any) {
	r := newRig(t, rows...)
	defer r.Close()
	for _, id := range order {
		var answer any
		if transport == "http" {
			resp, err := http.Post(r.URL+"/observe", "application/json", bytes.NewReader(sdk.Encode(notes[id])))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s: status %d", transport, resp.StatusCode)
			}
			answer, _ = sdk.Decode(body)
		} else {
			decoded, _ := sdk.Decode(sdk.Encode(notes[id])) // as a line is parsed
			a := r.Proc.Backend.Dispatch(decoded)
			if !a.HasReply || a.Gate != nil || a.Never {
				t.Fatalf("%s: the answer is not written at once: %+v", transport, a)
			}
			answer = a.Reply
		}
		if sdk.Path(answer, "id") != "unsolicited-observer" {
			t.Errorf("%s: answer %s", transport, sdk.EncodeString(answer))
		}
	}
	got := r.Proc.Entries.Snapshot()["entries"]
	if !sdk.Equal(got, want) {
		t.Errorf("%s entries: got %s, want %s", transport, sdk.EncodeString(got), sdk.EncodeString(want))
	}
}

func TestChainFailurePolicies(t *testing.T) {
	subs := func(policy string) string {
		return `[{"id": "gate", "backend": "x", "mode": "intercept", "failurePolicy": "fail-open", "content": "metadata"},
			{"id": "review", "backend": "x", "mode": "intercept", "failurePolicy": "` + policy + `", "content": "metadata", "timeoutMs": 200},
			{"id": "final", "backend": "x", "mode": "intercept", "failurePolicy": "fail-open", "content": "metadata"}]`
	}
	modify := func(id string) map[string]any {
		return response(t, id, `[{"type": "modify", "target": "input", "operation": "replace", "value": {"value": "reviewed"}}]`)
	}
	cases := []struct {
		name, policy string
		fault        map[string]any
		want         string
	}{
		{"server-error-open", "fail-open", map[string]any{"fault": "server-error"},
			`{"called": ["gate", "review", "final"], "failures": ["review"], "observations": [], "input": {"value": "reviewed"}}`},
		{"malformed-closed", "fail-closed", map[string]any{"fault": "malformed"},
			`{"called": ["gate", "review"], "failures": ["review"], "observations": ["final"], "input": {"value": "original"}}`},
		{"timeout-closed", "fail-closed", map[string]any{"fault": "timeout"},
			`{"called": ["gate", "review"], "failures": ["review"], "observations": ["final"], "input": {"value": "original"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := "t-" + c.name
			row := chainRow(t, id, subs(c.policy), modify(id), c.fault, response(t, id, `[]`))
			r := newRig(t, row)
			defer r.Close()
			expectJSON(t, "actual", r.Run(t, row), c.want)
		})
	}
}

func TestChainUnreachableBackendAndInterrupt(t *testing.T) {
	row := chainRow(t, "t-unreachable", `[
		{"id": "gate", "backend": "unreachable", "mode": "intercept", "failurePolicy": "fail-closed", "content": "metadata", "timeoutMs": 2000},
		{"id": "review", "backend": "x", "mode": "intercept", "failurePolicy": "fail-open", "content": "metadata"}]`,
		response(t, "t-unreachable", `[]`))
	r := newRig(t, row)
	defer r.Close()
	expectJSON(t, "actual", r.Run(t, row), `{"called": ["gate"], "failures": ["gate"], "observations": ["review"], "input": {"value": "original"}}`)
	if k := r.Kinds("t-unreachable"); k != "chain-settled,observed" {
		t.Errorf("receipts (nothing for the unreachable call): %s", k)
	}

	row = chainRow(t, "t-interrupt", `[
		{"id": "gate", "backend": "x", "mode": "intercept", "failurePolicy": "fail-open", "content": "metadata"},
		{"id": "audit", "backend": "x", "mode": "observe", "failurePolicy": "fail-open", "content": "metadata"}]`,
		response(t, "t-interrupt", `[{"type": "deny", "reason": "too late"}]`))
	row["chain"].(map[string]any)["interrupt"] = true
	r2 := newRig(t, row)
	defer r2.Close()
	expectJSON(t, "actual", r2.Run(t, row), `{"called": ["gate"], "failures": [], "observations": [], "input": {"value": "original"}}`)
	if k := r2.Kinds("t-interrupt"); k != "received,cancelled,chain-settled,replied" {
		t.Errorf("receipts: %s", k)
	}
}

func TestUnknownOpAndSuite(t *testing.T) {
	row := map[string]any{"id": "odd", "requests": map[string]any{"a": request(t, "t-odd", "")},
		"steps": list(t, `[{"op": "teleport"}]`)}
	r := newRig(t, row)
	defer r.Close()
	got := r.Result(row)
	if got["status"] != "unsupported" || !strings.Contains(got["error"].(string), "teleport") {
		t.Errorf("an unknown op: %s", sdk.EncodeString(got))
	}
}
