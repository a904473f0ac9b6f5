"""The catalogue suite's SDK core on hand-built inputs: the source-local lineage
checker (every rule, accepted and rejected, late parents, cycles through late
parents, redelivery, source-local edges, rejections change nothing), the
registration evaluator (every rule accepted and rejected, and their order),
and the catalogue manifest M."""

from __future__ import annotations

import json
from typing import Any

import pytest
from catalogue_kit import (
    OTHER_SOURCE,
    event,
    file_change,
    file_changed,
    task,
    text_part,
    turn_end,
    workspace,
)
from conftest import REPO_ROOT

from ahp_py.sdk import lineage, registration
from ahp_py.sdk.lineage import CYCLE, IDENTITY, NO_OP, PROPOSAL, LineageChecker
from ahp_py.sdk.schemas import CAPABILITIES_RESPONSE, SchemaSet
from ahp_py.suites.catalogue import EVENT_TYPES, catalogue_manifest

TASK_AFTER = "task.change.after"
WS_AFTER = "workspace.change.after"


def admitted(checker: LineageChecker, *events: dict[str, Any]) -> list[str | None]:
    """The rule that rejected each event in turn (None: accepted)."""
    return [checker.admit(value).rule for value in events]


# Lineage: rule 1, identity ------------------------------------------------------


def test_a_redelivery_is_accepted_and_changes_nothing() -> None:
    checker = LineageChecker()
    first = task("p")
    assert admitted(checker, first) == [None]
    again = task("p", change={"s": 2}, time="2027-01-01T00:00:00Z")  # other fields may differ
    verdict = checker.admit(again)
    assert verdict.accepted and verdict.redelivery
    assert len(checker) == 1
    assert checker.known(first["source"], "p") == first  # the first one stays known


@pytest.mark.parametrize(
    ("known", "again"),
    [
        (task("e"), task("e", kind=TASK_AFTER)),  # another type
        (task("e"), task("e", parent="x")),  # a parent where there was none
        (task("e", parent="x"), task("e")),  # none where there was one
        (task("e", parent="x"), task("e", parent="y")),  # another parent
        (task("e", tid="t1"), task("e", tid="t2")),  # another task.id
        (task("e", kind=TASK_AFTER, tid="t1"), task("e", kind=TASK_AFTER, tid="t2")),
        (workspace("e", wkind="cwd"), workspace("e", wkind="roots")),  # another workspace.kind
        (workspace("e", kind=WS_AFTER), workspace("e", kind=WS_AFTER, wkind="switch")),
    ],
)
def test_a_known_identity_with_other_lineage_fields_is_refused(
    known: dict[str, Any], again: dict[str, Any]
) -> None:
    checker = LineageChecker()
    assert admitted(checker, known, again) == [None, IDENTITY]
    assert checker.known(known["source"], "e") == known  # the rejection changed nothing


def test_identity_compares_only_the_task_and_workspace_fields_of_their_events() -> None:
    checker = LineageChecker()
    # a turn.end redelivered with other content is still a redelivery
    assert admitted(checker, turn_end("t"), turn_end("t", outcome="failed")) == [None, None]
    assert checker.admit(turn_end("t")).redelivery


def test_the_same_id_in_another_source_is_another_event() -> None:
    checker = LineageChecker()
    assert admitted(checker, task("e"), task("e", kind=TASK_AFTER, source=OTHER_SOURCE)) == [
        None,
        None,
    ]
    assert len(checker) == 2


# Lineage: rule 2, cycles --------------------------------------------------------


def test_an_event_naming_itself_is_a_cycle() -> None:
    checker = LineageChecker()
    assert admitted(checker, task("self", parent="self")) == [CYCLE]
    assert len(checker) == 0
    assert admitted(checker, task("self")) == [None]  # the rejection left no trace


def test_a_cycle_through_a_late_parent() -> None:
    checker = LineageChecker()
    # b names a (unknown yet): accepted; then a names b: the chain from a's parent reaches a
    assert admitted(checker, turn_end("b", parent="a"), turn_end("a", parent="b")) == [None, CYCLE]


def test_a_longer_cycle_through_late_parents() -> None:
    checker = LineageChecker()
    events = [turn_end("c", parent="a"), turn_end("b", parent="c"), turn_end("a", parent="b")]
    assert admitted(checker, *events) == [None, None, CYCLE]
    assert checker.known("urn:ahp:test-a", "a") is None


