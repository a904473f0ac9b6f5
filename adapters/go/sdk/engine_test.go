package sdk

import (
	"os"
	"strings"
	"sync"
	"testing"
)

var (
	schemasOnce sync.Once
	testSchemas *Schemas
	schemasErr  error
)

func schemas(t *testing.T) *Schemas {
	t.Helper()
	schemasOnce.Do(func() { testSchemas, schemasErr = LoadSchemas(os.DirFS("../../../schemas/draft")) })
	if schemasErr != nil {
		t.Fatalf("loading the canonical schemas: %v", schemasErr)
	}
	return testSchemas
}

const toolCaps = `{"effects":["deny","allow","ask","modify","message","return","flow","inject"],
 "modify":{"input":{"replace":true,"merge":true}},"flow":{"operations":["stop"]},
 "inject":{"context":{"append":true,"deliverAt":["now"]}}}`

// toolRequest is a canonical tool.before request with the given tool name,
// input, capabilities and state ("" leaves state out).
func toolRequest(t *testing.T, tool, input, caps, state string) map[string]any {
	t.Helper()
	text := `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft",
	 "event":{"id":"r1","source":"urn:test","type":"tool.before","time":"2026-04-02T10:15:00Z",
	  "session":{"id":"s"},"call":{"id":"c"},"tool":{"name":"` + tool + `","kind":"other","origin":"native","input":` + input + `},"path":"native"},
	 "capabilities":` + caps
	if state != "" {
		text += `,"state":` + state
	}
	text += `}}`
	return checkedRequest(t, text)
}

func checkedRequest(t *testing.T, text string) map[string]any {
	t.Helper()
	req := mustDecode(t, text).(map[string]any)
	if problem := schemas(t).Check(InterceptRequest, req); problem != "" {
		t.Fatalf("test request is not canonical: %s", problem)
	}
	return req
}

func respond(t *testing.T, effects string) any {
	return mustDecode(t, `{"jsonrpc":"2.0","id":"r1","result":{"protocolVersion":"draft","effects":`+effects+`}}`)
}

// expect checks every key of want (a JSON object text) and that keys in
// absent are not reported.
func expect(t *testing.T, out Outcome, want string, absent ...string) {
	t.Helper()
	if out.Unsupported != "" {
		t.Fatalf("unsupported: %s", out.Unsupported)
	}
	for k, v := range mustDecode(t, want).(map[string]any) {
		if !Equal(out.Actual[k], v) {
			t.Errorf("%s = %s, want %s (reason %q)", k, EncodeString(out.Actual[k]), EncodeString(v), out.Reason)
		}
	}
	for _, k := range absent {
		if _, has := out.Actual[k]; has {
			t.Errorf("%s reported: %s", k, EncodeString(out.Actual[k]))
		}
	}
}

func rejected(t *testing.T, out Outcome) {
	t.Helper()
	if len(out.Actual) != 1 || out.Actual["rejected"] != true {
		t.Fatalf("not rejected: %s", EncodeString(out.Actual))
	}
}

const none = `{"permission":"none","candidate":null}`

func TestToolBeforeDecisions(t *testing.T) {
	s := schemas(t)
	req := toolRequest(t, "read_file", `{"path":"a"}`, toolCaps, none)
	expect(t, Apply(s, req, respond(t, `[]`), Options{}),
		`{"decision":"allow","permission":"none","executed":true,"messages":[],"input":{"path":"a"},"effective":{"input":{"path":"a"}}}`,
		"result", "flow", "injections", "continuationInstructions", "continuationRemaining", "rejected")
	expect(t, Apply(s, req, respond(t, `[{"type":"message","text":"m1"},{"type":"deny","reason":"no"},{"type":"message","text":"m2"}]`), Options{}),
		`{"decision":"deny","permission":"deny","executed":false,"messages":["m1","m2"]}`)
	expect(t, Apply(s, req, respond(t, `[{"type":"deny","reason":"no"},{"type":"ask"},{"type":"allow"}]`), Options{}),
		`{"decision":"deny","executed":false}`)
	expect(t, Apply(s, req, respond(t, `[{"type":"allow"},{"type":"ask"}]`), Options{}), `{"decision":"ask","executed":false}`)
	// incoming state: the strongest wins; omitted state means none
	asked := toolRequest(t, "read_file", `{"path":"a"}`, toolCaps, `{"permission":"ask","candidate":null}`)
	expect(t, Apply(s, asked, respond(t, `[{"type":"allow"}]`), Options{}), `{"decision":"ask","permission":"ask"}`)
	omitted := toolRequest(t, "read_file", `{"path":"a"}`, toolCaps, "")
	expect(t, Apply(s, omitted, respond(t, `[]`), Options{}), `{"decision":"allow","permission":"none","executed":true}`)
}

