"""Coverage by requirement: which AHP requirements each adapter's passing rows exercise.

Three steps, each a plain function:

- `features(suite, row)`: the features one scenario row exercises, read from the
  row itself (its requests, responses, steps, chain, registration documents),
  never from its expectation, except where the kind of expectation is the
  feature (a core row that expects rejection carries `negative:<class>`, an
  auth row that expects a refusal `auth-server:refusal`). The vocabulary is
  closed: `VOCABULARY` lists every name `features` can return, and
  docs/coverage.md explains each family.
- `requirements.json` (beside this module, `load_requirements()`): the spec's
  canonical requirements pinned by their facts (id, level, profile, document,
  anchor, section, textSha256), each with our title and the features whose rows
  test it, then our own finer `IMX-` requirements, each naming what it refines;
  and the spec's conformance profiles (`load_profiles()`, judged per adapter and
  role by `interop.coverage.profiles`). `interop.coverage.speccheck` compares
  the table with a spec checkout (`python -m interop requirements --spec PATH`).
- `coverage(document, root)`: for a report document (reportVersion 3), every
  row of every combination mapped to its features (its row's features plus the
  combination's `transport:` and `auth:`), then per adapter and role each
  feature and requirement `passed`, `failed` or `untested`. `coverage_lines`
  renders it for a terminal.

Only `passed`, `failed` and `known-failing` rows count as exercised (a known
failure is charged like any failure: known-failures.json lets the run pass, it
does not make the record say the rule holds); `unsupported`, `inapplicable` and
`not-run` rows do not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from interop.blame import placed, row_rules
from interop.coverage.profiles import profile_line, profile_verdicts

REQUIREMENTS_FILE = Path(__file__).with_name("requirements.json")

LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
# a canonical requirement's id, and one of ours (Interop Matrix) that refines one
CANONICAL_ID = re.compile(r"AHP-[A-Z]+-\d{3}")
OWN_ID = re.compile(r"IMX-[A-Z]+-\d{3}")
CANONICAL_FIELDS = frozenset(
    {"id", "level", "profile", "document", "anchor", "section", "textSha256", "title"}
    | {"features", "fixtures"}
)
OWN_FIELDS = frozenset({"id", "level", "title", "features", "refines", "source"})
SUITES = ("auth", "catalogue", "compaction", "core", "elicitation", "isolation", "lifecycle")
TRANSPORTS = ("http", "stdio")
AUTH_MODES = ("bearer", "mtls", "none", "oauth", "workload")

EVENT_TYPES = (
    # interceptable (19)
    "config.change.before",
    "context.compact.after",
    "context.compact.before",
    "model.request.before",
    "model.response.after",
    "model.switch.before",
    "session.start",
    "task.change.before",
    "tool.after",
    "tool.batch.after",
    "tool.before",
    "tool.permission.request",
    "turn.finish.before",
    "turn.start",
    "user.elicitation.request",
    "user.elicitation.result",
    "user.message.inbound",
    "user.message.outbound",
    "workspace.change.before",
    # observe-only (13)
    "config.change.after",
    "file.changed",
    "hook.failure",
    "model.error",
    "model.switch.after",
    "session.end",
    "task.change.after",
    "tool.permission.resolved",
    "tool.progress",
    "turn.end",
    "turn.progress",
    "user.attention",
    "workspace.change.after",
)
EFFECT_TYPES = ("allow", "ask", "deny", "flow", "inject", "message", "modify", "return")
MODIFY_TARGETS = (
    "content",
    "input",
    "instructions",
    "output",
    "prompt",
    "request",
    "response",
    "summary",
    "workspace",
)
MODIFY_OPERATIONS = ("merge", "replace")
FLOW_OPERATIONS = ("continue", "stop")
METHODS = ("hooks/capabilities", "hooks/intercept", "hooks/observe")
NEGATIVE_CLASSES = (
    "application-invalid",
    "capability-invalid",
    "correlation-invalid",
    "schema-invalid",
)
STEP_OPS = (
    "accept",
    "cancel",
    "emit",
    "failOpen",
    "notify",
    "observe",
    "rawNotify",
    "receive",
    "register",
    "release",
    "send",
    "upload",
    "wait",
)
STATE_SHAPES = ("candidate", "flow", "initial", "omitted", "permission")
CONTENT_SHAPES = ("attachment", "gap", "message", "metadata", "omit", "text")
CHAIN_SHAPES = (
    "fail-closed",
    "fail-open",
    "hold-observers",
    "interrupt",
    "observer",
    "observer-fault",
    "serial",
    "timeout",
)
CATALOGUE_CATEGORIES = ("execution", "lineage", "registration")
REGISTRATION_SHAPES = (
    "authentication",
    "intercept",
    "literal-credential",
    "observe",
    "requirement",
    "wildcard",
)
COMPACTION_SHAPES = ("after-observe-only", "chain", "negative", "observer", "supplied")
ELICITATION_SHAPES = ("atomic", "correlation", "form", "url")
ISOLATION_SHAPES = ("cookie", "plain", "redirect", "tls")
AUTH_SERVER_SHAPES = ("acceptance", "jwt", "refusal")
AUTH_CLIENT_SHAPES = ("acceptance", "refusal")


def _family(prefix: str, names: tuple[str, ...]) -> set[str]:
    return {f"{prefix}:{name}" for name in names}


VOCABULARY: frozenset[str] = frozenset(
    _family("suite", SUITES)
    | _family("transport", TRANSPORTS)
    | _family("auth", AUTH_MODES)
    | _family("method", METHODS)
    | _family("event", (*EVENT_TYPES, "unknown"))
    | _family("effect", (*EFFECT_TYPES, "none", "unknown"))
    | {f"modify:{t}/{o}" for t in MODIFY_TARGETS for o in MODIFY_OPERATIONS}
    | {"modify:unknown"}
    | _family("flow", (*FLOW_OPERATIONS, "unknown"))
    | _family("state", STATE_SHAPES)
    | _family("content", CONTENT_SHAPES)
    | {"envelope:extensions", "version:mismatch"}
    | _family("negative", NEGATIVE_CLASSES)
    | _family("op", STEP_OPS)
    | _family("chain", CHAIN_SHAPES)
    | _family("catalogue", CATALOGUE_CATEGORIES)
    | _family("registration", REGISTRATION_SHAPES)
    | _family("compaction", COMPACTION_SHAPES)
    | _family("elicitation", ELICITATION_SHAPES)
    | _family("isolation", ISOLATION_SHAPES)
    | _family("auth-server", AUTH_SERVER_SHAPES)
    | _family("auth-client", AUTH_CLIENT_SHAPES)
)

# Keys of a row that hold answers or proofs (what the harness expects), never what the
# row sends: features are never read from them.
_ANSWER_KEYS = frozenset(
    {"expected", "expectError", "hostExpected", "chainProof", "proof", "inapplicableReason"}
)


# ---------------------------------------------------------------------------------------
# Features of one row


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every object inside `value`, depth first, skipping the answer keys of a row."""
    if isinstance(value, dict):
        yield value
        for key, child in value.items():
            if key not in _ANSWER_KEYS:
                yield from _walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from _walk(child)