def test_an_acyclic_chain_of_known_parents_is_accepted() -> None:
    checker = LineageChecker()
    events = [turn_end("a"), turn_end("b", parent="a"), turn_end("c", parent="b")]
    assert admitted(checker, *events) == [None, None, None]


def test_cycles_are_source_local() -> None:
    checker = LineageChecker()
    # b (source B) names a; a (source A) names b: b of source A is unknown, no cycle
    events = [turn_end("b", source=OTHER_SOURCE, parent="a"), turn_end("a", parent="b")]
    assert admitted(checker, *events) == [None, None]


# Lineage: rule 3, proposal and actual ------------------------------------------


def test_an_actual_task_change_keeps_its_proposal_identity() -> None:
    checker = LineageChecker()
    proposal = task("p", op="update", change={"s": "done"})
    actual = task("a", kind=TASK_AFTER, op="update", change={"s": "blocked"}, parent="p")
    assert admitted(checker, proposal, actual) == [None, None]  # the change may differ


@pytest.mark.parametrize(
    "actual",
    [
        task("a", kind=TASK_AFTER, tid="t2", parent="p"),  # another task.id
        task("a", kind=TASK_AFTER, op="remove", parent="p"),  # another operation
        workspace("a", kind=WS_AFTER, parent="p"),  # the wrong kind
    ],
)
def test_an_actual_change_that_breaks_its_task_proposal_is_refused(actual: dict[str, Any]) -> None:
    checker = LineageChecker()
    assert admitted(checker, task("p"), actual) == [None, PROPOSAL]
    assert len(checker) == 1


def test_an_actual_workspace_change_keeps_its_proposal_kind() -> None:
    checker = LineageChecker()
    proposal = workspace("p", wkind="roots", change={"roots": ["/a"]})
    good = workspace("a1", kind=WS_AFTER, wkind="roots", change={"roots": ["/b"]}, parent="p")
    other_kind = workspace("a2", kind=WS_AFTER, wkind="cwd", parent="p")
    wrong_kind = task("a3", kind=TASK_AFTER, parent="p")
    assert admitted(checker, proposal, good, other_kind, wrong_kind) == [
        None,
        None,
        PROPOSAL,
        PROPOSAL,
    ]


@pytest.mark.parametrize(
    ("child", "parent", "verdict"),
    [
        (task("c", kind=TASK_AFTER, parent="p"), task("p"), None),
        (task("c", kind=TASK_AFTER, tid="t2", parent="p"), task("p"), PROPOSAL),
        (task("c", kind=TASK_AFTER, op="update", parent="p"), task("p"), PROPOSAL),
        (workspace("c", kind=WS_AFTER, parent="p"), task("p"), PROPOSAL),
        (task("c", kind=TASK_AFTER, parent="p"), workspace("p"), PROPOSAL),
        (workspace("c", kind=WS_AFTER, wkind="roots", parent="p"), workspace("p"), PROPOSAL),
        (workspace("c", kind=WS_AFTER, parent="p"), workspace("p"), None),
        # not an actual change: free
        (file_changed("c", file_change(), parent="p"), workspace("p"), None),
        (task("c", parent="p"), task("p", tid="t9"), None),
    ],
)
def test_a_late_parent_is_checked_against_its_known_children(
    child: dict[str, Any], parent: dict[str, Any], verdict: str | None
) -> None:
    checker = LineageChecker()
    assert admitted(checker, child, parent) == [None, verdict]


def test_a_refused_late_parent_changes_nothing() -> None:
    checker = LineageChecker()
    child = task("c", kind=TASK_AFTER, tid="t1", parent="p")
    assert admitted(checker, child, task("p", tid="t2"), task("p", tid="t1")) == [
        None,
        PROPOSAL,
        None,
    ]


def test_other_parent_relations_are_free() -> None:
    checker = LineageChecker()
    events = [
        workspace("wp"),
        workspace("wa", kind=WS_AFTER, parent="wp"),
        file_changed("f", file_change(), parent="wa"),  # a file change under an actual change
        event("tb", "tool.before"),
        task("ta", kind=TASK_AFTER, parent="tb"),  # a task event under a tool.before
        task("tp2", parent="ta"),  # a proposal under an actual change
    ]
    assert admitted(checker, *events) == [None] * len(events)


# Lineage: rule 4, no-op actual changes -----------------------------------------