func TestToolBeforeModify(t *testing.T) {
	s := schemas(t)
	req := toolRequest(t, "read_file", `{"path":"a","range":{"start":1,"end":2},"keep":true}`, toolCaps, none)
	// merge is shallow: a nested object is replaced whole; null is a value
	expect(t, Apply(s, req, respond(t, `[{"type":"modify","target":"input","operation":"merge","value":{"range":{"start":5},"keep":null}}]`), Options{}),
		`{"input":{"path":"a","range":{"start":5},"keep":null},"executed":true}`)
	// ordered: replace then merge
	expect(t, Apply(s, req, respond(t, `[{"type":"modify","target":"input","operation":"replace","value":{"x":1}},
		{"type":"modify","target":"input","operation":"merge","value":{"y":2}}]`), Options{}),
		`{"input":{"x":1,"y":2},"effective":{"input":{"x":1,"y":2}}}`)
	// a non-object input value is a schema failure of the response
	rejected(t, Apply(s, req, respond(t, `[{"type":"message","text":"m"},{"type":"modify","target":"input","operation":"replace","value":[1]}]`), Options{}))
}

func TestCandidates(t *testing.T) {
	s := schemas(t)
	req := toolRequest(t, "read_file", `{"path":"a"}`, toolCaps, none)
	expect(t, Apply(s, req, respond(t, `[{"type":"return","value":false}]`), Options{}), `{"result":false,"executed":false,"decision":"allow"}`)
	// a return survives a modification in the same response; the last return binds
	expect(t, Apply(s, req, respond(t, `[{"type":"return","value":1},{"type":"modify","target":"input","operation":"merge","value":{"b":1}},{"type":"return","value":2}]`), Options{}),
		`{"result":2,"executed":false}`)
	// deny and stop hold the supplied result back
	expect(t, Apply(s, req, respond(t, `[{"type":"return","value":1},{"type":"deny","reason":"no"}]`), Options{}), `{"executed":false}`, "result")
	expect(t, Apply(s, req, respond(t, `[{"type":"return","value":1},{"type":"flow","operation":"stop","reason":"halt"}]`), Options{}),
		`{"executed":false,"flow":"stop"}`, "result")
	// an incoming candidate survives only an unchanged (or restored) input
	withCandidate := toolRequest(t, "read_file", `{"path":"a"}`, toolCaps, `{"permission":"allow","candidate":{"value":null}}`)
	expect(t, Apply(s, withCandidate, respond(t, `[]`), Options{}), `{"result":null,"executed":false,"permission":"allow"}`)
	expect(t, Apply(s, withCandidate, respond(t, `[{"type":"modify","target":"input","operation":"merge","value":{"b":1}}]`), Options{}),
		`{"executed":true,"permission":"none","decision":"allow"}`, "result")
	expect(t, Apply(s, withCandidate, respond(t, `[{"type":"modify","target":"input","operation":"replace","value":{"x":1}},
		{"type":"modify","target":"input","operation":"replace","value":{"path":"a"}}]`), Options{}),
		`{"result":null,"executed":false,"permission":"allow"}`)
	// an allow in this response is dropped too when the input changes; ask is never invalidated
	expect(t, Apply(s, req, respond(t, `[{"type":"allow"},{"type":"modify","target":"input","operation":"merge","value":{"b":1}}]`), Options{}),
		`{"permission":"none","decision":"allow","executed":true}`)
	expect(t, Apply(s, req, respond(t, `[{"type":"ask"},{"type":"modify","target":"input","operation":"merge","value":{"b":1}}]`), Options{}),
		`{"permission":"ask","decision":"ask","executed":false}`)
	// an incoming stop persists
	stopped := toolRequest(t, "read_file", `{"path":"a"}`, toolCaps, `{"permission":"none","candidate":null,"flow":"stop"}`)
	expect(t, Apply(s, stopped, respond(t, `[]`), Options{}), `{"flow":"stop","executed":false}`)
}

