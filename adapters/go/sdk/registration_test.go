package sdk

import (
	"testing"
)

// a valid document: one http backend with bearer authentication, an
// interceptor of tool.before and an observer of turn.*
const baseRegistration = `{"protocolVersion": "draft", "hooks": [{"id": "com.example.one",
	"transport": {"type": "http", "url": "https://policy.example.invalid/hooks"},
	"authentication": {"type": "bearer", "tokenEnv": "HOOK_TOKEN"},
	"subscriptions": [
		{"events": ["tool.before"], "mode": "intercept", "timeoutMs": 5000, "failurePolicy": "fail-closed",
		 "content": {"default": "metadata"}},
		{"events": ["turn.*"], "mode": "observe", "content": {"default": "metadata"}}]}]}`

const interactiveContext = `{"interactive": true, "environment": {"HOOK_TOKEN": "secret"}}`

type registrationCase struct {
	what         string
	edit         func(doc map[string]any)
	requirements string
	context      string
	rule         string // "" accepted
}

func backend(doc map[string]any, i int) map[string]any {
	return doc["hooks"].([]any)[i].(map[string]any)
}

func subscription(doc map[string]any, i int) map[string]any {
	return backend(doc, 0)["subscriptions"].([]any)[i].(map[string]any)
}

func runRegistration(t *testing.T, manifest any, cases []registrationCase) {
	t.Helper()
	s := elicitationSchemas(t)
	check := func(doc any) string { return s.Check(RegistrationSchema, doc) }
	for _, c := range cases {
		doc := text(t, baseRegistration).(map[string]any)
		if c.edit != nil {
			c.edit(doc)
		}
		reqs, ctx := c.requirements, c.context
		if reqs == "" {
			reqs = `[]`
		}
		if ctx == "" {
			ctx = interactiveContext
		}
		v := EvaluateRegistration(doc, manifest, text(t, reqs).([]any), text(t, ctx).(map[string]any), check)
		switch {
		case c.rule == "" && !v.Accepted:
			t.Errorf("%s: rejected by %s: %s", c.what, v.Rule, v.Reason)
		case c.rule != "" && (v.Accepted || v.Rule != c.rule):
			t.Errorf("%s: want %s, got %+v", c.what, c.rule, v)
		}
	}
}