@pytest.mark.parametrize(
    ("value", "verdict"),
    [
        (task("n", kind=TASK_AFTER, op="update", change={}), NO_OP),
        (task("n", kind=TASK_AFTER, op="update", change={"s": 1}, prior={"s": 1}), NO_OP),
        (task("n", kind=TASK_AFTER, op="update", change={"s": 1}, prior={"s": 1, "x": 2}), NO_OP),
        (
            task(
                "n", kind=TASK_AFTER, op="update", change={"s": {"a": [1]}}, prior={"s": {"a": [1]}}
            ),
            NO_OP,
        ),
        (task("n", kind=TASK_AFTER, op="update", change={"s": 1}, prior={"s": 2}), None),
        (task("n", kind=TASK_AFTER, op="update", change={"s": 1, "y": 0}, prior={"s": 1}), None),
        (task("n", kind=TASK_AFTER, op="update", change={"s": 1}), None),  # no prior
        (task("n", kind=TASK_AFTER, op="update", change={"s": 1}, prior={"s": True}), None),
        (task("n", kind=TASK_AFTER, op="update", change={"s": 1}, prior={"s": "1"}), None),
        (task("n", kind=TASK_AFTER, op="create", change={"s": 1}, prior={"s": 1}), None),
        (task("n", kind=TASK_AFTER, op="create", change={}), None),
        (task("n", op="update", change={}), None),  # a proposal, not an actual change
        (workspace("n", kind=WS_AFTER, change={"cwd": "/a"}, prior={"cwd": "/a"}), NO_OP),
        (workspace("n", kind=WS_AFTER, change={}, prior={}), NO_OP),  # every key, vacuously
        (workspace("n", kind=WS_AFTER, change={"cwd": "/a"}, prior={"cwd": "/b"}), None),
        (workspace("n", kind=WS_AFTER, change={"cwd": "/a"}), None),  # no prior
        (workspace("n", change={"cwd": "/a"}, prior={"cwd": "/a"}), None),  # a proposal
        (file_changed("n", file_change("update", text_part("x"), text_part("x"))), NO_OP),
        (
            file_changed("n", file_change(), file_change("update", text_part("x"), text_part("x"))),
            NO_OP,
        ),
        (file_changed("n", file_change("update", text_part("x"), text_part("y"))), None),
        (file_changed("n", file_change("update", before=text_part("x"))), None),
        (file_changed("n", file_change("update", after=text_part("x"))), None),
        (file_changed("n", file_change("create", text_part("x"), text_part("x"))), None),
    ],
)
def test_no_op_actual_changes_are_refused(value: dict[str, Any], verdict: str | None) -> None:
    checker = LineageChecker()
    assert admitted(checker, value) == [verdict]
    assert len(checker) == (0 if verdict else 1)


# Lineage: rule 5, unknown parents, and per-instance state ----------------------


def test_an_unknown_parent_is_accepted() -> None:
    checker = LineageChecker()
    assert admitted(checker, task("a", kind=TASK_AFTER, parent="never-delivered")) == [None]


def test_a_parent_of_another_source_is_not_a_parent() -> None:
    checker = LineageChecker()
    proposal = task("p", tid="t1")
    # the same id in another source: not its parent, so its identity is not checked
    actual = task("a", kind=TASK_AFTER, tid="t2", source=OTHER_SOURCE, parent="p")
    assert admitted(checker, proposal, actual) == [None, None]
    # and a late parent in the child's source is still checked against it
    assert admitted(checker, task("p", tid="t3", source=OTHER_SOURCE)) == [PROPOSAL]


def test_each_checker_has_its_own_state() -> None:
    first, second = LineageChecker(), LineageChecker()
    assert admitted(first, task("p")) == [None]
    assert admitted(second, task("p", kind=TASK_AFTER)) == [None]  # not a redelivery here
    assert admitted(first, task("p", kind=TASK_AFTER)) == [IDENTITY]


def test_judge_changes_nothing() -> None:
    checker = LineageChecker()
    assert checker.judge(task("p")).accepted
    assert len(checker) == 0


def test_upstream_lineage_rows_in_file_order() -> None:
    """The upstream vector's sent messages, in order, through one checker (its
    deliveries are what the receiver must decide; schema rejections skipped)."""
    document = json.loads((REPO_ROOT / "scenarios/upstream/catalogue-scenarios.json").read_text())
    checker = LineageChecker()
    for row in document["scenarios"]:
        for sent, delivery in zip(
            row["expected"]["sent"], row["expected"]["deliveries"], strict=True
        ):
            if delivery["errorKind"] == "schema":
                continue
            verdict = checker.admit(sent["params"]["event"])
            assert verdict.accepted == delivery["accepted"], (row["id"], verdict)