func TestHostRule(t *testing.T) {
	s := schemas(t)
	good := toolRequest(t, "task", `{"task":2.0}`, toolCaps, none)
	expect(t, Apply(s, good, respond(t, `[]`), Options{}), `{"executed":true}`)
	for _, value := range []string{`"1"`, `true`, `1.5`, `0`, `-3`} {
		bad := toolRequest(t, "task", `{"task":`+value+`}`, toolCaps, none)
		rejected(t, Apply(s, bad, respond(t, `[{"type":"message","text":"m"}]`), Options{}))
		if out := Apply(s, bad, respond(t, `[]`), Options{NoHostRule: true}); out.Actual["rejected"] != nil {
			t.Errorf("without the host rule %s is rejected", value)
		}
	}
	// only the final staged value counts
	expect(t, Apply(s, good, respond(t, `[{"type":"modify","target":"input","operation":"merge","value":{"task":"x"}},
		{"type":"modify","target":"input","operation":"merge","value":{"task":7}}]`), Options{}), `{"input":{"task":7}}`)
}

func TestAtomicRejections(t *testing.T) {
	s := schemas(t)
	narrow := toolRequest(t, "read_file", `{"path":"a"}`, `{"effects":["deny","message"]}`, none)
	cases := map[string]any{
		"unadvertised effect":  respond(t, `[{"type":"message","text":"m"},{"type":"allow"}]`),
		"unknown effect":       respond(t, `[{"type":"message","text":"m"},{"type":"teleport"}]`),
		"extra field":          respond(t, `[{"type":"message","text":"m","x":1}]`),
		"deny without reason":  respond(t, `[{"type":"deny"}]`),
		"not an object":        mustDecode(t, `[]`),
		"jsonrpc 1.0":          mustDecode(t, `{"jsonrpc":"1.0","id":"r1","result":{"protocolVersion":"draft","effects":[]}}`),
		"other id":             mustDecode(t, `{"jsonrpc":"2.0","id":"r2","result":{"protocolVersion":"draft","effects":[]}}`),
		"null id":              mustDecode(t, `{"jsonrpc":"2.0","id":null,"result":{"protocolVersion":"draft","effects":[]}}`),
		"error member":         mustDecode(t, `{"jsonrpc":"2.0","id":"r1","error":{"code":1,"message":"x"}}`),
		"result not an object": mustDecode(t, `{"jsonrpc":"2.0","id":"r1","result":[]}`),
		"other version":        mustDecode(t, `{"jsonrpc":"2.0","id":"r1","result":{"protocolVersion":"v9","effects":[]}}`),
		"effects not an array": mustDecode(t, `{"jsonrpc":"2.0","id":"r1","result":{"protocolVersion":"draft","effects":{}}}`),
		"null response":        nil,
	}
	for name, response := range cases {
		out := Apply(s, narrow, response, Options{})
		if out.Actual["rejected"] != true {
			t.Errorf("%s: accepted: %s", name, EncodeString(out.Actual))
		}
	}
	// unknown envelope fields are ignored
	out := Apply(s, narrow, mustDecode(t, `{"jsonrpc":"2.0","id":"r1","x":1,"result":{"protocolVersion":"draft","effects":[],"y":2}}`), Options{})
	expect(t, out, `{"decision":"allow","executed":true}`)
	// an inject at a delivery time the request did not advertise
	full := toolRequest(t, "read_file", `{"path":"a"}`, toolCaps, none)
	rejected(t, Apply(s, full, respond(t, `[{"type":"inject","target":"context","operation":"append","deliverAt":"next_turn","value":[]}]`), Options{}))
}

const messageItems = `[{"id":"m1","role":"assistant","parts":[{"id":"p1","kind":"text","mediaType":"text/plain","selection":"body","text":"hi"}]}]`

func turnFinish(t *testing.T, remaining int, state string) map[string]any {
	return checkedRequest(t, `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft",
	 "event":{"id":"r1","source":"urn:test","type":"turn.finish.before","time":"2026-04-02T10:15:00Z","session":{"id":"s"},
	  "turn":{"id":"t"},"outcome":"completed","continuationCount":0,"items":`+messageItems+`},
	 "capabilities":{"effects":["modify","flow","message"],"modify":{"response":{"replace":true,"merge":true}},
	  "flow":{"operations":["stop","continue"],"remainingContinuations":`+string(rune('0'+remaining))+`,"continuationCount":0,"maxContinuations":3}},
	 "state":`+state+`}}`)
}