def _state_features(params: dict[str, Any]) -> set[str]:
    if "state" not in params:
        return {"state:omitted"}
    state = params["state"]
    if not isinstance(state, dict):
        return {"state:omitted"}
    found: set[str] = set()
    if state.get("permission", "none") != "none":
        found.add("state:permission")
    if state.get("candidate") is not None:
        found.add("state:candidate")
    if state.get("flow", "none") != "none":
        found.add("state:flow")
    return found or {"state:initial"}


def _message_features(message: dict[str, Any]) -> set[str]:
    """A JSON-RPC request or notification: its method, event type, state, version."""
    found: set[str] = set()
    method = message.get("method")
    if method in METHODS:
        found.add(f"method:{method}")
    params = message.get("params")
    if not isinstance(params, dict):
        return found
    if params.get("protocolVersion", "draft") != "draft":
        found.add("version:mismatch")
    if isinstance(params.get("extensions"), dict):
        found.add("envelope:extensions")
    event = params.get("event")
    if isinstance(event, dict):
        kind = event.get("type")
        found.add(f"event:{kind}" if kind in EVENT_TYPES else "event:unknown")
        if isinstance(event.get("extensions"), dict):
            found.add("envelope:extensions")
    if method == "hooks/intercept":
        found |= _state_features(params)
    return found


