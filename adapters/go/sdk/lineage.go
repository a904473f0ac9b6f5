package sdk

import "fmt"

// Source-local lineage (docs/CATALOGUE.md, "Lineage"): what a receiver
// admits among events that already passed their schema. No I/O.
//
// A Lineage keeps, for its life, the accepted events by identity (source,
// id). An edge is an event's parentEventId and names an event of the same
// source only. Judge applies, in order:
//
//  1. identity: a known (source, id) must keep its type, its parentEventId
//     (both absent or equal) and, for task events, task.id, for workspace
//     events workspace.kind; then it is a redelivery (accepted, nothing
//     changes, no further check);
//  2. cycles: the event is its own parent, or the chain of known parents
//     from its parent reaches its id (through events that named it as their
//     parent before it arrived, too);
//  3. proposal and actual: an actual change whose known parent is a proposal
//     is of the same kind and keeps its identity (task: task.id and
//     task.operation; workspace: workspace.kind); a proposal arriving after
//     its actual-change children (a late parent) is checked against each;
//  4. no-op actual changes;
//  5. an unknown parent is accepted (checked when it arrives, by 3).
//
// A rejection changes nothing; an accepted event (not a redelivery) becomes
// known. Values compare with Equal (typed, no coercion).

// Event types lineage reads.
const (
	TaskBefore      = "task.change.before"
	TaskAfter       = "task.change.after"
	WorkspaceBefore = "workspace.change.before"
	WorkspaceAfter  = "workspace.change.after"
	FileChanged     = "file.changed"
)

// The lineage rule that rejected an event (diagnostics and tests).
const (
	LineageIdentity = "identity"
	LineageCycle    = "cycle"
	LineageProposal = "proposal"
	LineageNoOp     = "no-op"
)

// proposals and actuals map a change event type to its kind.
var (
	proposals = map[string]string{TaskBefore: "task", WorkspaceBefore: "workspace"}
	actuals   = map[string]string{TaskAfter: "task", WorkspaceAfter: "workspace"}
)

// LineageVerdict is the receiver's lineage verdict on one event.
type LineageVerdict struct {
	Accepted   bool
	Redelivery bool   // accepted as a known identity again
	Rule       string // the failing rule when rejected
	Reason     string
}

func lineageReject(rule, format string, args ...any) LineageVerdict {
	return LineageVerdict{Rule: rule, Reason: fmt.Sprintf(format, args...)}
}

type identity struct{ source, id string }

// Lineage is the accepted events of one receiver.
type Lineage struct {
	known    map[identity]map[string]any
	children map[identity][]string // (source, parent id) -> ids of known events naming it, in order
}

// NewLineage makes an empty lineage state.
func NewLineage() *Lineage {
	return &Lineage{known: map[identity]map[string]any{}, children: map[identity][]string{}}
}

// Len is the number of known events.
func (l *Lineage) Len() int { return len(l.known) }

// lineageKey is one part of an identity as a map key (any JSON value, typed).
func lineageKey(v any) string { return EncodeString(v) }