func TestContinuations(t *testing.T) {
	s := schemas(t)
	req := turnFinish(t, 2, none)
	expect(t, Apply(s, req, respond(t, `[]`), Options{}),
		`{"decision":"allow","executed":false,"continuationInstructions":[],"continuationRemaining":2}`, "flow", "permission")
	// several continues accumulate their instructions, consume one allowance
	expect(t, Apply(s, req, respond(t, `[{"type":"flow","operation":"continue","instruction":"a"},{"type":"flow","operation":"continue"},{"type":"flow","operation":"continue","instruction":"b"}]`), Options{}),
		`{"flow":"continue","continuationInstructions":["a","b"],"continuationRemaining":1}`)
	// stop wins regardless of order
	expect(t, Apply(s, req, respond(t, `[{"type":"flow","operation":"stop","reason":"r"},{"type":"flow","operation":"continue","instruction":"a"}]`), Options{}),
		`{"flow":"stop","continuationInstructions":["a"],"continuationRemaining":2}`)
	// no allowance left rejects, even beside a stop
	rejected(t, Apply(s, turnFinish(t, 0, none), respond(t, `[{"type":"flow","operation":"stop","reason":"r"},{"type":"flow","operation":"continue"}]`), Options{}))
	// an incoming continue is the flow and shares the one allowance
	incoming := turnFinish(t, 2, `{"permission":"none","candidate":null,"flow":"continue"}`)
	expect(t, Apply(s, incoming, respond(t, `[]`), Options{}), `{"flow":"continue","continuationRemaining":1}`)
	expect(t, Apply(s, incoming, respond(t, `[{"type":"flow","operation":"continue","instruction":"x"}]`), Options{}),
		`{"flow":"continue","continuationInstructions":["x"],"continuationRemaining":1}`)
	expect(t, Apply(s, incoming, respond(t, `[{"type":"flow","operation":"stop","reason":"r"}]`), Options{}), `{"flow":"stop","continuationRemaining":2}`)
	// a list merge appends in order, keeping duplicates
	out := Apply(s, req, respond(t, `[{"type":"modify","target":"response","operation":"merge","value":`+messageItems+`}]`), Options{})
	if list, _ := Path(out.Actual, "effective", "response").([]any); len(list) != 2 {
		t.Fatalf("merge did not append: %s", EncodeString(out.Actual))
	}
}

func TestWithheldContent(t *testing.T) {
	s := schemas(t)
	withheld := `[{"id":"m1","role":"tool","parts":[{"id":"p1","kind":"text","mediaType":"text/plain","selection":"omit"}]}]`
	req := checkedRequest(t, `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft",
	 "event":{"id":"r1","source":"urn:test","type":"tool.after","time":"2026-04-02T10:15:00Z","session":{"id":"s"},"call":{"id":"c"},
	  "tool":{"name":"read_file","kind":"file_read","origin":"native","input":{}},"path":"native","outcome":"ok",
	  "execution":{"status":"executed"},"durationMs":1,"items":`+withheld+`},
	 "capabilities":{"effects":["modify","message"],"modify":{"output":{"replace":true,"merge":true}}},"state":`+none+`}}`)
	rejected(t, Apply(s, req, respond(t, `[{"type":"modify","target":"output","operation":"replace","value":`+messageItems+`}]`), Options{}))
	expect(t, Apply(s, req, respond(t, `[{"type":"modify","target":"output","operation":"merge","value":`+messageItems+`}]`), Options{}),
		`{"decision":"allow","executed":false}`, "permission")
	// modify of a target the event lacks
	rejected(t, Apply(s, req, respond(t, `[{"type":"modify","target":"input","operation":"replace","value":{}}]`), Options{}))
}