def _effect_features(effect: Any) -> set[str]:
    if not isinstance(effect, dict) or effect.get("type") not in EFFECT_TYPES:
        return {"effect:unknown"}
    kind = effect["type"]
    found = {f"effect:{kind}"}
    if kind == "modify":
        target, operation = effect.get("target"), effect.get("operation")
        if target in MODIFY_TARGETS and operation in MODIFY_OPERATIONS:
            found.add(f"modify:{target}/{operation}")
        else:
            found.add("modify:unknown")
    elif kind == "flow":
        operation = effect.get("operation")
        found.add(f"flow:{operation}" if operation in FLOW_OPERATIONS else "flow:unknown")
    return found


def _response_features(response: dict[str, Any], sent_version: str = "draft") -> set[str]:
    """A JSON-RPC response carrying a `result`: its effects (or none), its version."""
    found: set[str] = set()
    result = response.get("result")
    if not isinstance(result, dict):
        return found
    if "protocolVersion" in result and result["protocolVersion"] != sent_version:
        found.add("version:mismatch")
    if isinstance(result.get("extensions"), dict):
        found.add("envelope:extensions")
    effects = result.get("effects")
    if isinstance(effects, list):
        if not effects:
            found.add("effect:none")
        for effect in effects:
            found |= _effect_features(effect)
    return found


def _content_features(part: dict[str, Any]) -> set[str]:
    """A content part (`kind` text or attachment with a `selection`) or a message."""
    found: set[str] = set()
    if isinstance(part.get("role"), str) and isinstance(part.get("parts"), list):
        found.add("content:message")
    if part.get("kind") in ("text", "attachment") and "selection" in part:
        found.add(f"content:{part['kind']}")
        if part["selection"] in ("metadata", "omit"):
            found.add(f"content:{part['selection']}")
        if "gap" in part:
            found.add("content:gap")
    return found


def _wire_features(row: Any) -> set[str]:
    """What every suite's rows share: the messages, responses and content they carry."""
    found: set[str] = set()
    for obj in _walk(row):
        if obj.get("jsonrpc") is not None and isinstance(obj.get("method"), str):
            found |= _message_features(obj)
        elif "result" in obj and ("jsonrpc" in obj or "id" in obj):
            found |= _response_features(obj)
        found |= _content_features(obj)
    return found


def _steps(row: dict[str, Any]) -> list[dict[str, Any]]:
    steps = row.get("steps")
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def _op_features(row: dict[str, Any]) -> set[str]:
    return {f"op:{s['op']}" for s in _steps(row) if s.get("op") in STEP_OPS}


def _subscriptions_features(subscriptions: Any, prefix: str) -> set[str]:
    """A chain of subscriptions (lifecycle `chain`, compaction `before`/`after`)."""
    if not isinstance(subscriptions, list):
        return set()
    subs = [s for s in subscriptions if isinstance(s, dict)]
    intercepts = [s for s in subs if s.get("mode") == "intercept"]
    found: set[str] = set()
    if len(intercepts) >= 2:
        found.add(f"{prefix}:serial" if prefix == "chain" else f"{prefix}:chain")
    if any(s.get("mode") == "observe" for s in subs):
        found.add(f"{prefix}:observer")
    if prefix == "chain":
        for sub in intercepts:
            if sub.get("failurePolicy") in ("fail-open", "fail-closed"):
                found.add(f"chain:{sub['failurePolicy']}")
            if "timeoutMs" in sub:
                found.add("chain:timeout")
    return found


def _core(row: dict[str, Any]) -> set[str]:
    found = _wire_features(row.get("request"))
    request = row.get("request")
    sent = "draft"
    if isinstance(request, dict) and isinstance(request.get("params"), dict):
        sent = request["params"].get("protocolVersion", "draft")
    response = row.get("response")
    if isinstance(response, dict):
        found |= _response_features(response, sent)
        for obj in _walk(response.get("result")):
            found |= _content_features(obj)
    # The expectation's kind is the feature here: a row that expects rejection names its
    # class among its tags (docs/scenarios.md, "The core scenario set").
    raw_tags = row.get("tags")
    tags: list[Any] = raw_tags if isinstance(raw_tags, list) else []
    if row.get("expectError") is True or "negative" in tags:
        found |= {f"negative:{t}" for t in tags if t in NEGATIVE_CLASSES}
    return found


