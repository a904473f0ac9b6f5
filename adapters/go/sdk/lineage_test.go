package sdk

import (
	"testing"
)

// lineageEvent is an event of source urn:a written in the test, with extra
// fields as JSON members (`"task": {...}`, `"parentEventId": "p"`).
func lineageEvent(t *testing.T, id, kind, extra string) map[string]any {
	t.Helper()
	if extra != "" {
		extra = ", " + extra
	}
	return text(t, `{"id": "`+id+`", "source": "urn:a", "time": "2026-01-01T00:00:00Z", "type": "`+kind+`"`+extra+`}`).(map[string]any)
}

func withSource(e map[string]any, source string) map[string]any {
	out := Clone(e).(map[string]any)
	out["source"] = source
	return out
}

type lineageCase struct {
	what  string
	event map[string]any
	rule  string // "" accepted
	redel bool
}

func runLineage(t *testing.T, l *Lineage, cases []lineageCase) {
	t.Helper()
	for _, c := range cases {
		before := l.Len()
		v := l.Admit(c.event)
		switch {
		case c.rule == "" && !v.Accepted:
			t.Errorf("%s: rejected (%s: %s)", c.what, v.Rule, v.Reason)
		case c.rule != "" && (v.Accepted || v.Rule != c.rule):
			t.Errorf("%s: want %s, got %+v", c.what, c.rule, v)
		case c.redel != v.Redelivery:
			t.Errorf("%s: redelivery %v, want %v", c.what, v.Redelivery, c.redel)
		}
		if grew := l.Len() - before; (c.rule == "" && !c.redel) != (grew == 1) {
			t.Errorf("%s: known events grew by %d", c.what, grew)
		}
	}
}

func TestLineageIdentity(t *testing.T) {
	task := `"task": {"id": "t1", "operation": "create", "change": {"status": "open"}}`
	first := lineageEvent(t, "e1", TaskBefore, task)
	again := Clone(first).(map[string]any)
	again["time"] = "2026-02-02T00:00:00Z" // only the fields rule 1 names must match
	again["task"].(map[string]any)["change"] = map[string]any{"status": "closed"}
	runLineage(t, NewLineage(), []lineageCase{
		{"first", first, "", false},
		{"a redelivery", again, "", true},
		{"another type", lineageEvent(t, "e1", TaskAfter, task), LineageIdentity, false},
		{"another parent", lineageEvent(t, "e1", TaskBefore, task+`, "parentEventId": "x"`), LineageIdentity, false},
		{"another task.id", lineageEvent(t, "e1", TaskBefore, `"task": {"id": "t2", "operation": "create", "change": {}}`), LineageIdentity, false},
		{"the same id of another source", withSource(lineageEvent(t, "e1", "turn.end", ""), "urn:b"), "", false},
		{"workspace", lineageEvent(t, "w1", WorkspaceBefore, `"workspace": {"kind": "cwd", "change": {"cwd": "/a"}}`), "", false},
		{"workspace again, another kind", lineageEvent(t, "w1", WorkspaceBefore, `"workspace": {"kind": "roots", "change": {"cwd": "/a"}}`), LineageIdentity, false},
		{"workspace again, another change", lineageEvent(t, "w1", WorkspaceBefore, `"workspace": {"kind": "cwd", "change": {"cwd": "/b"}}`), "", true},
	})
}

func TestLineageCycles(t *testing.T) {
	runLineage(t, NewLineage(), []lineageCase{
		{"its own parent", lineageEvent(t, "a", "turn.end", `"parentEventId": "a"`), LineageCycle, false},
		{"a child of an unknown parent", lineageEvent(t, "b", "turn.end", `"parentEventId": "c"`), "", false},
		{"that parent, naming its child", lineageEvent(t, "c", "turn.end", `"parentEventId": "b"`), LineageCycle, false},
		{"a longer chain", lineageEvent(t, "d", "turn.end", `"parentEventId": "b"`), "", false},
		{"the chain's root closing it", lineageEvent(t, "c", "turn.end", `"parentEventId": "d"`), LineageCycle, false},
		{"the root from another source", withSource(lineageEvent(t, "c", "turn.end", `"parentEventId": "d"`), "urn:b"), "", false},
		{"the root, no parent", lineageEvent(t, "c", "turn.end", ""), "", false},
	})
}