# Registration ------------------------------------------------------------------

M = catalogue_manifest()
INTERCEPT_SUB = {
    "events": ["tool.before"],
    "mode": "intercept",
    "timeoutMs": 500,
    "failurePolicy": "fail-closed",
    "content": {"default": "metadata"},
}
OBSERVE_SUB = {"events": ["tool.after"], "mode": "observe", "content": {"default": "metadata"}}
CONTEXT = {"interactive": True, "environment": {"TOKEN_VAR": "value"}}


def backend(ident: str = "com.example.a", *subs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": ident,
        "transport": {"type": "http", "url": "https://policy.example.invalid/hooks"},
        "subscriptions": [dict(s) for s in subs] or [dict(INTERCEPT_SUB)],
        **extra,
    }


def document(*backends: dict[str, Any]) -> dict[str, Any]:
    return {"protocolVersion": "draft", "hooks": list(backends) or [backend()]}


def with_sub(**fields: Any) -> dict[str, Any]:
    """The document with one intercept subscription changed (a None value removes)."""
    sub = {**INTERCEPT_SUB, **fields}
    return document(backend("com.example.a", {k: v for k, v in sub.items() if v is not None}))


def rule(
    schema_set: SchemaSet,
    doc: Any,
    requirements: list[Any] | None = None,
    context: dict[str, Any] | None = None,
    manifest: Any = None,
) -> str | None:
    verdict = registration.evaluate(
        doc,
        M if manifest is None else manifest,
        requirements or [],
        CONTEXT if context is None else context,
        lambda value: schema_set.error(registration.REGISTRATION, value),
    )
    assert verdict.accepted == (verdict.rule is None)
    return verdict.rule


def test_a_plain_document_is_accepted(schema_set: SchemaSet) -> None:
    assert rule(schema_set, document()) is None
    assert rule(schema_set, document(backend("com.example.a", OBSERVE_SUB))) is None
    verdict = registration.evaluate(document(), M, [], CONTEXT, lambda _: None)
    assert verdict.entry() == {"accepted": True}
    refused = registration.evaluate({}, M, [], CONTEXT, lambda _: "no")
    assert refused.entry() == {"accepted": False, "rule": "schema"}


@pytest.mark.parametrize(
    "doc",
    [
        with_sub(failurePolicy=None),  # an intercept without failurePolicy
        with_sub(timeoutMs=None),  # ... without timeoutMs
        document(backend("com.example.a", {**OBSERVE_SUB, "timeoutMs": 100})),
        document(backend("com.example.a", {**OBSERVE_SUB, "failurePolicy": "fail-open"})),
        with_sub(content={}),  # no content.default
        with_sub(events=["model.error"]),  # an observe-only event intercepted
        document(backend(authentication={"type": "mtls"})),
        document(backend(authentication={"type": "workload"})),
        document(backend(authentication={"type": "bearer", "token": "literal"})),
        with_sub(scope="managed"),  # managed without disableable: false
        with_sub(scope="managed", disableable=True),
        {"protocolVersion": "draft", "hooks": []},
        "not a document",
    ],
)
def test_schema(schema_set: SchemaSet, doc: Any) -> None:
    assert rule(schema_set, doc) == "schema"


def test_duplicate_backend(schema_set: SchemaSet) -> None:
    assert rule(schema_set, document(backend("com.example.a"), backend("com.example.a"))) == (
        "duplicate-backend"
    )
    assert rule(schema_set, document(backend("com.example.a"), backend("com.example.b"))) is None


def test_transport(schema_set: SchemaSet) -> None:
    stdio = backend()
    stdio["transport"] = {"type": "stdio", "command": "hook", "lifecycle": "persistent"}
    assert rule(schema_set, document(stdio)) == "transport"
    manifest = {**M, "transports": ["http", "stdio"]}
    assert rule(schema_set, document(stdio), manifest=manifest) is None


OAUTH = {
    "type": "oauth",
    "resource": "https://policy.example.invalid/",
    "issuer": "https://issuer.example.invalid/",
    "clientId": "client",
    "flow": "client_credentials",
}