def _probe(row: dict[str, Any]) -> set[str]:
    """A receiver probe built in code (lifecycle and catalogue `*-probes` sets): the report
    carries only its id, whose first word names what it sends."""
    if set(row) - {"id", "expected"}:
        return set()
    head = str(row.get("id", "")).split("-", 1)[0]
    return {
        "upload": {"op:upload"},
        "changed": {"op:upload"},
        "observe": {"method:hooks/observe"},
        "capabilities": {"method:hooks/capabilities"},
    }.get(head, set())


def _lifecycle(row: dict[str, Any]) -> set[str]:
    found = _wire_features(row) | _op_features(row) | _probe(row)
    chain = row.get("chain")
    if isinstance(chain, dict):
        found |= _subscriptions_features(chain.get("subscriptions"), "chain")
        if chain.get("interrupt") is True:
            found.add("chain:interrupt")
        if chain.get("holdObservers") is True:
            found.add("chain:hold-observers")
    if row.get("observeFaults"):
        found.add("chain:observer-fault")
    return found


def _registration_features(registration: Any) -> set[str]:
    found: set[str] = set()
    hooks = registration.get("hooks") if isinstance(registration, dict) else None
    for hook in hooks if isinstance(hooks, list) else []:
        if not isinstance(hook, dict):
            continue
        authentication = hook.get("authentication")
        if isinstance(authentication, dict):
            found.add("registration:authentication")
            if "token" in authentication:
                found.add("registration:literal-credential")
        subscriptions = hook.get("subscriptions")
        for sub in subscriptions if isinstance(subscriptions, list) else []:
            if not isinstance(sub, dict):
                continue
            if sub.get("mode") in ("intercept", "observe"):
                found.add(f"registration:{sub['mode']}")
            events = sub.get("events")
            if isinstance(events, list) and any(isinstance(e, str) and "*" in e for e in events):
                found.add("registration:wildcard")
    return found


def _catalogue(row: dict[str, Any]) -> set[str]:
    found = _wire_features(row) | _op_features(row) | _probe(row)
    if row.get("category") in CATALOGUE_CATEGORIES:
        found.add(f"catalogue:{row['category']}")
    for step in _steps(row):
        if step.get("op") == "register":
            # a registration is judged against the manifest discovered with hooks/capabilities
            found.add("method:hooks/capabilities")
            found |= _registration_features(step.get("registration"))
            if step.get("requirements"):
                found.add("registration:requirement")
    return found


def _compaction(row: dict[str, Any]) -> set[str]:
    found = _wire_features(row)
    if "negative" in row:
        found.add("compaction:negative")
    for boundary in ("before", "after"):
        found |= _subscriptions_features(row.get(boundary), "compaction")
    if row.get("afterObserveOnly") is True:
        found.add("compaction:after-observe-only")
    sequences = row.get("responseSequences")
    before = sequences.get("before") if isinstance(sequences, dict) else None
    if "effect:return" in _wire_features(before):
        found.add("compaction:supplied")
    return found


def _elicitation(row: dict[str, Any]) -> set[str]:
    found = _wire_features(row) | _op_features(row)
    if "atomic" in row:
        found.add("elicitation:atomic")
    for obj in _walk(row):
        elicitation = obj.get("elicitation")
        if isinstance(elicitation, dict) and elicitation.get("mode") in ("form", "url"):
            found.add(f"elicitation:{elicitation['mode']}")
    sent = [
        s["message"]["params"]["event"]
        for s in _steps(row)
        if isinstance(s.get("message"), dict)
        and isinstance(s["message"].get("params"), dict)
        and isinstance(s["message"]["params"].get("event"), dict)
    ]
    if any(e.get("type") == "user.elicitation.result" and "parentEventId" in e for e in sent):
        found.add("elicitation:correlation")
    return found


def _isolation(row: dict[str, Any]) -> set[str]:
    from interop.suites.isolation.scenarios import CASES

    found = _wire_features(row) | _op_features(row)
    case = next((c for c in CASES if c.id == row.get("id")), None)
    if case is not None:
        found.add(f"isolation:{case.origin}")
        if case.cookie:
            found.add("isolation:cookie")
    return found