func TestRegistrationRules(t *testing.T) {
	m := CatalogueManifest()
	runRegistration(t, m, []registrationCase{
		{what: "the base document"},
		{what: "not valid", edit: func(d map[string]any) { delete(subscription(d, 0), "failurePolicy") }, rule: RuleSchema},
		{what: "an observer with a timeout", edit: func(d map[string]any) { subscription(d, 1)["timeoutMs"] = 100 }, rule: RuleSchema},
		{what: "mtls", edit: func(d map[string]any) { backend(d, 0)["authentication"] = map[string]any{"type": "mtls"} }, rule: RuleSchema},
		{what: "a managed scope that can be disabled", edit: func(d map[string]any) { subscription(d, 0)["scope"] = "managed" }, rule: RuleSchema},
		{what: "an observe-only event intercepted", edit: func(d map[string]any) {
			subscription(d, 0)["events"] = []any{"turn.end"}
		}, rule: RuleSchema},
		{what: "an event M only observes intercepted", edit: func(d map[string]any) {
			subscription(d, 0)["events"] = []any{"session.start"}
		}, rule: RuleEvent},
		{what: "two backends with one id", edit: func(d map[string]any) {
			second := Clone(backend(d, 0)).(map[string]any)
			second["transport"] = map[string]any{"type": "stdio", "command": "hook", "lifecycle": "persistent"}
			delete(second, "authentication")
			d["hooks"] = append(d["hooks"].([]any), second)
		}, rule: RuleDuplicateBackend},
		{what: "a stdio backend", edit: func(d map[string]any) {
			b := backend(d, 0)
			b["transport"] = map[string]any{"type": "stdio", "command": "hook", "lifecycle": "persistent"}
			delete(b, "authentication")
		}, rule: RuleTransport},
		{what: "oauth", edit: func(d map[string]any) {
			backend(d, 0)["authentication"] = map[string]any{"type": "oauth", "resource": "https://r.example",
				"issuer": "https://i.example", "clientId": "c", "flow": "client_credentials"}
		}, rule: RuleAuthentication},
		{what: "no authentication at all", edit: func(d map[string]any) { delete(backend(d, 0), "authentication") }},
		{what: "a token variable not set", context: `{"interactive": true, "environment": {}}`, rule: RuleCredential},
		{what: "an empty token", context: `{"interactive": true, "environment": {"HOOK_TOKEN": ""}}`, rule: RuleCredential},
		{what: "a token that is not a string", context: `{"interactive": true, "environment": {"HOOK_TOKEN": 7}}`, rule: RuleCredential},
		{what: "another case of the name", context: `{"interactive": true, "environment": {"hook_token": "x"}}`, rule: RuleCredential},
		{what: "a token reference", edit: func(d map[string]any) {
			backend(d, 0)["authentication"] = map[string]any{"type": "bearer", "tokenRef": "vault:x"}
		}, rule: RuleCredential},
		{what: "a wildcard matching nothing", edit: func(d map[string]any) { subscription(d, 1)["events"] = []any{"nothing.*"} }, rule: RuleEvent},
		{what: "every event observed", edit: func(d map[string]any) { subscription(d, 1)["events"] = []any{"*"} }},
		{what: "hook.failure observed", edit: func(d map[string]any) { subscription(d, 1)["events"] = []any{"turn.end", "hook.failure"} }, rule: RuleEvent},
		{what: "an intercept wildcard", edit: func(d map[string]any) { subscription(d, 0)["events"] = []any{"tool.*"} }},
		{what: "an intercept wildcard of observers only", edit: func(d map[string]any) { subscription(d, 0)["events"] = []any{"model.*"} }, rule: RuleEvent},
		{what: "a project scope", edit: func(d map[string]any) { subscription(d, 0)["scope"] = "project" }},
		{what: "a managed scope", edit: func(d map[string]any) {
			subscription(d, 0)["scope"], subscription(d, 0)["disableable"] = "managed", false
		}, rule: RuleScope},
		// M.managedPolicy.disableable is true: it cannot enforce a subscription that
		// must not be disabled, whatever its scope.
		{what: "a user scope that must not be disabled", edit: func(d map[string]any) {
			subscription(d, 1)["scope"], subscription(d, 1)["disableable"] = "user", false
		}, rule: RuleScope},
		{what: "no scope, must not be disabled", edit: func(d map[string]any) { subscription(d, 0)["disableable"] = false }, rule: RuleScope},
		{what: "a user scope that may be disabled", edit: func(d map[string]any) {
			subscription(d, 0)["scope"], subscription(d, 0)["disableable"] = "user", true
		}},
		{what: "the minimum timeout", edit: func(d map[string]any) { subscription(d, 0)["timeoutMs"] = 100 }},
		{what: "below the minimum", edit: func(d map[string]any) { subscription(d, 0)["timeoutMs"] = 99 }, rule: RuleTimeout},
		{what: "the maximum timeout", edit: func(d map[string]any) { subscription(d, 0)["timeoutMs"] = 30000 }},
		{what: "above the maximum", edit: func(d map[string]any) { subscription(d, 0)["timeoutMs"] = 30001 }, rule: RuleTimeout},
		{what: "a covered intercept requirement",
			requirements: `[{"event": "tool.before", "mode": "intercept", "effects": ["deny", "ask"], "modify": {"input": {"replace": true, "merge": true}}}]`},
		{what: "modify without modify in effects", requirements: `[{"event": "tool.before", "mode": "intercept", "modify": {"input": {"merge": true}}}]`},
		{what: "an operation not set true needs nothing", requirements: `[{"event": "tool.after", "mode": "intercept", "effects": [], "modify": {"output": {"merge": false}}}]`,
			edit: func(d map[string]any) { subscription(d, 0)["events"] = []any{"tool.*"} }},
		{what: "merge at tool.after", requirements: `[{"event": "tool.after", "mode": "intercept", "modify": {"output": {"merge": true}}}]`,
			edit: func(d map[string]any) { subscription(d, 0)["events"] = []any{"tool.*"} }, rule: RuleRequirement},
		{what: "a modify target not offered", requirements: `[{"event": "tool.before", "mode": "intercept", "modify": {"output": {"replace": true}}}]`, rule: RuleRequirement},
		{what: "an effect not offered", requirements: `[{"event": "tool.before", "mode": "intercept", "effects": ["inject"]}]`, rule: RuleRequirement},
		{what: "no subscription for it", requirements: `[{"event": "tool.after", "mode": "intercept", "effects": []}]`, rule: RuleRequirement},
		{what: "an observer requirement by wildcard", requirements: `[{"event": "turn.end", "mode": "observe", "effects": []}]`},
		{what: "an observer requirement with effects", requirements: `[{"event": "turn.end", "mode": "observe", "effects": ["deny"]}]`, rule: RuleRequirement},
		{what: "an intercept requirement of an observer", requirements: `[{"event": "turn.end", "mode": "intercept"}]`, rule: RuleRequirement},
		{what: "a wildcard requirement", requirements: `[{"event": "turn.*", "mode": "observe"}]`, rule: RuleRequirement},
		{what: "ask, not interactive", requirements: `[{"event": "tool.before", "mode": "intercept", "effects": ["ask"]}]`,
			context: `{"interactive": false, "environment": {"HOOK_TOKEN": "secret"}}`, rule: RuleInteractive},
		{what: "ask, interactive not true", requirements: `[{"event": "tool.before", "mode": "intercept", "effects": ["ask"]}]`,
			context: `{"interactive": 1, "environment": {"HOOK_TOKEN": "secret"}}`, rule: RuleInteractive},
		{what: "the first failing rule wins", requirements: `[{"event": "tool.before", "mode": "intercept", "effects": ["ask", "inject"]}]`,
			context: `{"interactive": false, "environment": {}}`, rule: RuleCredential},
	})
}