// fieldAt is the value at keys and whether it is present.
func fieldAt(v any, keys ...string) (any, bool) {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// sameAt: both absent, or both present and Equal.
func sameAt(event, other map[string]any, keys ...string) bool {
	a, hasA := fieldAt(event, keys...)
	b, hasB := fieldAt(other, keys...)
	if !hasA || !hasB {
		return hasA == hasB
	}
	return Equal(a, b)
}

func typeOf(event map[string]any) string { s, _ := event["type"].(string); return s }

// parentOf is the event's parentEventId as a key, and whether it has one.
func parentOf(event map[string]any) (string, bool) {
	p, ok := event["parentEventId"]
	if !ok {
		return "", false
	}
	return lineageKey(p), true
}

func identityOf(event map[string]any) identity {
	return identity{lineageKey(event["source"]), lineageKey(event["id"])}
}

// Judge is the verdict on event (schema-valid), changing nothing.
func (l *Lineage) Judge(event map[string]any) LineageVerdict {
	id := identityOf(event)
	if known, ok := l.known[id]; ok {
		return redelivery(known, event)
	}
	if why := l.cycle(id, event); why != "" {
		return lineageReject(LineageCycle, "%s", why)
	}
	if why := l.proposal(id, event); why != "" {
		return lineageReject(LineageProposal, "%s", why)
	}
	if why := NoOpChange(event); why != "" {
		return lineageReject(LineageNoOp, "%s", why)
	}
	return LineageVerdict{Accepted: true}
}

// Admit judges event; accepted and not a redelivery, it becomes known.
func (l *Lineage) Admit(event map[string]any) LineageVerdict {
	v := l.Judge(event)
	if v.Accepted && !v.Redelivery {
		id := identityOf(event)
		l.known[id] = Clone(event).(map[string]any)
		if parent, ok := parentOf(event); ok {
			edge := identity{id.source, parent}
			l.children[edge] = append(l.children[edge], id.id)
		}
	}
	return v
}

// redelivery is rule 1 for a known identity.
func redelivery(known, event map[string]any) LineageVerdict {
	if !sameAt(known, event, "type") {
		return lineageReject(LineageIdentity, "a known (source, id) with another type")
	}
	if !sameAt(known, event, "parentEventId") {
		return lineageReject(LineageIdentity, "a known (source, id) with another parentEventId")
	}
	switch typeOf(event) {
	case TaskBefore, TaskAfter:
		if !sameAt(known, event, "task", "id") {
			return lineageReject(LineageIdentity, "a known (source, id) with another task.id")
		}
	case WorkspaceBefore, WorkspaceAfter:
		if !sameAt(known, event, "workspace", "kind") {
			return lineageReject(LineageIdentity, "a known (source, id) with another workspace.kind")
		}
	}
	return LineageVerdict{Accepted: true, Redelivery: true}
}

// cycle is rule 2: why the chain of known parents from event's reaches it.
func (l *Lineage) cycle(id identity, event map[string]any) string {
	parent, ok := parentOf(event)
	seen := map[string]bool{}
	for ok {
		if parent == id.id {
			if len(seen) == 0 {
				return "the event names itself as its parent"
			}
			return "the chain of known parents reaches the event itself"
		}
		if seen[parent] {
			return "" // a loop among known events that does not reach this one
		}
		seen[parent] = true
		known, isKnown := l.known[identity{id.source, parent}]
		if !isKnown {
			return ""
		}
		parent, ok = parentOf(known)
	}
	return ""
}

// ProposalMismatch is why actual does not carry out proposal (rule 3), ""
// when it does or when the two are not a proposal and an actual change.
func ProposalMismatch(proposal, actual map[string]any) string {
	proposed, isProposal := proposals[typeOf(proposal)]
	done, isActual := actuals[typeOf(actual)]
	if !isProposal || !isActual {
		return ""
	}
	if proposed != done {
		return fmt.Sprintf("a %s under a %s is the wrong kind", typeOf(actual), typeOf(proposal))
	}
	if done == "task" {
		for _, name := range []string{"id", "operation"} {
			if !sameAt(proposal, actual, "task", name) {
				return "the actual change does not keep the proposal's task." + name
			}
		}
		return ""
	}
	if !sameAt(proposal, actual, "workspace", "kind") {
		return "the actual change does not keep the proposal's workspace.kind"
	}
	return ""
}

// proposal is rule 3, both ways: against event's known parent, and, for a
// proposal, against each known child that named it before it arrived.
func (l *Lineage) proposal(id identity, event map[string]any) string {
	if parent, ok := parentOf(event); ok {
		if known, isKnown := l.known[identity{id.source, parent}]; isKnown {
			if why := ProposalMismatch(known, event); why != "" {
				return why
			}
		}
	}
	if _, isProposal := proposals[typeOf(event)]; isProposal {
		for _, child := range l.children[id] {
			if why := ProposalMismatch(event, l.known[identity{id.source, child}]); why != "" {
				return "a known child " + child + ": " + why
			}
		}
	}
	return ""
}

// allKept: change is an object whose every key is in prior (an object)
// with an Equal value (true for an empty change).
func allKept(change, prior any, priorPresent bool) bool {
	c, ok1 := change.(map[string]any)
	p, ok2 := prior.(map[string]any)
	if !ok1 || !ok2 || !priorPresent {
		return false
	}
	for k, v := range c {
		w, has := p[k]
		if !has || !Equal(v, w) {
			return false
		}
	}
	return true
}

// NoOpChange is why event is a no-op actual change (rule 4), else "".
func NoOpChange(event map[string]any) string {
	switch typeOf(event) {
	case TaskAfter:
		if op, _ := fieldAt(event, "task", "operation"); op != "update" {
			return ""
		}
		change, _ := fieldAt(event, "task", "change")
		if c, ok := change.(map[string]any); ok && len(c) == 0 {
			return "an update task.change.after with an empty change"
		}
		prior, has := fieldAt(event, "task", "prior")
		if allKept(change, prior, has) {
			return "an update task.change.after whose change equals its prior"
		}
	case WorkspaceAfter:
		change, _ := fieldAt(event, "workspace", "change")
		prior, has := fieldAt(event, "workspace", "prior")
		if allKept(change, prior, has) {
			return "a workspace.change.after whose prior holds its change"
		}
	case FileChanged:
		changes, _ := event["changes"].([]any)
		for i, raw := range changes {
			c, ok := raw.(map[string]any)
			if !ok || c["operation"] != "update" {
				continue
			}
			before, hasBefore := c["before"]
			after, hasAfter := c["after"]
			if hasBefore && hasAfter && Equal(before, after) {
				return fmt.Sprintf("file.changed changes[%d] is an update whose before equals its after", i)
			}
		}
	}
	return ""
}
