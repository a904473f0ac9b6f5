package sdk

// Registration documents (docs/CATALOGUE.md, "Registration"): whether a
// host-side SDK could enforce one, against a discovered manifest, the
// caller's requirements ([{event, mode, effects?, modify?}]) and its context
// ({interactive, environment}). The rules run in RegistrationRules order,
// each over the whole document before the next; the first that fails
// rejects the document and is named. No I/O.

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// RegistrationSchema is the canonical registration document schema.
const RegistrationSchema = "registration.schema.json"

// The registration rules, in the order they are checked.
const (
	RuleSchema           = "schema"
	RuleDuplicateBackend = "duplicate-backend"
	RuleTransport        = "transport"
	RuleAuthentication   = "authentication"
	RuleCredential       = "credential"
	RuleEvent            = "event"
	RuleScope            = "scope"
	RuleTimeout          = "timeout"
	RuleRequirement      = "requirement"
	RuleInteractive      = "interactive"
)

// RegistrationRules lists the rules in order.
var RegistrationRules = []string{RuleSchema, RuleDuplicateBackend, RuleTransport, RuleAuthentication,
	RuleCredential, RuleEvent, RuleScope, RuleTimeout, RuleRequirement, RuleInteractive}

// RegistrationVerdict is accepted, or the first rule that fails and why.
type RegistrationVerdict struct {
	Accepted     bool
	Rule, Reason string
}

// Entry is the report's form: {"accepted": true} or {"accepted": false, "rule"}.
func (v RegistrationVerdict) Entry() map[string]any {
	if v.Accepted {
		return map[string]any{"accepted": true}
	}
	return map[string]any{"accepted": false, "rule": v.Rule}
}

func arrayOf(v any) []any {
	list, _ := v.([]any)
	return list
}

// member: list holds a value Equal to v.
func member(list []any, v any) bool {
	for _, item := range list {
		if Equal(item, v) {
			return true
		}
	}
	return false
}

// IsWildcard: "*" or "family.*".
func IsWildcard(pattern any) bool {
	s, ok := pattern.(string)
	return ok && (s == "*" || strings.HasSuffix(s, ".*"))
}

// PatternMatches: a subscription's event pattern names eventType exactly,
// by "*" (every type), or by "family.*" (the types starting with "family.").
func PatternMatches(pattern, eventType any) bool {
	p, ok1 := pattern.(string)
	e, ok2 := eventType.(string)
	switch {
	case !ok1 || !ok2:
		return false
	case p == "*":
		return true
	case strings.HasSuffix(p, ".*"):
		return strings.HasPrefix(e, strings.TrimSuffix(p, "*"))
	}
	return p == e
}

// ratOf is a JSON number's exact value.
func ratOf(v any) (*big.Rat, bool) {
	text, ok := numberText(v)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(text)
}

// offered is what the rules read of a discovery manifest.
type offered struct {
	events                     []map[string]any // entries with a string event
	transports, authentication []any
	scopes                     []any
	// disableable: managedPolicy.disableable is true, the harness lets its user
	// disable hooks, so it cannot enforce a subscription that must not be disabled.
	disableable            bool
	minTimeout, maxTimeout *big.Rat // nil: not stated, not checked
}

func readManifest(manifest any) offered {
	m := Object(manifest)
	o := offered{transports: arrayOf(m["transports"]), authentication: arrayOf(m["authentication"]),
		scopes:      arrayOf(Path(m, "managedPolicy", "scopes")),
		disableable: Path(m, "managedPolicy", "disableable") == true}
	limits := Object(m["limits"])
	o.minTimeout, _ = ratOf(limits["minTimeoutMs"])
	o.maxTimeout, _ = ratOf(limits["maxTimeoutMs"])
	for _, raw := range arrayOf(m["events"]) {
		if entry, ok := raw.(map[string]any); ok {
			if _, isString := entry["event"].(string); isString {
				o.events = append(o.events, entry)
			}
		}
	}
	return o
}

// entry is the manifest's entry for eventType listing mode among its modes.
func (o offered) entry(eventType, mode any) map[string]any {
	for _, e := range o.events {
		if Equal(e["event"], eventType) && member(arrayOf(e["modes"]), mode) {
			return e
		}
	}
	return nil
}