def test_authentication(schema_set: SchemaSet) -> None:
    assert rule(schema_set, document(backend(authentication=OAUTH))) == "authentication"
    manifest = {**M, "authentication": ["bearer", "oauth"]}
    assert rule(schema_set, document(backend(authentication=OAUTH)), manifest=manifest) is None
    bearer = {"type": "bearer", "tokenEnv": "TOKEN_VAR"}
    assert rule(schema_set, document(backend(authentication=bearer))) is None


@pytest.mark.parametrize(
    ("auth", "environment", "expected"),
    [
        ({"type": "bearer", "tokenEnv": "TOKEN_VAR"}, {"TOKEN_VAR": "v"}, None),
        ({"type": "bearer", "tokenEnv": "TOKEN_VAR"}, {}, "credential"),
        ({"type": "bearer", "tokenEnv": "TOKEN_VAR"}, {"TOKEN_VAR": ""}, "credential"),
        ({"type": "bearer", "tokenEnv": "TOKEN_VAR"}, {"TOKEN_VAR": 7}, "credential"),
        ({"type": "bearer", "tokenEnv": "TOKEN_VAR"}, {"OTHER": "v"}, "credential"),
        ({"type": "bearer", "tokenRef": "store:token"}, {"TOKEN_VAR": "v"}, "credential"),
    ],
)
def test_credential(
    schema_set: SchemaSet, auth: dict[str, Any], environment: dict[str, Any], expected: str | None
) -> None:
    context = {"interactive": True, "environment": environment}
    assert rule(schema_set, document(backend(authentication=auth)), context=context) == expected


@pytest.mark.parametrize(
    ("sub", "expected"),
    [
        ({**OBSERVE_SUB, "events": ["hook.failure"]}, "event"),  # not in M
        ({**INTERCEPT_SUB, "events": ["session.start"]}, "event"),  # M offers it observe only
        ({**INTERCEPT_SUB, "events": ["tool.before", "tool.after", "turn.start"]}, None),
        ({**INTERCEPT_SUB, "events": ["tool.*"]}, None),  # matches tool.before, tool.after
        ({**INTERCEPT_SUB, "events": ["model.*"]}, "event"),  # no model.* intercepted in M
        ({**INTERCEPT_SUB, "events": ["*"]}, None),
        ({**OBSERVE_SUB, "events": ["*"]}, None),
        ({**OBSERVE_SUB, "events": ["session.*"]}, None),
        ({**OBSERVE_SUB, "events": ["hook.*"]}, "event"),  # only hook.failure, not in M
        ({**OBSERVE_SUB, "events": ["nothing.*"]}, "event"),
        ({**OBSERVE_SUB, "events": ["tool.after", "hook.failure"]}, "event"),
    ],
)
def test_event(schema_set: SchemaSet, sub: dict[str, Any], expected: str | None) -> None:
    assert rule(schema_set, document(backend("com.example.a", sub))) == expected


def test_scope(schema_set: SchemaSet) -> None:
    assert rule(schema_set, with_sub(scope="managed", disableable=False)) == "scope"
    assert rule(schema_set, with_sub(scope="user")) is None
    assert rule(schema_set, with_sub(scope="project")) is None
    observer = {**OBSERVE_SUB, "scope": "managed", "disableable": False}
    assert rule(schema_set, document(backend("com.example.a", observer))) == "scope"
    manifest = {**M, "managedPolicy": {"scopes": ["managed"], "disableable": False}}
    assert rule(schema_set, with_sub(scope="managed", disableable=False), manifest=manifest) is None


def test_scope_non_disableable_needs_a_manifest_that_enforces_it(schema_set: SchemaSet) -> None:
    # M.managedPolicy.disableable is true: a mandatory subscription is refused,
    # with a scope M offers or with none.
    assert rule(schema_set, with_sub(scope="user", disableable=False)) == "scope"
    assert rule(schema_set, with_sub(disableable=False)) == "scope"
    observer = {**OBSERVE_SUB, "scope": "project", "disableable": False}
    assert rule(schema_set, document(backend("com.example.a", observer))) == "scope"
    assert rule(schema_set, with_sub(scope="user", disableable=True)) is None
    enforcing = {**M, "managedPolicy": {"scopes": ["user", "project"], "disableable": False}}
    assert rule(schema_set, with_sub(scope="user", disableable=False), manifest=enforcing) is None
    assert rule(schema_set, with_sub(disableable=False), manifest=enforcing) is None