func TestContentSlots(t *testing.T) {
	s := schemas(t)
	workspace := checkedRequest(t, `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft",
	 "event":{"id":"r1","source":"urn:test","type":"workspace.change.before","time":"2026-04-02T10:15:00Z","session":{"id":"s"},
	  "workspace":{"kind":"switch","change":{"cwd":"/a"},"prior":{"cwd":"/b"}}},
	 "capabilities":{"effects":["deny","modify","message"],"modify":{"workspace":{"replace":true,"merge":true}}},"state":`+none+`}}`)
	expect(t, Apply(s, workspace, respond(t, `[{"type":"modify","target":"workspace","operation":"merge","value":{"workspaceRoots":["/r"]}}]`), Options{}),
		`{"effective":{"workspace":{"cwd":"/a","workspaceRoots":["/r"]}},"executed":true,"permission":"none"}`)
	rejected(t, Apply(s, workspace, respond(t, `[{"type":"modify","target":"workspace","operation":"replace","value":{"cwd":""}}]`), Options{}))

	outbound := checkedRequest(t, `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft",
	 "event":{"id":"r1","source":"urn:test","type":"user.message.outbound","time":"2026-04-02T10:15:00Z","session":{"id":"s"},
	  "message":{"channel":"chat","messages":`+messageItems+`}},
	 "capabilities":{"effects":["deny","modify","message"],"modify":{"content":{"replace":true,"merge":true}}},"state":`+none+`}}`)
	userRole := strings.Replace(messageItems, `"assistant"`, `"user"`, 1)
	rejected(t, Apply(s, outbound, respond(t, `[{"type":"modify","target":"content","operation":"replace","value":`+userRole+`}]`), Options{}))
	expect(t, Apply(s, outbound, respond(t, `[{"type":"deny","reason":"hold"}]`), Options{}), `{"decision":"deny","executed":false}`)

	elicitation := func(action string) map[string]any {
		return checkedRequest(t, `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft",
		 "event":{"id":"r1","source":"urn:test","type":"user.elicitation.result","time":"2026-04-02T10:15:00Z","session":{"id":"s"},
		  "parentEventId":"p","elicitation":{"server":"cal","mode":"form","action":"`+action+`",
		  "result":{"id":"r","kind":"text","mediaType":"text/plain","selection":"body","text":"{\"action\":\"`+action+`\",\"content\":{\"slot\":\"9\"}}"}}},
		 "capabilities":{"effects":["modify","message"],"modify":{"content":{"replace":true,"merge":true}}},"state":`+none+`}}`)
	}
	expect(t, Apply(s, elicitation("accept"), respond(t, `[{"type":"modify","target":"content","operation":"merge","value":{"n":3}}]`), Options{}),
		`{"effective":{"content":{"slot":"9","n":3}},"executed":false,"decision":"allow"}`)
	rejected(t, Apply(s, elicitation("accept"), respond(t, `[{"type":"modify","target":"content","operation":"merge","value":{"n":{"deep":1}}}]`), Options{}))
	rejected(t, Apply(s, elicitation("decline"), respond(t, `[{"type":"modify","target":"content","operation":"merge","value":{"n":3}}]`), Options{}))
}

// The spec's content schema asks an attachment media type only to be a
// non-empty string that is no text or JSON type, parameters included: no
// type/subtype form. A returned model result carries each one here.
func TestAttachmentMediaTypes(t *testing.T) {
	s := schemas(t)
	req := checkedRequest(t, `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft",
	 "event":{"id":"r1","source":"urn:test","type":"model.request.before","time":"2026-04-02T10:15:00Z","session":{"id":"s"},
	  "turn":{"id":"t"},"model":{"id":"m","provider":"p"},"attempt":{"id":"a","number":1},"params":{},"items":`+messageItems+`},
	 "capabilities":{"effects":["message","return"]},"state":`+none+`}}`)
	answer := func(mediaType string) string {
		return `[{"id":"a1","role":"assistant","parts":[{"id":"x","kind":"attachment","mediaType":` + EncodeString(mediaType) +
			`,"selection":"body","body":{"ref":"ref-1"}}]}]`
	}
	for _, good := range []string{"png", "image/png; q=1", "IMAGE/PNG"} {
		expect(t, Apply(s, req, respond(t, `[{"type":"return","value":`+answer(good)+`}]`), Options{}),
			`{"decision":"allow","executed":false,"result":`+answer(good)+`}`)
	}
	for _, bad := range []string{"", "Text/HTML", "application/JSON", "application/json; charset=utf-8", "application/ld+json;x=1", "image/x+json"} {
		rejected(t, Apply(s, req, respond(t, `[{"type":"message","text":"staged"},{"type":"return","value":`+answer(bad)+`}]`), Options{}))
	}
}

func TestUnsupportedEvent(t *testing.T) {
	req := mustDecode(t, `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"type":"turn.start"}}}`).(map[string]any)
	if out := Apply(schemas(t), req, nil, Options{}); out.Unsupported == "" {
		t.Fatal("turn.start is not a core boundary")
	}
}

func TestSchemaPatternsCompileWithRE2(t *testing.T) {
	s := schemas(t)
	for _, name := range s.Names() {
		if _, err := s.Compile(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if bad := PatternProblems(mustDecode(t, `{"properties":{"a":{"pattern":"(?<=x)y"}}}`)); len(bad) != 1 {
		t.Errorf("a lookbehind should be reported: %v", bad)
	}
}

func TestDiscoveryIsCanonical(t *testing.T) {
	s := schemas(t)
	msg := map[string]any{"jsonrpc": "2.0", "id": "d", "result": DiscoveryResult()}
	if problem := s.Check(CapabilitiesResponse, msg); problem != "" {
		t.Fatal(problem)
	}
}