// offers: some listed event with mode is named by pattern (a wildcard must
// match at least one; anything else is an exact type).
func (o offered) offers(pattern, mode any) bool {
	if !IsWildcard(pattern) {
		return o.entry(pattern, mode) != nil
	}
	for _, e := range o.events {
		if PatternMatches(pattern, e["event"]) && member(arrayOf(e["modes"]), mode) {
			return true
		}
	}
	return false
}

type registration struct {
	backends      []map[string]any
	subscriptions []map[string]any
}

func readRegistration(document map[string]any) registration {
	var r registration
	for _, raw := range arrayOf(document["hooks"]) {
		backend, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		r.backends = append(r.backends, backend)
		for _, s := range arrayOf(backend["subscriptions"]) {
			if sub, ok := s.(map[string]any); ok {
				r.subscriptions = append(r.subscriptions, sub)
			}
		}
	}
	return r
}

func (r registration) duplicateBackend() string {
	seen := map[string]bool{}
	for _, b := range r.backends {
		k := EncodeString(b["id"])
		if seen[k] {
			return "two backends share the id " + k
		}
		seen[k] = true
	}
	return ""
}

func (r registration) transport(o offered) string {
	for _, b := range r.backends {
		if kind := Path(b, "transport", "type"); !member(o.transports, kind) {
			return fmt.Sprintf("backend %s: transport %s is not offered", EncodeString(b["id"]), EncodeString(kind))
		}
	}
	return ""
}

func (r registration) authentication(o offered) string {
	for _, b := range r.backends {
		auth, has := b["authentication"]
		if !has {
			continue
		}
		if kind := Path(auth, "type"); !member(o.authentication, kind) {
			return fmt.Sprintf("backend %s: authentication %s is not offered", EncodeString(b["id"]), EncodeString(kind))
		}
	}
	return ""
}

func (r registration) credential(context map[string]any) string {
	environment := Object(context["environment"])
	for _, b := range r.backends {
		auth := Object(b["authentication"])
		if auth["type"] != "bearer" {
			continue
		}
		if _, has := auth["tokenRef"]; has {
			return fmt.Sprintf("backend %s: tokenRef has no reference store here", EncodeString(b["id"]))
		}
		name, _ := auth["tokenEnv"].(string)
		value, _ := environment[name].(string)
		if _, isString := auth["tokenEnv"].(string); !isString || value == "" {
			return fmt.Sprintf("backend %s: tokenEnv %s has no non-empty value in the environment",
				EncodeString(b["id"]), EncodeString(auth["tokenEnv"]))
		}
	}
	return ""
}

func (r registration) event(o offered) string {
	for _, s := range r.subscriptions {
		for _, pattern := range arrayOf(s["events"]) {
			if !o.offers(pattern, s["mode"]) {
				return fmt.Sprintf("%s is not offered with mode %s", EncodeString(pattern), EncodeString(s["mode"]))
			}
		}
	}
	return ""
}

func (r registration) scope(o offered) string {
	for _, s := range r.subscriptions {
		if scope, has := s["scope"]; has && !member(o.scopes, scope) {
			return fmt.Sprintf("scope %s is not offered", EncodeString(scope))
		}
		if s["disableable"] == false && o.disableable {
			return "disableable false cannot be enforced: managedPolicy.disableable is true"
		}
	}
	return ""
}

func (r registration) timeout(o offered) string {
	for _, s := range r.subscriptions {
		if s["mode"] != "intercept" {
			continue
		}
		value, ok := ratOf(s["timeoutMs"])
		if !ok {
			continue
		}
		if o.minTimeout != nil && value.Cmp(o.minTimeout) < 0 {
			return fmt.Sprintf("timeoutMs %s is below minTimeoutMs %s", value.RatString(), o.minTimeout.RatString())
		}
		if o.maxTimeout != nil && value.Cmp(o.maxTimeout) > 0 {
			return fmt.Sprintf("timeoutMs %s is above maxTimeoutMs %s", value.RatString(), o.maxTimeout.RatString())
		}
	}
	return ""
}

// covered: a subscription with mode names eventType (exactly or by wildcard).
func (r registration) covered(eventType, mode any) bool {
	for _, s := range r.subscriptions {
		if !Equal(s["mode"], mode) {
			continue
		}
		for _, pattern := range arrayOf(s["events"]) {
			if PatternMatches(pattern, eventType) {
				return true
			}
		}
	}
	return false
}