@pytest.mark.parametrize(
    ("timeout", "limits", "expected"),
    [
        (99, None, "timeout"),
        (100, None, None),
        (30000, None, None),
        (30001, None, "timeout"),
        (1, {}, None),  # limits M does not state are not checked
        (10**9, {"minTimeoutMs": 100}, None),
        (1, {"maxTimeoutMs": 200}, None),
        (201, {"maxTimeoutMs": 200}, "timeout"),
    ],
)
def test_timeout(
    schema_set: SchemaSet, timeout: int, limits: dict[str, Any] | None, expected: str | None
) -> None:
    manifest = None if limits is None else {**M, "limits": limits}
    assert rule(schema_set, with_sub(timeoutMs=timeout), manifest=manifest) == expected


def test_an_observer_has_no_timeout_to_check(schema_set: SchemaSet) -> None:
    assert rule(schema_set, document(backend("com.example.a", OBSERVE_SUB))) is None


def req(event: str, mode: str = "intercept", effects: list[str] | None = None, **extra: Any) -> Any:
    return {"event": event, "mode": mode, "effects": effects or [], **extra}


BOTH = document(
    backend(
        "com.example.a",
        {**INTERCEPT_SUB, "events": ["tool.*", "turn.start"]},
        {**OBSERVE_SUB, "events": ["*"]},
    )
)


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        (req("tool.before", effects=["deny", "allow", "ask", "modify", "message", "flow"]), None),
        (req("tool.before", effects=["return"]), "requirement"),  # not offered
        (req("tool.before", effects=["modify"], modify={"input": {"replace": True}}), None),
        (req("tool.before", effects=["modify"], modify={"input": {"merge": True}}), None),
        (req("tool.before", modify={"output": {"replace": True}}), "requirement"),  # target
        (req("tool.after", effects=["modify"], modify={"output": {"replace": True}}), None),
        (req("tool.after", modify={"output": {"merge": True}}), "requirement"),  # not true in M
        (req("tool.after", modify={"output": {"merge": False}}), None),  # only true is required
        (req("tool.after", effects=["deny"]), "requirement"),
        (req("turn.start", effects=["deny", "message"]), None),
        (req("turn.start", effects=["modify"]), "requirement"),
        (req("model.error"), "requirement"),  # no intercept subscription matches it
        (req("tool.progress", "observe"), None),  # covered by the observer's *
        (req("tool.progress", "observe", ["message"]), "requirement"),  # an observer's effects
        (req("hook.failure", "observe"), "requirement"),  # covered, but M does not list it
        (req("session.start"), "requirement"),  # no intercept sub matches session.start
    ],
)
def test_requirement(schema_set: SchemaSet, requirement: Any, expected: str | None) -> None:
    assert rule(schema_set, BOTH, [requirement]) == expected


def test_a_requirement_needs_a_subscription_with_its_mode(schema_set: SchemaSet) -> None:
    observer_only = document(backend("com.example.a", OBSERVE_SUB))
    assert rule(schema_set, observer_only, [req("tool.after")]) == "requirement"
    assert rule(schema_set, observer_only, [req("tool.after", "observe")]) is None
    assert rule(schema_set, observer_only, [req("tool.before", "observe")]) == "requirement"
    # M lists tool.before for interception, the document intercepts only tool.after
    intercept_after = with_sub(events=["tool.after"])
    assert rule(schema_set, intercept_after, [req("tool.before")]) == "requirement"


@pytest.mark.parametrize(
    ("interactive", "expected"),
    [(True, None), (False, "interactive"), (None, "interactive"), ("yes", "interactive")],
)
def test_interactive(schema_set: SchemaSet, interactive: Any, expected: str | None) -> None:
    context: dict[str, Any] = {"environment": {}}
    if interactive is not None:
        context["interactive"] = interactive
    assert rule(schema_set, document(), [req("tool.before", effects=["ask"])], context) == expected
    assert rule(schema_set, document(), [req("tool.before", effects=["deny"])], context) is None