def _auth(row: dict[str, Any]) -> set[str]:
    """An auth row is `profile/case@route` (server probes) or `profile/case` (client
    refusals); its case table (interop/suites/auth/cases.py) says whether it is a negative."""
    from interop.suites.auth.cases import CASES

    row_id = str(row.get("id", ""))
    name, _, route = row_id.partition("/")[2].partition("@")
    if route:
        found = {"method:hooks/intercept" if route == "intercept" else "method:hooks/capabilities"}
        case = next((c for c in CASES if c.name == name), None)
        negative = case.negative if case is not None else name != "positive-control"
        found.add("auth-server:refusal" if negative else "auth-server:acceptance")
        if name.startswith("jwt-"):
            found.add("auth-server:jwt")
        return found
    # a client row: the expectation's kind (a refusal) is the feature
    expected = row.get("expected")
    refused = isinstance(expected, dict) and "reached" in expected
    return {
        "method:hooks/intercept",
        "auth-client:refusal" if refused else "auth-client:acceptance",
    }


_BY_SUITE = {
    "auth": _auth,
    "catalogue": _catalogue,
    "compaction": _compaction,
    "core": _core,
    "elicitation": _elicitation,
    "isolation": _isolation,
    "lifecycle": _lifecycle,
}


def features(suite: str, row: dict[str, Any]) -> set[str]:
    """The features `row` (a raw scenario-file row of `suite`) exercises, `suite:` included.
    The combination's `transport:` and `auth:` are added by `coverage`, not here."""
    derive = _BY_SUITE.get(suite)
    found = {f"suite:{suite}"} if suite in SUITES else set()
    if derive is not None:
        found |= derive(row)
    return found & VOCABULARY


# ---------------------------------------------------------------------------------------
# The requirement table