// requiredEffects is a requirement's effects (none when absent) and whether they
// are an array.
func requiredEffects(requirement map[string]any) ([]any, bool) {
	raw, has := requirement["effects"]
	if !has {
		return nil, true
	}
	list, ok := raw.([]any)
	return list, ok
}

func (r registration) requirement(o offered, requirements []any) string {
	for i, raw := range requirements {
		where := fmt.Sprintf("requirements[%d]", i)
		req, ok := raw.(map[string]any)
		if !ok {
			return where + " is not an object"
		}
		event, mode := req["event"], req["mode"]
		effects, ok := requiredEffects(req)
		if !ok {
			return where + ": effects is not an array"
		}
		if !r.covered(event, mode) {
			return fmt.Sprintf("%s: no subscription with mode %s matches %s", where, EncodeString(mode), EncodeString(event))
		}
		entry := o.entry(event, mode)
		if entry == nil {
			return fmt.Sprintf("%s: the manifest does not list %s with mode %s", where, EncodeString(event), EncodeString(mode))
		}
		switch mode {
		case "observe":
			if len(effects) > 0 {
				return where + ": an observer requires effects"
			}
			continue
		case "intercept":
		default:
			return fmt.Sprintf("%s: mode %s", where, EncodeString(mode))
		}
		capabilities := Object(entry["capabilities"])
		for _, effect := range effects {
			if !member(arrayOf(capabilities["effects"]), effect) {
				return fmt.Sprintf("%s: effect %s is not offered at %s", where, EncodeString(effect), EncodeString(event))
			}
		}
		wanted, has := req["modify"]
		if !has {
			continue
		}
		targets, ok := wanted.(map[string]any)
		if !ok {
			return where + ": modify is not an object"
		}
		offeredTargets := Object(capabilities["modify"])
		for _, target := range sortedKeysOf(targets) {
			offeredOps, isOffered := offeredTargets[target]
			if !isOffered {
				return fmt.Sprintf("%s: modify target %s is not offered at %s", where, EncodeString(target), EncodeString(event))
			}
			ops, ok := targets[target].(map[string]any)
			if !ok {
				return fmt.Sprintf("%s: modify.%s is not an object", where, target)
			}
			for _, op := range sortedKeysOf(ops) {
				if ops[op] == true && Object(offeredOps)[op] != true {
					return fmt.Sprintf("%s: modify.%s.%s is not offered at %s", where, target, op, EncodeString(event))
				}
			}
		}
	}
	return ""
}

func interactive(requirements []any, context map[string]any) string {
	for i, raw := range requirements {
		effects, _ := requiredEffects(Object(raw))
		if member(effects, "ask") && context["interactive"] != true {
			return fmt.Sprintf("requirements[%d] needs ask, and the context is not interactive", i)
		}
	}
	return ""
}

func sortedKeysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// EvaluateRegistration is the verdict on document against manifest,
// requirements and context; schemaProblem is the caller's check of the
// document against the canonical registration schema ("" when valid).
func EvaluateRegistration(document, manifest any, requirements []any, context map[string]any,
	schemaProblem func(any) string) RegistrationVerdict {
	doc, isObject := document.(map[string]any)
	if problem := schemaProblem(document); problem != "" || !isObject {
		if problem == "" {
			problem = "the document is not an object"
		}
		return RegistrationVerdict{Rule: RuleSchema, Reason: problem}
	}
	r, o := readRegistration(doc), readManifest(manifest)
	checks := []struct {
		rule  string
		check func() string
	}{
		{RuleDuplicateBackend, r.duplicateBackend},
		{RuleTransport, func() string { return r.transport(o) }},
		{RuleAuthentication, func() string { return r.authentication(o) }},
		{RuleCredential, func() string { return r.credential(context) }},
		{RuleEvent, func() string { return r.event(o) }},
		{RuleScope, func() string { return r.scope(o) }},
		{RuleTimeout, func() string { return r.timeout(o) }},
		{RuleRequirement, func() string { return r.requirement(o, requirements) }},
		{RuleInteractive, func() string { return interactive(requirements, context) }},
	}
	for _, c := range checks {
		if why := c.check(); why != "" {
			return RegistrationVerdict{Rule: c.rule, Reason: why}
		}
	}
	return RegistrationVerdict{Accepted: true}
}