def test_the_rules_apply_in_order(schema_set: SchemaSet) -> None:
    """One document failing every rule; each step mends the first failing one."""
    stdio = {
        "id": "com.example.dup",
        "transport": {"type": "stdio", "command": "hook", "lifecycle": "persistent"},
        "subscriptions": [dict(OBSERVE_SUB)],
    }
    intercept = {**INTERCEPT_SUB, "timeoutMs": 1, "scope": "managed", "disableable": False}
    last = backend(
        "com.example.b",
        {**OBSERVE_SUB, "events": ["hook.failure"]},
        intercept,
        authentication={"type": "bearer", "tokenEnv": "MISSING"},
    )
    hooks = [stdio, dict(stdio), backend("com.example.c", authentication=OAUTH), last]
    doc = {"protocolVersion": "draft", "hooks": hooks}
    requirements = [req("tool.after", effects=["ask"])]
    context: dict[str, Any] = {"interactive": False, "environment": {}}

    def first() -> str | None:
        return rule(schema_set, doc, requirements, context)

    broken = json.loads(json.dumps(doc))
    broken["hooks"][0]["subscriptions"][0]["failurePolicy"] = "fail-open"  # on an observer
    assert rule(schema_set, broken, requirements, context) == "schema"
    assert first() == "duplicate-backend"
    hooks[1]["id"] = "com.example.dup2"
    assert first() == "transport"
    del hooks[0:2]
    assert first() == "authentication"
    del hooks[0]
    assert first() == "credential"
    context["environment"] = {"MISSING": "now set"}
    assert first() == "event"
    last["subscriptions"][0]["events"] = ["tool.after"]
    assert first() == "scope"
    last["subscriptions"][1]["scope"] = "user"
    assert first() == "scope"  # disableable false: M (disableable true) cannot enforce it
    del last["subscriptions"][1]["disableable"]
    assert first() == "timeout"
    last["subscriptions"][1]["timeoutMs"] = 500
    assert first() == "requirement"  # nothing intercepts tool.after
    last["subscriptions"][1]["events"] = ["tool.before", "tool.after"]
    requirements[0]["event"] = "tool.before"  # tool.after offers no ask
    assert first() == "interactive"
    context["interactive"] = True
    assert first() is None
    assert registration.RULES == (
        "schema",
        "duplicate-backend",
        "transport",
        "authentication",
        "credential",
        "event",
        "scope",
        "timeout",
        "requirement",
        "interactive",
    )


def test_wildcards() -> None:
    assert registration.matches("*", "tool.before")
    assert registration.matches("tool.*", "tool.permission.request")
    assert not registration.matches("tool.*", "toolbox.open")
    assert not registration.matches("tool.*", "tool")
    assert registration.matches("tool.before", "tool.before")
    assert not registration.matches("tool.before", "tool.after")


# The catalogue manifest M -------------------------------------------------------


def test_m_lists_every_event_type_but_hook_failure_in_schema_order() -> None:
    common = json.loads((REPO_ROOT / "schemas/draft/common.schema.json").read_text())
    order = [name for name in common["$defs"]["eventType"]["enum"] if name != "hook.failure"]
    assert list(EVENT_TYPES) == order
    assert [entry["event"] for entry in M["events"]] == order


def test_m_is_a_valid_manifest(schema_set: SchemaSet) -> None:
    response = {
        "jsonrpc": "2.0",
        "id": "discovery",
        "result": {"protocolVersion": "draft", "manifest": M},
    }
    assert schema_set.error(CAPABILITIES_RESPONSE, response) is None
    intercepted = {e["event"]: e for e in M["events"] if "intercept" in e["modes"]}
    assert list(intercepted) == ["tool.before", "tool.after", "turn.start"]
    assert intercepted["turn.start"] == {
        "event": "turn.start",
        "modes": ["intercept", "observe"],
        "capabilities": {"effects": ["deny", "message"]},
    }
    others = [e for e in M["events"] if e["event"] not in intercepted]
    assert all(e == {"event": e["event"], "modes": ["observe"]} for e in others)
    assert M["limits"] == {"minTimeoutMs": 100, "maxTimeoutMs": 30000}
    assert M["managedPolicy"] == {"scopes": ["user", "project"], "disableable": True}


def test_m_is_fresh_each_time() -> None:
    first = catalogue_manifest()
    first["events"][0]["capabilities"]["effects"].clear()
    first["transports"].append("stdio")
    assert catalogue_manifest() == M
    assert M["events"][0]["capabilities"]["effects"][0] == "deny"


def test_lineage_constants() -> None:
    assert lineage.PROPOSALS == {
        "task.change.before": "task",
        "workspace.change.before": "workspace",
    }