def load_requirements(path: Path = REQUIREMENTS_FILE) -> list[dict[str, Any]]:
    """The checked-in table, sorted by id. A canonical entry (`AHP-...`) has exactly
    CANONICAL_FIELDS; one of ours (`IMX-...`) has OWN_FIELDS, and its `refines` names
    a canonical id of the table or `{document, section}` of the spec. ValueError
    otherwise (a duplicate id, a level not in LEVELS, a feature not in VOCABULARY)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    table = data["requirements"]
    canonical = {e.get("id") for e in table if CANONICAL_ID.fullmatch(str(e.get("id")))}
    seen: set[str] = set()
    for entry in table:
        rid = str(entry.get("id"))
        if rid in seen:
            raise ValueError(f"{path}: {rid}: listed twice")
        seen.add(rid)
        if CANONICAL_ID.fullmatch(rid):
            fields = CANONICAL_FIELDS
        elif OWN_ID.fullmatch(rid):
            fields = OWN_FIELDS
            refines = entry.get("refines")
            section = isinstance(refines, dict) and set(refines) == {"document", "section"}
            if not (
                (isinstance(refines, str) and refines in canonical)
                or (section and str(refines["document"]).startswith("spec/"))
            ):
                raise ValueError(f"{path}: {rid}: refines {refines!r}: no canonical id or section")
        else:
            raise ValueError(f"{path}: {rid}: neither an AHP- nor an IMX- id")
        if set(entry) != fields:
            raise ValueError(f"{path}: {rid}: fields {sorted(entry)}, expected {sorted(fields)}")
        if entry["level"] not in LEVELS:
            raise ValueError(f"{path}: {rid}: level {entry['level']!r}")
        unknown = sorted(set(entry["features"]) - VOCABULARY)
        if unknown:
            raise ValueError(f"{path}: {rid}: unknown features {', '.join(unknown)}")
    return sorted(table, key=lambda e: e["id"])


def load_profiles(path: Path = REQUIREMENTS_FILE) -> list[dict[str, Any]]:
    """The spec's conformance profiles pinned beside the table, sorted by id:
    `{id, path, sha256, roles, requirements}` (roles `harness`/`backend`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return sorted(data.get("profiles", []), key=lambda p: str(p["id"]))


def _requirement_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """What the coverage result says of one requirement: its facts and ours, sorted."""
    keys = ("anchor", "document", "id", "level", "profile", "refines", "section", "textSha256")
    summary = {k: entry[k] for k in (*keys, "title") if k in entry}
    summary["features"] = sorted(entry["features"])
    return dict(sorted(summary.items()))


# ---------------------------------------------------------------------------------------
# Coverage of a report

# a known failure is still a failure of the side its rules judge: listed in
# known-failures.json so that the run passes, never so that the record does
_EXERCISED = ("passed", "failed", "known-failing")
_ROLES = ("client", "server")


def _file_rows(path: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = data.get("scenarios") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ValueError("no `scenarios` list")
    return {str(r["id"]): r for r in rows if isinstance(r, dict) and "id" in r}


def _isolation_rows(path: Path) -> dict[str, dict[str, Any]]:
    """The isolation suite derives its rows in code from one lifecycle row of `path`."""
    from interop.suites.isolation.scenarios import load_sets

    return {case.id: case.raw for found in load_sets([path]) for case in found.cases}


def _set_rows(
    suite: str, entry: dict[str, Any], root: Path, notes: list[str]
) -> dict[str, dict[str, Any]]:
    """The raw rows of one report set, by id. A set built in code (its `file` a Python
    module: the auth suite) has its rows in the report (id and expectation); a row the
    file does not hold falls back to the report's, with a note."""
    name = f"{suite}/{entry['name']}"
    listed = {str(r["id"]): dict(r) for r in entry.get("rows", [])}
    path = root / str(entry.get("file", ""))
    if str(entry.get("file", "")).endswith(".py"):
        if not path.is_file():
            notes.append(f"{name}: {entry.get('file')} is missing; its rows are skipped")
            return {}
        return listed
    if not path.is_file():
        notes.append(f"{name}: {entry.get('file')} is missing; its rows are skipped")
        return {}
    try:
        rows = _isolation_rows(path) if suite == "isolation" else _file_rows(path)
    except (ValueError, KeyError, OSError) as problem:
        notes.append(f"{name}: {entry.get('file')} unreadable ({problem}); its rows are skipped")
        return {}
    missing = sorted(set(listed) - set(rows))
    if missing:
        notes.append(
            f"{name}: {len(missing)} rows not in {entry.get('file')} (e.g. {missing[0]}); "
            "their features come from the report's row only"
        )
    return {row_id: rows.get(row_id, listed[row_id]) for row_id in listed}


def _row_statuses(
    combination: dict[str, Any], set_ids: dict[str, list[str]]
) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(set name, row id, status, the report's row or {}) for every row of one combination."""
    for set_name, result in sorted(combination.get("results", {}).items()):
        whole = {row["id"]: row for row in result.get("rows", [])}
        ids = set_ids.get(set_name, [])
        digests = result.get("digests", [])
        for index, row_id in enumerate(ids):
            if row_id in whole:
                yield set_name, row_id, str(whole[row_id].get("status")), whole[row_id]
            elif index < len(digests) and digests[index] is not None:
                yield set_name, row_id, "passed", {}
        for row_id in sorted(set(whole) - set(ids)):
            yield set_name, row_id, str(whole[row_id].get("status")), whole[row_id]


def _verdict(statuses: set[str]) -> str:
    """For a feature, the statuses of its exercising rows; for a requirement, its
    features' verdicts: failed if any failed, else undetermined if a failure could be
    charged to no side, else passed if any passed, else untested."""
    for status in ("failed", "undetermined", "passed"):
        if status in statuses:
            return status
    return "untested"


def _failing_with_every_client(
    document: dict[str, Any], set_ids: dict[str, dict[str, list[str]]]
) -> set[tuple[str, ...]]:
    """The rows that failed (or failed as known) with every client, at least two, that
    ran them against one server in one transport and mode: (suite, set, row, server,
    transport, auth). There the server is the common factor, and its record cannot
    blame a client (docs/blame.md)."""
    ran: dict[tuple[str, ...], dict[str, bool]] = {}
    for combination in document.get("combinations", []):
        suite = str(combination["suite"])
        for set_name, row_id, status, _ in _row_statuses(combination, set_ids.get(suite, {})):
            if status not in _EXERCISED:
                continue
            place: tuple[str, ...] = (suite, set_name, row_id, str(combination["server"]))
            place += (str(combination["transport"]), str(combination["auth"]))
            ran.setdefault(place, {})[str(combination["client"])] = status != "passed"
    return {p for p, clients in ran.items() if len(clients) >= 2 and all(clients.values())}


def coverage(document: dict[str, Any], root: Path) -> dict[str, Any]:
    """Per adapter and role, each feature and requirement `passed`, `failed` or `untested`
    over the rows of `document` (a report, reportVersion 3); `root` is the repository
    root the sets' `file`s are relative to. Deterministic: sorted keys and lists."""
    table = load_requirements()
    notes: list[str] = []
    row_features: dict[tuple[str, str], dict[str, set[str]]] = {}
    set_ids: dict[str, dict[str, list[str]]] = {}
    for entry in document.get("sets", []):
        suite = str(entry["suite"])
        rows = _set_rows(suite, entry, root, notes)
        row_features[(suite, entry["name"])] = {
            row_id: features(suite, row) for row_id, row in rows.items()
        }
        set_ids.setdefault(suite, {})[entry["name"]] = [str(r["id"]) for r in entry.get("rows", [])]
    # (adapter, role) -> feature -> statuses of the exercising rows, and the requirements
    # a failed row's rules charge to a side (docs/blame.md): failed, or undetermined
    seen: dict[tuple[str, str], dict[str, set[str]]] = {}
    charged: dict[tuple[str, str], dict[str, str]] = {}
    contract: dict[tuple[str, str], int] = {}
    charges: list[dict[str, Any]] = []
    adapters: set[str] = set()
    adapters.update(str(a) for a in _adapter_names(document))
    all_features: set[str] = {f for entry in table for f in entry["features"]}
    requirement_features = {entry["id"]: set(entry["features"]) for entry in table}
    server_wide = _failing_with_every_client(document, set_ids)
    for combination in document.get("combinations", []):
        suite = str(combination["suite"])
        client, server = str(combination["client"]), str(combination["server"])
        adapters.update((client, server))
        sides = {"client": client, "server": server}
        extra = {f"transport:{combination['transport']}", f"auth:{combination['auth']}"}
        errors = list(combination.get("errors", []))
        for set_name, row_id, status, row in _row_statuses(combination, set_ids.get(suite, {})):
            known = row_features.get((suite, set_name), {})
            if row_id not in known:
                continue
            names = (known[row_id] | extra) & VOCABULARY
            all_features |= names
            if status not in _EXERCISED:
                continue
            credited = dict(sides)  # the sides this row counts as passed for
            if status in ("failed", "known-failing"):
                exercised = {r for r, fs in requirement_features.items() if fs & names}
                transport, auth = str(combination["transport"]), str(combination["auth"])
                place: tuple[str, ...] = (suite, set_name, row_id, server, transport, auth)
                for found in row_rules(row, errors):
                    rule = placed(found, row, sides, place in server_wide)
                    wanted = exercised if rule.requirements == ("*",) else set(rule.requirements)
                    reqs = sorted(wanted & exercised)
                    judged = {"client": ["client"], "server": ["server"]}.get(rule.judges, [])
                    if rule.judges == "either":
                        judged = ["client", "server"]
                    verdict = "undetermined" if rule.judges == "either" else "failed"
                    touched = names & {f for r in reqs for f in requirement_features[r]}
                    for role in judged:
                        credited.pop(role, None)
                        key = (sides[role], role)
                        for req in reqs:
                            if charged.setdefault(key, {}).get(req) != "failed":
                                charged[key][req] = verdict
                        bucket = seen.setdefault(key, {})
                        for name in touched:
                            bucket.setdefault(name, set()).add(verdict)
                        if not reqs and verdict == "failed":
                            contract[key] = contract.get(key, 0) + 1
                    charges.append(
                        {
                            "combination": _where(combination),
                            "suite": suite,
                            "set": set_name,
                            "row": row_id,
                            "rule": rule.name,
                            "judges": rule.judges,
                            "adapters": sorted({sides[r] for r in judged}),
                            "requirements": reqs,
                            "basis": rule.basis,
                            "known": status == "known-failing",
                        }
                    )
            for role, adapter in credited.items():
                bucket = seen.setdefault((adapter, role), {})
                for name in names:
                    bucket.setdefault(name, set()).add("passed")
    for row_set in row_features.values():
        for names in row_set.values():
            all_features |= names
    by_adapter: dict[str, Any] = {}
    for adapter in sorted(adapters):
        by_adapter[adapter] = {}
        for role in _ROLES:
            bucket = seen.get((adapter, role), {})
            against = charged.get((adapter, role), {})
            feature_status = {name: _verdict(bucket.get(name, set())) for name in all_features}
            # a requirement fails only where a rule charged it; its features give
            # passed or untested (a failed feature may belong to another rule)
            requirement_status = {
                entry["id"]: against.get(entry["id"])
                or _verdict({feature_status[f] for f in entry["features"]} & {"passed"})
                for entry in table
            }
            by_adapter[adapter][role] = {
                "contractFailures": contract.get((adapter, role), 0),
                "features": dict(sorted(feature_status.items())),
                "requirements": dict(sorted(requirement_status.items())),
            }
    result: dict[str, Any] = {
        "byAdapter": by_adapter,
        "charges": [
            dict(sorted(c.items()))
            for c in sorted(
                charges, key=lambda c: (c["suite"], c["combination"], c["set"], c["row"], c["rule"])
            )
        ],
        "features": sorted(all_features),
    }
    if notes:
        result["notes"] = sorted(notes)
    result["profiles"] = profile_verdicts(by_adapter, load_profiles())
    result["requirements"] = [_requirement_summary(e) for e in table]
    return result


def _where(combination: dict[str, Any]) -> str:
    """A charge's `combination`: `client->server/transport/auth`."""
    return (
        f"{combination['client']}->{combination['server']}/{combination['transport']}/"
        f"{combination['auth']}"
    )


def charges_of(
    document: dict[str, Any], combination: dict[str, Any], set_name: str, row_id: Any
) -> list[dict[str, Any]]:
    """What the report's coverage charged one row of one combination with."""
    coverage = document.get("coverage")
    charges = coverage.get("charges") if isinstance(coverage, dict) else None
    place = (combination["suite"], _where(combination), set_name, row_id)
    return [
        c
        for c in (charges if isinstance(charges, list) else [])
        if isinstance(c, dict)
        and (c.get("suite"), c.get("combination"), c.get("set"), c.get("row")) == place
    ]


def _adapter_names(document: dict[str, Any]) -> list[str]:
    """The adapters a report names (`adapters` may be a list of names or of objects)."""
    adapters = document.get("adapters")
    names: list[str] = []
    if isinstance(adapters, dict):
        names = [str(k) for k in adapters]
    elif isinstance(adapters, list):
        for item in adapters:
            if isinstance(item, str):
                names.append(item)
            elif isinstance(item, dict) and isinstance(item.get("name"), str):
                names.append(item["name"])
    return names


# ---------------------------------------------------------------------------------------
# Terminal rendering


def coverage_lines(result: dict[str, Any]) -> list[str]:
    """Per adapter and role: requirements passed/failed/untested, the failed MUST
    requirements on a line of their own, then the failed SHOULD/MAY ones."""
    levels = {r["id"]: r["level"] for r in result.get("requirements", [])}
    lines: list[str] = []
    for adapter, roles in sorted(result.get("byAdapter", {}).items()):
        for role in _ROLES:
            statuses = roles.get(role, {}).get("requirements", {})
            counts = {s: sum(1 for v in statuses.values() if v == s) for s in _STATES}
            if counts["untested"] == len(statuses):  # a role the run never gave it
                continue
            lines.append(
                f"coverage {adapter} as {role}: {counts['passed']} passed, "
                f"{counts['failed']} failed, {counts['undetermined']} undetermined, "
                f"{counts['untested']} untested of {len(statuses)} requirements"
            )
            profiles = profile_line(result.get("profiles", {}), statuses, adapter, role)
            if profiles:
                lines.append(profiles)
            failed = sorted(i for i, v in statuses.items() if v == "failed")
            must = [i for i in failed if levels.get(i, "").startswith("MUST")]
            other = [f"{i} ({levels.get(i, '?')})" for i in failed if i not in must]
            if must:
                lines.append(f"  MUST failed: {', '.join(must)}")
            if other:
                lines.append(f"  SHOULD/MAY failed: {', '.join(other)}")
            unplaced = sorted(i for i, v in statuses.items() if v == "undetermined")
            if unplaced:
                lines.append(
                    f"  undetermined (a failure the evidence cannot place on client or server): "
                    f"{', '.join(unplaced)}"
                )
            contract = roles.get(role, {}).get("contractFailures", 0)
            if contract:
                lines.append(
                    f"  contract failures (rows failed on no protocol requirement): {contract}"
                )
            untested = sorted(i for i, v in statuses.items() if v == "untested")
            if untested:
                lines.append(f"  untested: {', '.join(untested)}")
    for note in result.get("notes", []):
        lines.append(f"coverage note: {note}")
    return lines


_STATES = ("passed", "failed", "undetermined", "untested")