func TestRegistrationAgainstOtherManifests(t *testing.T) {
	m := CatalogueManifest()
	delete(m, "limits")
	runRegistration(t, m, []registrationCase{
		{what: "no limits stated", edit: func(d map[string]any) { subscription(d, 0)["timeoutMs"] = 1 }},
	})
	enforcing := CatalogueManifest()
	enforcing["managedPolicy"] = map[string]any{"scopes": []any{"user", "project"}, "disableable": false}
	runRegistration(t, enforcing, []registrationCase{
		{what: "must not be disabled, and M enforces it", edit: func(d map[string]any) {
			subscription(d, 0)["scope"], subscription(d, 0)["disableable"] = "project", false
		}},
	})
	runRegistration(t, nil, []registrationCase{
		{what: "no manifest offers nothing", rule: RuleTransport},
	})
	v := EvaluateRegistration(nil, CatalogueManifest(), nil, map[string]any{}, func(any) string { return "" })
	if v.Accepted || v.Rule != RuleSchema {
		t.Errorf("a document that is not an object: %+v", v)
	}
	if e := (RegistrationVerdict{Rule: RuleScope}).Entry(); !Equal(e, map[string]any{"accepted": false, "rule": "scope"}) {
		t.Errorf("entry: %s", EncodeString(e))
	}
}

func TestCatalogueManifest(t *testing.T) {
	s := elicitationSchemas(t)
	types := Strings(Path(s.documents["common.schema.json"], "$defs", "eventType", "enum"))
	if len(types) != len(CatalogueEventTypes)+1 || types[len(types)-1] != "hook.failure" {
		t.Fatalf("the schema's event types: %v", types)
	}
	for i, event := range CatalogueEventTypes {
		if types[i] != event {
			t.Errorf("event %d: %s, the schema has %s", i, event, types[i])
		}
	}
	response := map[string]any{"jsonrpc": "2.0", "id": "discovery", "result": CatalogueDiscoveryResult()}
	if problem := s.Check(CapabilitiesResponse, Clone(response)); problem != "" {
		t.Errorf("the discovery response: %s", problem)
	}
	if !Equal(CatalogueManifest(), CatalogueManifest()) {
		t.Errorf("the manifest is not a constant")
	}
	intercepted := 0
	for _, e := range CatalogueManifest()["events"].([]any) {
		if len(Path(e, "modes").([]any)) == 2 {
			intercepted++
		}
	}
	if intercepted != 3 {
		t.Errorf("%d events are interceptable", intercepted)
	}
}
