"""Lineage rows of the catalogue set: docs/CATALOGUE.md "Lineage (source-local)".

Each row is tagged with the rule (1-5) it exercises: `identity`, `cycle`,
`proposal`, `no-op`, `unknown-parent`, and says in a comment why each verdict
is what it is. The receiver keeps lineage state for the whole file, so every
row uses event ids of its own (`<scenario id>:<name>`) and task ids of its
own; no row names an event of another row. Accepted messages go by `notify`,
rejected ones by `rawNotify` (CATALOGUE.md: the receiver must reject those).
Every message here is schema-valid: a lineage verdict is never a schema one.
"""

from __future__ import annotations

from typing import Any

from catalogue_wire import (
    JSON,
    LATER,
    LINEAGE,
    OK,
    SCHEMA,
    A,
    B,
    Row,
    event,
    note,
    notify,
    raw,
    row,
    text_body,
    text_meta,
)

CALL_TOOL: JSON = {"name": "task_create", "input": {"title": "Rotate keys"}, "origin": "native"}


def _optional(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def task(tid: str, op: str, change: JSON, prior: JSON = None) -> JSON:
    return _optional(id=tid, operation=op, change=change, prior=prior)


def task_before(
    eid: str, tid: str, op: str, change: JSON, *, parent: str | None = None, source: str = A
) -> JSON:
    fields = _optional(parent=parent)
    return note(event("task.change.before", eid, source, task=task(tid, op, change), **fields))


def task_after(
    eid: str,
    tid: str,
    op: str,
    change: JSON,
    *,
    prior: JSON = None,
    parent: str | None = None,
    source: str = A,
    time: str | None = None,
) -> JSON:
    fields = _optional(parent=parent)
    if time is not None:
        return note(
            event(
                "task.change.after", eid, source, time, task=task(tid, op, change, prior), **fields
            )
        )
    return note(
        event("task.change.after", eid, source, task=task(tid, op, change, prior), **fields)
    )


def workspace(kind: str, change: JSON, prior: JSON = None, reason: str | None = None) -> JSON:
    return _optional(kind=kind, change=change, prior=prior, reason=reason)


def ws_before(
    eid: str,
    kind: str,
    change: JSON,
    *,
    prior: JSON = None,
    parent: str | None = None,
    source: str = A,
) -> JSON:
    fields = _optional(parent=parent)
    return note(
        event(
            "workspace.change.before",
            eid,
            source,
            workspace=workspace(kind, change, prior),
            **fields,
        )
    )


def ws_after(
    eid: str,
    kind: str,
    change: JSON,
    *,
    prior: JSON = None,
    parent: str | None = None,
    source: str = A,
    time: str | None = None,
    reason: str | None = None,
) -> JSON:
    fields = _optional(parent=parent)
    body = workspace(kind, change, prior, reason)
    if time is not None:
        return note(event("workspace.change.after", eid, source, time, workspace=body, **fields))
    return note(event("workspace.change.after", eid, source, workspace=body, **fields))


def files(eid: str, changes: list[JSON], *, parent: str | None = None, source: str = A) -> JSON:
    fields = _optional(parent=parent)
    return note(event("file.changed", eid, source, changes=changes, **fields))


def change(path: str, op: str, *, before: JSON = None, after: JSON = None) -> JSON:
    return _optional(path=path, operation=op, agentCaused=True, before=before, after=after)


def tool_before(eid: str, call: str, *, parent: str | None = None, source: str = A) -> JSON:
    fields = _optional(parent=parent)
    return note(
        event(
            "tool.before", eid, source, call={"id": call}, tool=CALL_TOOL, path="native", **fields
        )
    )


def tool_after(eid: str, call: str, *, parent: str | None = None) -> JSON:
    fields = _optional(parent=parent)
    return note(
        event(
            "tool.after",
            eid,
            A,
            outcome="ok",
            execution={"status": "executed"},
            call={"id": call},
            tool=CALL_TOOL,
            path="native",
            items=[],
            **fields,
        )
    )


def turn_end(eid: str, *, parent: str | None = None, source: str = A) -> JSON:
    fields = _optional(parent=parent)
    return note(
        event(
            "turn.end",
            eid,
            source,
            turn={"id": f"{eid}:turn"},
            outcome="completed",
            continuationCount=0,
            items=[],
            **fields,
        )
    )


# Rows whose verdict rests on a reading of ours beyond what the spec says a receiver
# checks (task-workspace-lineage.md, "Lineage and actual changes": cycles including late
# parents, source scope, a task's identity and operation under its known proposal,
# explicit no-op task and workspace updates). Each is written into the row as
# `reading`; a contract v1 server is not held to it (docs/CATALOGUE.md).
WORKSPACE_KIND_IDENTITY = "a workspace event's kind is part of its identity (rule 1)"
WORKSPACE_KIND_KEPT = "an actual workspace change keeps its proposal's kind (rule 3)"
SAME_KIND = "an actual change is of its proposal's kind, task or workspace (rule 3)"
EMPTY_UPDATE = "a task update whose change is empty is a no-op (rule 4)"
FILE_NOOP = "a file update whose before and after are equal is a no-op (rule 4)"
READINGS = {
    "cat-lin-identity-other-workspace-kind": WORKSPACE_KIND_IDENTITY,
    "cat-lin-workspace-actual-other-kind": WORKSPACE_KIND_KEPT,
    "cat-lin-late-workspace-proposal": WORKSPACE_KIND_KEPT,
    "cat-lin-task-actual-under-workspace-proposal": SAME_KIND,
    "cat-lin-workspace-actual-under-task-proposal": SAME_KIND,
    "cat-lin-late-proposal-wrong-kind": SAME_KIND,
    "cat-lin-noop-task-empty-change": EMPTY_UPDATE,
    "cat-lin-noop-file-equal": FILE_NOOP,
    "cat-lin-noop-file-one-of-two": FILE_NOOP,
    "cat-lin-noop-file-key-order": FILE_NOOP,
}


def L(tag: str, sid: str, steps: list[Any], *, sent: list[JSON], deliveries: list[JSON]) -> Row:
    made = row(tag, sid, "lineage", steps, sent=sent, deliveries=deliveries)
    if sid in READINGS:
        made.scenario["reading"] = READINGS[sid]
    return made


# ---------------------------------------------------------------- rule 1: identity


def identity() -> list[Row]:
    out = []

    # A redelivery (the same message again) is accepted and changes nothing.
    sid = "cat-lin-redelivery"
    m = task_before(f"{sid}:proposal", "cat-task-l101", "create", {"title": "Rotate keys"})
    out.append(L("identity", sid, [notify(m), notify(m)], sent=[m, m], deliveries=[OK, OK]))

    # Only type, parentEventId, task.id / workspace.kind are compared: another time,
    # other change values, another reason are still a redelivery.
    sid = "cat-lin-redelivery-other-fields"
    w1 = ws_after(f"{sid}:workspace", "cwd", {"cwd": "/srv/l102/a"})
    w2 = ws_after(
        f"{sid}:workspace", "cwd", {"cwd": "/srv/l102/b"}, time=LATER, reason="resent by a retry"
    )
    t1 = task_after(f"{sid}:task", "cat-task-l102", "create", {"title": "first"})
    t2 = task_after(f"{sid}:task", "cat-task-l102", "create", {"title": "second"}, time=LATER)
    f1 = files(f"{sid}:files", [change("l102/a.txt", "create")])
    f2 = files(f"{sid}:files", [change("l102/b.txt", "remove")])
    out.append(
        L(
            "identity",
            sid,
            [notify(w1), notify(w2), notify(t1), notify(t2), notify(f1), notify(f2)],
            sent=[w1, w2, t1, t2, f1, f2],
            deliveries=[OK, OK, OK, OK, OK, OK],
        )
    )

    # The same id with another type: lineage; the original stays known (redelivered: ok).
    sid = "cat-lin-identity-other-type"
    m = task_before(f"{sid}:reused", "cat-task-l103", "create", {"title": "Draft"})
    other = task_after(f"{sid}:reused", "cat-task-l103", "create", {"title": "Draft"})
    out.append(
        L(
            "identity",
            sid,
            [notify(m), raw(other), notify(m)],
            sent=[m, other, m],
            deliveries=[OK, LINEAGE, OK],
        )
    )

    # The same id with another parentEventId (absent then present, present then absent).
    sid = "cat-lin-identity-other-parent"
    f1 = files(f"{sid}:orphan", [change("l104/a.txt", "create")])
    f1p = files(f"{sid}:orphan", [change("l104/a.txt", "create")], parent=f"{sid}:elsewhere")
    f2 = files(f"{sid}:child", [change("l104/b.txt", "create")], parent=f"{sid}:unsent-parent")
    f2n = files(f"{sid}:child", [change("l104/b.txt", "create")])
    f2o = files(f"{sid}:child", [change("l104/b.txt", "create")], parent=f"{sid}:other-parent")
    out.append(
        L(
            "identity",
            sid,
            [notify(f1), raw(f1p), notify(f2), raw(f2n), raw(f2o)],
            sent=[f1, f1p, f2, f2n, f2o],
            deliveries=[OK, LINEAGE, OK, LINEAGE, LINEAGE],
        )
    )

    # The same id with another task.id.
    sid = "cat-lin-identity-other-task"
    m = task_after(f"{sid}:actual", "cat-task-l105", "create", {"title": "One"})
    other = task_after(f"{sid}:actual", "cat-task-l105-b", "create", {"title": "One"})
    out.append(
        L("identity", sid, [notify(m), raw(other)], sent=[m, other], deliveries=[OK, LINEAGE])
    )

    # The same id with another workspace.kind.
    sid = "cat-lin-identity-other-workspace-kind"
    m = ws_before(f"{sid}:proposal", "cwd", {"cwd": "/srv/l106"})
    other = ws_before(f"{sid}:proposal", "roots", {"workspaceRoots": ["/srv/l106"]})
    out.append(
        L("identity", sid, [notify(m), raw(other)], sent=[m, other], deliveries=[OK, LINEAGE])
    )

    # Identity is (source, id): the same id from another source is another event.
    sid = "cat-lin-identity-other-source"
    m = task_before(f"{sid}:shared", "cat-task-l107", "create", {"title": "Alpha"}, source=A)
    other = files(f"{sid}:shared", [change("l107/b.txt", "create")], source=B)
    out.append(L("identity", sid, [notify(m), notify(other)], sent=[m, other], deliveries=[OK, OK]))

    # The same task.id, type and parent with another operation is a redelivery too
    # (rule 1 compares task.id, not task.operation).
    sid = "cat-lin-redelivery-other-operation"
    m = task_before(f"{sid}:proposal", "cat-task-l108", "create", {"title": "Beta"})
    again = task_before(f"{sid}:proposal", "cat-task-l108", "update", {"title": "Beta 2"})
    out.append(L("identity", sid, [notify(m), notify(again)], sent=[m, again], deliveries=[OK, OK]))
    return out


# ---------------------------------------------------------------- rule 2: cycles


def cycles() -> list[Row]:
    out = []

    # Its own parent: lineage. The rejection leaves the id unknown, so the same id
    # without a parent is then a new event: accepted.
    sid = "cat-lin-cycle-self"
    loop = task_before(
        f"{sid}:loop", "cat-task-l201", "create", {"title": "Loop"}, parent=f"{sid}:loop"
    )
    fresh = task_before(f"{sid}:loop", "cat-task-l201", "create", {"title": "Loop"})
    out.append(
        L("cycle", sid, [raw(loop), notify(fresh)], sent=[loop, fresh], deliveries=[LINEAGE, OK])
    )

    sid = "cat-lin-cycle-self-file"
    loop = files(f"{sid}:loop", [change("l202/a.txt", "create")], parent=f"{sid}:loop")
    out.append(L("cycle", sid, [raw(loop)], sent=[loop], deliveries=[LINEAGE]))

    # A late parent whose own parent is the child that named it: lineage. Neither is a
    # task or workspace event, so no proposal check is involved.
    sid = "cat-lin-cycle-late-parent"
    child = files(f"{sid}:child", [change("l203/a.txt", "create")], parent=f"{sid}:parent")
    parent = tool_before(f"{sid}:parent", "cat-call-l203", parent=f"{sid}:child")
    out.append(
        L(
            "cycle",
            sid,
            [notify(child), raw(parent)],
            sent=[child, parent],
            deliveries=[OK, LINEAGE],
        )
    )

    # A three-event loop closed by its last event: a (parent c, unknown) ok; b (parent a)
    # ok; c (parent b): b -> a -> c: lineage.
    sid = "cat-lin-cycle-three"
    a = turn_end(f"{sid}:a", parent=f"{sid}:c")
    b = files(f"{sid}:b", [change("l204/b.txt", "create")], parent=f"{sid}:a")
    c = tool_before(f"{sid}:c", "cat-call-l204", parent=f"{sid}:b")
    out.append(
        L(
            "cycle",
            sid,
            [notify(a), notify(b), raw(c)],
            sent=[a, b, c],
            deliveries=[OK, OK, LINEAGE],
        )
    )

    # Chains without a loop are accepted, late parents included.
    sid = "cat-lin-cycle-none"
    a = tool_before(f"{sid}:a", "cat-call-l205")
    b = files(f"{sid}:b", [change("l205/b.txt", "create")], parent=f"{sid}:a")
    c = turn_end(f"{sid}:c", parent=f"{sid}:b")
    k = files(f"{sid}:k", [change("l205/k.txt", "create")], parent=f"{sid}:p")
    late = tool_before(f"{sid}:p", "cat-call-l205-p", parent=f"{sid}:q")
    out.append(
        L(
            "cycle",
            sid,
            [notify(a), notify(b), notify(c), notify(k), notify(late)],
            sent=[a, b, c, k, late],
            deliveries=[OK, OK, OK, OK, OK],
        )
    )

    # Parents are source-local: (A, x) -> y and (B, y) -> x is no loop. Then (A, y) -> x
    # closes one in source A: lineage.
    sid = "cat-lin-cycle-source-local"
    ax = files(f"{sid}:x", [change("l206/x.txt", "create")], parent=f"{sid}:y", source=A)
    by = tool_before(f"{sid}:y", "cat-call-l206-b", parent=f"{sid}:x", source=B)
    ay = tool_before(f"{sid}:y", "cat-call-l206-a", parent=f"{sid}:x", source=A)
    out.append(
        L(
            "cycle",
            sid,
            [notify(ax), notify(by), raw(ay)],
            sent=[ax, by, ay],
            deliveries=[OK, OK, LINEAGE],
        )
    )
    return out


# ---------------------------------------------------------------- rule 3: proposal and actual


def proposals() -> list[Row]:
    out = []

    # The actual keeps task.id and task.operation; its change values may differ.
    sid = "cat-lin-task-actual-keeps-identity"
    before = task_before(f"{sid}:proposal", "cat-task-l301", "update", {"status": "review"})
    after = task_after(
        f"{sid}:actual",
        "cat-task-l301",
        "update",
        {"status": "merged"},
        prior={"status": "open"},
        parent=f"{sid}:proposal",
    )
    out.append(
        L(
            "proposal",
            sid,
            [notify(before), notify(after)],
            sent=[before, after],
            deliveries=[OK, OK],
        )
    )

    sid = "cat-lin-task-actual-other-task"
    before = task_before(f"{sid}:proposal", "cat-task-l302", "update", {"status": "review"})
    after = task_after(
        f"{sid}:actual",
        "cat-task-l302-other",
        "update",
        {"status": "review"},
        parent=f"{sid}:proposal",
    )
    out.append(
        L(
            "proposal",
            sid,
            [notify(before), raw(after)],
            sent=[before, after],
            deliveries=[OK, LINEAGE],
        )
    )

    sid = "cat-lin-task-actual-other-operation"
    before = task_before(f"{sid}:proposal", "cat-task-l303", "create", {"title": "Gamma"})
    after = task_after(
        f"{sid}:actual", "cat-task-l303", "update", {"title": "Gamma"}, parent=f"{sid}:proposal"
    )
    out.append(
        L(
            "proposal",
            sid,
            [notify(before), raw(after)],
            sent=[before, after],
            deliveries=[OK, LINEAGE],
        )
    )

    sid = "cat-lin-workspace-actual-keeps-kind"
    before = ws_before(f"{sid}:proposal", "roots", {"workspaceRoots": ["/srv/l304", "/srv/lib"]})
    after = ws_after(
        f"{sid}:actual", "roots", {"workspaceRoots": ["/srv/l304"]}, parent=f"{sid}:proposal"
    )
    out.append(
        L(
            "proposal",
            sid,
            [notify(before), notify(after)],
            sent=[before, after],
            deliveries=[OK, OK],
        )
    )

    sid = "cat-lin-workspace-actual-other-kind"
    before = ws_before(f"{sid}:proposal", "cwd", {"cwd": "/srv/l305"})
    after = ws_after(f"{sid}:actual", "switch", {"cwd": "/srv/l305"}, parent=f"{sid}:proposal")
    out.append(
        L(
            "proposal",
            sid,
            [notify(before), raw(after)],
            sent=[before, after],
            deliveries=[OK, LINEAGE],
        )
    )

    # Wrong kind: a task actual under a workspace proposal, and the other way round.
    sid = "cat-lin-task-actual-under-workspace-proposal"
    before = ws_before(f"{sid}:proposal", "cwd", {"cwd": "/srv/l306"})
    after = task_after(
        f"{sid}:actual", "cat-task-l306", "create", {"title": "Delta"}, parent=f"{sid}:proposal"
    )
    out.append(
        L(
            "proposal",
            sid,
            [notify(before), raw(after)],
            sent=[before, after],
            deliveries=[OK, LINEAGE],
        )
    )

    sid = "cat-lin-workspace-actual-under-task-proposal"
    before = task_before(f"{sid}:proposal", "cat-task-l307", "create", {"title": "Epsilon"})
    after = ws_after(f"{sid}:actual", "cwd", {"cwd": "/srv/l307"}, parent=f"{sid}:proposal")
    out.append(
        L(
            "proposal",
            sid,
            [notify(before), raw(after)],
            sent=[before, after],
            deliveries=[OK, LINEAGE],
        )
    )

    # A late proposal is checked against the children that named it.
    sid = "cat-lin-late-proposal-matches"
    child = task_after(
        f"{sid}:actual", "cat-task-l308", "update", {"status": "done"}, parent=f"{sid}:proposal"
    )
    late = task_before(f"{sid}:proposal", "cat-task-l308", "update", {"status": "review"})
    out.append(
        L("proposal", sid, [notify(child), notify(late)], sent=[child, late], deliveries=[OK, OK])
    )

    # The late proposal names another task: lineage; it stays unknown, so the right
    # proposal under the same id is then accepted.
    sid = "cat-lin-late-proposal-other-task"
    child = task_after(
        f"{sid}:actual", "cat-task-l309", "update", {"status": "done"}, parent=f"{sid}:proposal"
    )
    wrong = task_before(f"{sid}:proposal", "cat-task-l309-other", "update", {"status": "done"})
    right = task_before(f"{sid}:proposal", "cat-task-l309", "update", {"status": "done"})
    out.append(
        L(
            "proposal",
            sid,
            [notify(child), raw(wrong), notify(right)],
            sent=[child, wrong, right],
            deliveries=[OK, LINEAGE, OK],
        )
    )

    sid = "cat-lin-late-proposal-wrong-kind"
    child = ws_after(f"{sid}:actual", "cwd", {"cwd": "/srv/l310"}, parent=f"{sid}:proposal")
    late = task_before(f"{sid}:proposal", "cat-task-l310", "create", {"title": "Zeta"})
    out.append(
        L("proposal", sid, [notify(child), raw(late)], sent=[child, late], deliveries=[OK, LINEAGE])
    )

    # Every known child must pass: the second child's operation differs.
    sid = "cat-lin-late-proposal-two-children"
    first = task_after(
        f"{sid}:actual-1", "cat-task-l311", "update", {"status": "done"}, parent=f"{sid}:proposal"
    )
    second = task_after(
        f"{sid}:actual-2", "cat-task-l311", "create", {"status": "done"}, parent=f"{sid}:proposal"
    )
    late = task_before(f"{sid}:proposal", "cat-task-l311", "update", {"status": "done"})
    out.append(
        L(
            "proposal",
            sid,
            [notify(first), notify(second), raw(late)],
            sent=[first, second, late],
            deliveries=[OK, OK, LINEAGE],
        )
    )

    # A late workspace proposal of another kind: lineage; of the child's kind: ok.
    sid = "cat-lin-late-workspace-proposal"
    child = ws_after(f"{sid}:actual", "cwd", {"cwd": "/srv/l312"}, parent=f"{sid}:proposal")
    wrong = ws_before(f"{sid}:proposal", "roots", {"workspaceRoots": ["/srv/l312"]})
    right = ws_before(f"{sid}:proposal", "cwd", {"cwd": "/srv/l312/next"})
    out.append(
        L(
            "proposal",
            sid,
            [notify(child), raw(wrong), notify(right)],
            sent=[child, wrong, right],
            deliveries=[OK, LINEAGE, OK],
        )
    )

    # Other parent relations are free: a task proposal under a tool call, a task actual
    # under a task actual of another task, a task proposal under a proposal of another
    # task, a file change under a workspace actual, a workspace actual under a tool.after.
    sid = "cat-lin-free-relations"
    call = tool_before(f"{sid}:call", "cat-call-l313")
    proposal = task_before(
        f"{sid}:proposal", "cat-task-l313", "create", {"title": "Eta"}, parent=f"{sid}:call"
    )
    other_proposal = task_before(
        f"{sid}:proposal-2", "cat-task-l313-b", "remove", {}, parent=f"{sid}:proposal"
    )
    actual = task_after(f"{sid}:actual", "cat-task-l313-c", "create", {"title": "Theta"})
    actual_under_actual = task_after(
        f"{sid}:actual-2", "cat-task-l313-d", "remove", {}, parent=f"{sid}:actual"
    )
    done = tool_after(f"{sid}:done", "cat-call-l313", parent=f"{sid}:call")
    moved = ws_after(f"{sid}:moved", "cwd", {"cwd": "/srv/l313"}, parent=f"{sid}:done")
    edited = files(f"{sid}:edited", [change("l313/a.txt", "create")], parent=f"{sid}:moved")
    sent = [call, proposal, other_proposal, actual, actual_under_actual, done, moved, edited]
    out.append(
        L("proposal", sid, [notify(m) for m in sent], sent=sent, deliveries=[OK] * len(sent))
    )

    # A late proposal whose known child is not an actual change: free.
    sid = "cat-lin-late-parent-free-child"
    child = files(f"{sid}:edited", [change("l314/a.txt", "create")], parent=f"{sid}:proposal")
    late = task_before(f"{sid}:proposal", "cat-task-l314", "create", {"title": "Iota"})
    out.append(
        L("proposal", sid, [notify(child), notify(late)], sent=[child, late], deliveries=[OK, OK])
    )

    # Causal chains: tool call -> task proposal -> task actual -> file change.
    sid = "cat-lin-chain-task"
    call = tool_before(f"{sid}:call", "cat-call-l315")
    proposal = task_before(
        f"{sid}:proposal", "cat-task-l315", "create", {"title": "Kappa"}, parent=f"{sid}:call"
    )
    actual = task_after(
        f"{sid}:actual", "cat-task-l315", "create", {"title": "Kappa!"}, parent=f"{sid}:proposal"
    )
    edited = files(f"{sid}:edited", [change("l315/tasks.md", "create")], parent=f"{sid}:actual")
    sent = [call, proposal, actual, edited]
    out.append(
        L("proposal", sid, [notify(m) for m in sent], sent=sent, deliveries=[OK] * len(sent))
    )

    # Workspace proposal -> actual -> file change.
    sid = "cat-lin-chain-workspace-file"
    proposal = ws_before(f"{sid}:proposal", "switch", {"cwd": "/srv/l316"})
    actual = ws_after(
        f"{sid}:actual",
        "switch",
        {"cwd": "/srv/l316", "workspaceRoots": ["/srv/l316"]},
        prior={"cwd": "/srv/l316-old"},
        parent=f"{sid}:proposal",
    )
    edited = files(
        f"{sid}:edited",
        [
            change(
                "l316/notes.txt",
                "update",
                before=text_meta(f"{sid}:before", "notes v1"),
                after=text_meta(f"{sid}:after", "notes v2"),
            )
        ],
        parent=f"{sid}:actual",
    )
    sent = [proposal, actual, edited]
    out.append(
        L("proposal", sid, [notify(m) for m in sent], sent=sent, deliveries=[OK] * len(sent))
    )

    # A task's life: create, update, remove; each proposal under the previous actual.
    sid = "cat-lin-chain-task-life"
    tid = "cat-task-l317"
    c0 = task_before(f"{sid}:propose-create", tid, "create", {"title": "Lambda"})
    c1 = task_after(
        f"{sid}:create", tid, "create", {"title": "Lambda"}, parent=f"{sid}:propose-create"
    )
    u0 = task_before(
        f"{sid}:propose-update", tid, "update", {"status": "done"}, parent=f"{sid}:create"
    )
    u1 = task_after(
        f"{sid}:update",
        tid,
        "update",
        {"status": "done"},
        prior={"status": "open"},
        parent=f"{sid}:propose-update",
    )
    r0 = task_before(f"{sid}:propose-remove", tid, "remove", {}, parent=f"{sid}:update")
    r1 = task_after(f"{sid}:remove", tid, "remove", {}, parent=f"{sid}:propose-remove")
    sent = [c0, c1, u0, u1, r0, r1]
    out.append(
        L("proposal", sid, [notify(m) for m in sent], sent=sent, deliveries=[OK] * len(sent))
    )
    return out


# ---------------------------------------------------------------- rule 4: no-op actual changes


def noops() -> list[Row]:
    out = []

    sid = "cat-lin-noop-task-empty-change"
    m = task_after(f"{sid}:actual", "cat-task-l401", "update", {})
    out.append(L("no-op", sid, [raw(m)], sent=[m], deliveries=[LINEAGE]))

    sid = "cat-lin-noop-task-equal-prior"
    m = task_after(
        f"{sid}:actual",
        "cat-task-l402",
        "update",
        {"status": "done", "owner": "lee"},
        prior={"status": "done", "owner": "lee", "points": 3},
    )
    out.append(L("no-op", sid, [raw(m)], sent=[m], deliveries=[LINEAGE]))

    # null === null.
    sid = "cat-lin-noop-task-null"
    m = task_after(
        f"{sid}:actual", "cat-task-l403", "update", {"assignee": None}, prior={"assignee": None}
    )
    out.append(L("no-op", sid, [raw(m)], sent=[m], deliveries=[LINEAGE]))

    # The proposal matches (rule 3 passes) but the actual changes nothing (rule 4).
    sid = "cat-lin-noop-task-under-proposal"
    before = task_before(f"{sid}:proposal", "cat-task-l404", "update", {"status": "done"})
    after = task_after(
        f"{sid}:actual",
        "cat-task-l404",
        "update",
        {"status": "done"},
        prior={"status": "done"},
        parent=f"{sid}:proposal",
    )
    out.append(
        L(
            "no-op",
            sid,
            [notify(before), raw(after)],
            sent=[before, after],
            deliveries=[OK, LINEAGE],
        )
    )

    # Real changes: another value; a key prior lacks; no prior; not an update (create
    # with no key, remove equal to prior); a proposal (rule 4 is about actuals).
    sid = "cat-lin-real-task-change"
    sent = [
        task_after(
            f"{sid}:value",
            "cat-task-l405-a",
            "update",
            {"status": "done"},
            prior={"status": "open"},
        ),
        task_after(
            f"{sid}:new-key",
            "cat-task-l405-b",
            "update",
            {"status": "done", "owner": "lee"},
            prior={"status": "done"},
        ),
        task_after(f"{sid}:no-prior", "cat-task-l405-c", "update", {"status": "done"}),
        task_after(f"{sid}:create-empty", "cat-task-l405-d", "create", {}),
        task_after(
            f"{sid}:remove-equal",
            "cat-task-l405-e",
            "remove",
            {"title": "Mu"},
            prior={"title": "Mu"},
        ),
        task_before(f"{sid}:proposal-empty", "cat-task-l405-f", "update", {}),
    ]
    out.append(L("no-op", sid, [notify(m) for m in sent], sent=sent, deliveries=[OK] * len(sent)))

    # Strict equality: values of different JSON types are never equal.
    sid = "cat-lin-real-task-change-strict-types"
    sent = [
        task_after(
            f"{sid}:number-string",
            "cat-task-l406-a",
            "update",
            {"priority": 1},
            prior={"priority": "1"},
        ),
        task_after(
            f"{sid}:true-one", "cat-task-l406-b", "update", {"blocked": True}, prior={"blocked": 1}
        ),
        task_after(
            f"{sid}:zero-false", "cat-task-l406-c", "update", {"count": 0}, prior={"count": False}
        ),
        task_after(
            f"{sid}:null-empty-string",
            "cat-task-l406-d",
            "update",
            {"owner": None},
            prior={"owner": ""},
        ),
    ]
    out.append(L("no-op", sid, [notify(m) for m in sent], sent=sent, deliveries=[OK] * len(sent)))

    sid = "cat-lin-noop-workspace-equal-prior"
    m = ws_after(f"{sid}:actual", "cwd", {"cwd": "/srv/l407"}, prior={"cwd": "/srv/l407"})
    out.append(L("no-op", sid, [raw(m)], sent=[m], deliveries=[LINEAGE]))

    # prior has every key of change (and one more) with equal values.
    sid = "cat-lin-noop-workspace-subset"
    m = ws_after(
        f"{sid}:actual",
        "switch",
        {"cwd": "/srv/l408"},
        prior={"cwd": "/srv/l408", "workspaceRoots": ["/srv/l408"]},
    )
    out.append(L("no-op", sid, [raw(m)], sent=[m], deliveries=[LINEAGE]))

    # Equal arrays are strictly equal JSON values (as equal parts are at file.changed).
    sid = "cat-lin-noop-workspace-roots"
    m = ws_after(
        f"{sid}:actual",
        "roots",
        {"workspaceRoots": ["/srv/l409", "/srv/lib"]},
        prior={"workspaceRoots": ["/srv/l409", "/srv/lib"]},
    )
    out.append(L("no-op", sid, [raw(m)], sent=[m], deliveries=[LINEAGE]))

    # Real workspace changes: another value; no prior; a key prior lacks; roots in another
    # order; a proposal equal to its prior (rule 4 is about actuals).
    sid = "cat-lin-real-workspace-change"
    sent = [
        ws_after(f"{sid}:value", "cwd", {"cwd": "/srv/l410/b"}, prior={"cwd": "/srv/l410/a"}),
        ws_after(f"{sid}:no-prior", "cwd", {"cwd": "/srv/l410/c"}),
        ws_after(
            f"{sid}:new-key",
            "switch",
            {"cwd": "/srv/l410", "workspaceRoots": ["/srv/l410"]},
            prior={"cwd": "/srv/l410"},
        ),
        ws_after(
            f"{sid}:reordered",
            "roots",
            {"workspaceRoots": ["/srv/lib", "/srv/l410"]},
            prior={"workspaceRoots": ["/srv/l410", "/srv/lib"]},
        ),
        ws_before(f"{sid}:proposal-equal", "cwd", {"cwd": "/srv/l410"}, prior={"cwd": "/srv/l410"}),
    ]
    out.append(L("no-op", sid, [notify(m) for m in sent], sent=sent, deliveries=[OK] * len(sent)))

    same = text_meta("cat-lin-noop-file:part", "unchanged bytes")
    sid = "cat-lin-noop-file-equal"
    m = files(f"{sid}:edited", [change("l411/a.txt", "update", before=same, after=same)])
    out.append(L("no-op", sid, [raw(m)], sent=[m], deliveries=[LINEAGE]))

    # One no-op update among real changes is enough.
    sid = "cat-lin-noop-file-one-of-two"
    m = files(
        f"{sid}:edited",
        [
            change("l412/new.txt", "create", after=text_body("cat-lin-l412:new", "hello")),
            change("l412/same.txt", "update", before=same, after=same),
        ],
    )
    out.append(L("no-op", sid, [raw(m)], sent=[m], deliveries=[LINEAGE]))

    # Key order is not part of a JSON value: the same part written in another order.
    sid = "cat-lin-noop-file-key-order"
    reordered = {k: same[k] for k in reversed(list(same))}
    m = files(f"{sid}:edited", [change("l413/a.txt", "update", before=same, after=reordered)])
    out.append(L("no-op", sid, [raw(m)], sent=[m], deliveries=[LINEAGE]))

    # Real file changes: other content; only after; only before; create or remove with
    # before equal to after (only an update can be a no-op).
    sid = "cat-lin-real-file-change"
    v1 = text_meta("cat-lin-l414:v1", "version one")
    v2 = text_meta("cat-lin-l414:v2", "version two")
    m = files(
        f"{sid}:edited",
        [
            change("l414/a.txt", "update", before=v1, after=v2),
            change("l414/b.txt", "update", after=v2),
            change("l414/c.txt", "update", before=v1),
            change("l414/d.txt", "create", before=v1, after=v1),
            change("l414/e.txt", "remove", before=v2, after=v2),
            change("l414/f.txt", "update"),
        ],
    )
    out.append(L("no-op", sid, [notify(m)], sent=[m], deliveries=[OK]))
    return out


# ---------------------------------------------------------------- rule 5: unknown parents


def unknown_parents() -> list[Row]:
    out = []

    # Never delivered: accepted (and stays unchecked until it arrives).
    sid = "cat-lin-unknown-parent"
    t = task_after(
        f"{sid}:actual", "cat-task-l501", "create", {"title": "Nu"}, parent=f"{sid}:never-sent"
    )
    w = ws_after(
        f"{sid}:moved", "roots", {"workspaceRoots": ["/srv/l501"]}, parent=f"{sid}:never-sent-2"
    )
    out.append(L("unknown-parent", sid, [notify(t), notify(w)], sent=[t, w], deliveries=[OK, OK]))

    # Filtered: the proposal reached the receiver but was rejected by the schema, so it
    # is not known; the actual naming it (another task) has an unknown parent.
    sid = "cat-lin-filtered-parent"
    broken = note(
        event(
            "task.change.before",
            f"{sid}:proposal",
            A,
            task={"id": "cat-task-l502", "operation": "update"},
        )
    )
    child = task_after(
        f"{sid}:actual", "cat-task-l502-other", "create", {"title": "Xi"}, parent=f"{sid}:proposal"
    )
    out.append(
        L(
            "unknown-parent",
            sid,
            [raw(broken), notify(child)],
            sent=[broken, child],
            deliveries=[SCHEMA, OK],
        )
    )

    # Another source's event with that id is not the parent.
    sid = "cat-lin-other-source-parent"
    proposal = task_before(
        f"{sid}:proposal", "cat-task-l503", "update", {"status": "done"}, source=A
    )
    child = task_after(
        f"{sid}:actual",
        "cat-task-l503-other",
        "create",
        {"title": "Omicron"},
        parent=f"{sid}:proposal",
        source=B,
    )
    out.append(
        L(
            "unknown-parent",
            sid,
            [notify(proposal), notify(child)],
            sent=[proposal, child],
            deliveries=[OK, OK],
        )
    )

    # The same the other way round: a child of source B, then a mismatching proposal of
    # source A with the id it names: not its child, accepted.
    sid = "cat-lin-other-source-late-parent"
    child = task_after(
        f"{sid}:actual",
        "cat-task-l504",
        "update",
        {"status": "done"},
        parent=f"{sid}:proposal",
        source=B,
    )
    proposal = ws_before(f"{sid}:proposal", "cwd", {"cwd": "/srv/l504"}, source=A)
    out.append(
        L(
            "unknown-parent",
            sid,
            [notify(child), notify(proposal)],
            sent=[child, proposal],
            deliveries=[OK, OK],
        )
    )

    # A lineage rejection changes no state: the rejected proposal is unknown, so a child
    # naming it (another task) is accepted; the proposal then arrives right and passes.
    sid = "cat-lin-rejected-parent-unknown"
    loop = task_before(
        f"{sid}:proposal", "cat-task-l505-loop", "create", {"title": "Pi"}, parent=f"{sid}:proposal"
    )
    child = task_after(
        f"{sid}:actual", "cat-task-l505", "create", {"title": "Pi"}, parent=f"{sid}:proposal"
    )
    proposal = task_before(f"{sid}:proposal", "cat-task-l505", "create", {"title": "Pi"})
    out.append(
        L(
            "unknown-parent",
            sid,
            [raw(loop), notify(child), notify(proposal)],
            sent=[loop, child, proposal],
            deliveries=[LINEAGE, OK, OK],
        )
    )

    # A rejected child leaves no edge: its late parent is not checked against it, and no
    # loop runs through it.
    sid = "cat-lin-rejected-child-no-edge"
    noop = task_after(f"{sid}:actual", "cat-task-l506-noop", "update", {}, parent=f"{sid}:proposal")
    proposal = task_before(
        f"{sid}:proposal", "cat-task-l506", "update", {"status": "done"}, parent=f"{sid}:actual"
    )
    out.append(
        L(
            "unknown-parent",
            sid,
            [raw(noop), notify(proposal)],
            sent=[noop, proposal],
            deliveries=[LINEAGE, OK],
        )
    )

    # The unknown parent is checked when it arrives: here it is the wrong kind.
    sid = "cat-lin-unknown-parent-checked-on-arrival"
    child = task_after(
        f"{sid}:actual", "cat-task-l507", "create", {"title": "Rho"}, parent=f"{sid}:proposal"
    )
    late = ws_before(f"{sid}:proposal", "cwd", {"cwd": "/srv/l507"})
    out.append(
        L(
            "unknown-parent",
            sid,
            [notify(child), raw(late)],
            sent=[child, late],
            deliveries=[OK, LINEAGE],
        )
    )
    return out


def rows() -> list[Row]:
    return [*identity(), *cycles(), *proposals(), *noops(), *unknown_parents()]