func TestLineageProposals(t *testing.T) {
	before := func(id, taskID, op string) map[string]any {
		return lineageEvent(t, id, TaskBefore, `"task": {"id": "`+taskID+`", "operation": "`+op+`", "change": {"s": 1}}`)
	}
	after := func(id, parent, taskID, op string) map[string]any {
		return lineageEvent(t, id, TaskAfter, `"parentEventId": "`+parent+`", "task": {"id": "`+taskID+`", "operation": "`+op+`", "change": {"s": 2}}`)
	}
	wsAfter := func(id, parent, kind string) map[string]any {
		return lineageEvent(t, id, WorkspaceAfter, `"parentEventId": "`+parent+`", "workspace": {"kind": "`+kind+`", "change": {"cwd": "/x"}}`)
	}
	runLineage(t, NewLineage(), []lineageCase{
		{"a proposal", before("p1", "t1", "create"), "", false},
		{"its actual change (another value)", after("a1", "p1", "t1", "create"), "", false},
		{"another task", after("a2", "p1", "t2", "create"), LineageProposal, false},
		{"another operation", after("a3", "p1", "t1", "remove"), LineageProposal, false},
		{"the wrong kind", wsAfter("a4", "p1", "cwd"), LineageProposal, false},
		{"a task event under a tool event is free", lineageEvent(t, "tb", "tool.before", ""), "", false},
		{"...", after("a5", "tb", "t9", "update"), "", false},
		{"a workspace proposal", lineageEvent(t, "wp", WorkspaceBefore, `"workspace": {"kind": "cwd", "change": {"cwd": "/y"}}`), "", false},
		{"another workspace kind", wsAfter("w2", "wp", "roots"), LineageProposal, false},
		{"the same kind", wsAfter("w3", "wp", "cwd"), "", false},
		{"a task actual under a workspace proposal", after("w4", "wp", "t1", "create"), LineageProposal, false},
		{"a file change under an actual change is free",
			lineageEvent(t, "f1", FileChanged, `"parentEventId": "w3", "changes": [{"path": "a", "operation": "create", "agentCaused": true}]`), "", false},
		// late parents: children first
		{"a child of a late proposal", after("c1", "late", "t5", "create"), "", false},
		{"a non-change child of it", lineageEvent(t, "c2", "turn.end", `"parentEventId": "late"`), "", false},
		{"the late proposal of another task", before("late", "t6", "create"), LineageProposal, false},
		{"the late proposal of its task", before("late", "t5", "create"), "", false},
		{"a late workspace proposal under task children", lineageEvent(t, "late2", WorkspaceBefore, `"workspace": {"kind": "cwd", "change": {"cwd": "/z"}}`), "", false},
		{"...a task child named it first", after("c3", "late3", "t7", "create"), "", false},
		{"a late workspace proposal of a task child", lineageEvent(t, "late3", WorkspaceBefore, `"workspace": {"kind": "cwd", "change": {"cwd": "/z"}}`), LineageProposal, false},
	})
}

func TestLineageNoOps(t *testing.T) {
	task := func(id, op, change, prior string) map[string]any {
		body := `"id": "t", "operation": "` + op + `", "change": ` + change
		if prior != "" {
			body += `, "prior": ` + prior
		}
		return lineageEvent(t, id, TaskAfter, `"task": {`+body+`}`)
	}
	ws := func(id, change, prior string) map[string]any {
		body := `"kind": "cwd", "change": ` + change
		if prior != "" {
			body += `, "prior": ` + prior
		}
		return lineageEvent(t, id, WorkspaceAfter, `"workspace": {`+body+`}`)
	}
	file := func(id, changes string) map[string]any {
		return lineageEvent(t, id, FileChanged, `"changes": `+changes)
	}
	part := func(text string) string {
		return `{"id": "p", "kind": "text", "mediaType": "text/plain", "selection": "inline", "text": "` + text + `"}`
	}
	runLineage(t, NewLineage(), []lineageCase{
		{"an update without change keys", task("n1", "update", `{}`, ""), LineageNoOp, false},
		{"a create without change keys", task("n2", "create", `{}`, ""), "", false},
		{"an update equal to its prior", task("n3", "update", `{"a": 1}`, `{"a": 1.0, "b": 2}`), LineageNoOp, false},
		{"an update with a coerced value", task("n4", "update", `{"a": 1}`, `{"a": "1"}`), "", false},
		{"true is not 1", task("n5", "update", `{"a": true}`, `{"a": 1}`), "", false},
		{"an update with a new key", task("n6", "update", `{"a": 1, "c": 3}`, `{"a": 1}`), "", false},
		{"an update without prior", task("n7", "update", `{"a": 1}`, ""), "", false},
		{"nested objects, key order ignored", task("n8", "update", `{"a": {"x": 1, "y": [1, 2]}}`, `{"a": {"y": [1, 2], "x": 1}}`), LineageNoOp, false},
		{"a workspace change its prior holds", ws("n9", `{"cwd": "/a"}`, `{"cwd": "/a", "workspaceRoots": ["/"]}`), LineageNoOp, false},
		{"a workspace change without prior", ws("n10", `{"cwd": "/a"}`, ""), "", false},
		{"a workspace change of another value", ws("n11", `{"cwd": "/a"}`, `{"cwd": "/b"}`), "", false},
		{"a file update with equal parts", file("n12", `[{"path": "a", "operation": "update", "agentCaused": true, "before": `+part("x")+`, "after": `+part("x")+`}]`), LineageNoOp, false},
		{"one no-op change among others", file("n13", `[{"path": "b", "operation": "create", "agentCaused": true},
			{"path": "a", "operation": "update", "agentCaused": true, "before": `+part("x")+`, "after": `+part("x")+`}]`), LineageNoOp, false},
		{"a file update with other parts", file("n14", `[{"path": "a", "operation": "update", "agentCaused": true, "before": `+part("x")+`, "after": `+part("y")+`}]`), "", false},
		{"a file update with only after", file("n15", `[{"path": "a", "operation": "update", "agentCaused": true, "after": `+part("x")+`}]`), "", false},
		{"a file create with equal parts", file("n16", `[{"path": "a", "operation": "create", "agentCaused": true, "before": `+part("x")+`, "after": `+part("x")+`}]`), "", false},
	})
}

func TestLineageRejectionKeepsNoState(t *testing.T) {
	l := NewLineage()
	cyclic := lineageEvent(t, "r", TaskBefore, `"parentEventId": "r", "task": {"id": "t", "operation": "create", "change": {}}`)
	if v := l.Admit(cyclic); v.Accepted || v.Rule != LineageCycle {
		t.Fatalf("cyclic: %+v", v)
	}
	child := lineageEvent(t, "c", TaskAfter, `"parentEventId": "r", "task": {"id": "other", "operation": "create", "change": {"s": 1}}`)
	if v := l.Admit(child); !v.Accepted {
		t.Fatalf("a child of a rejected event: %+v", v)
	}
	if l.Len() != 1 {
		t.Fatalf("known: %d", l.Len())
	}
}
