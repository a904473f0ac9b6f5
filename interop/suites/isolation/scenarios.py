"""The isolation suite's cases, derived in code from one upstream lifecycle row.

The upstream isolation driver takes the lifecycle row
`intercept-content-upload-before-send` (an upload, then one intercept that
is released, received and accepted), removes the event's items (the capture
origin's refs mean nothing to the event server) and sends the upload to an
independent origin instead. We do the same per case, with ids and bytes of
our own, and write every expectation by hand (docs/ISOLATION.md). The row's
request, response and step order are taken from the vector; a vector whose
row no longer has that shape, or whose expectation no longer agrees with
ours, is refused rather than silently followed.
"""

from __future__ import annotations

import base64
import copy
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.jsonvalue import first_difference, shown
from interop.suites.base import ScenarioError, set_file, write_set_file
from interop.suites.lifecycle.scenarios import LifecycleScenario, load_set

SET = "isolation"
SOURCE_ROW = "intercept-content-upload-before-send"
SOURCE_OPS = ["upload", "send", "wait", "release", "receive", "accept"]
ALIAS = "iso-body"  # the upload step's local alias (no event refers to it)
UPLOAD_TIMEOUT_MS = 5000
UPLOAD_MAX_BYTES = 1024 * 1024
REDIRECT_STATUS = 307  # keeps the method and the body: a follower would re-send the bytes

# Origins: where a case's upload goes (the harness serves each; docs/ISOLATION.md).
PLAIN = "plain"  # plain HTTP capture on loopback
TLS = "tls"  # HTTPS capture that requests a client certificate
REDIRECT = "redirect"  # answers 307 to a second capture that must receive nothing


@dataclass(frozen=True)
class Case:
    """One row: where its upload goes, what the event server does, what the client reports."""

    id: str
    origin: str
    cookie: bool  # the event server (a relay in front of it) sets a cookie on its answers
    upload_status: int  # what the origin answers a clean upload, so what the client reports
    transports: tuple[str, ...]
    inapplicable_reason: str | None = None
    what: str = ""

    @property
    def body(self) -> bytes:
        """This case's upload bytes: our own, binary (NUL, 0xff), different per case."""
        return b"ahp-interop isolation " + self.id.encode() + b"\x00\xff" + bytes(range(0, 256, 7))

    @property
    def request_id(self) -> str:
        return f"{self.id}:a"

    @property
    def priming_id(self) -> str:
        return f"{self.id}:cookie"


CASES: tuple[Case, ...] = (
    Case(
        "iso-capture-plain",
        PLAIN,
        cookie=False,
        upload_status=201,
        transports=("http", "stdio"),
        what="plain HTTP capture origin, no upload credential configured",
    ),
    Case(
        "iso-capture-tls-client-certificate",
        TLS,
        cookie=False,
        upload_status=201,
        transports=("http", "stdio"),
        what="HTTPS capture origin that requests a client certificate",
    ),
    Case(
        "iso-capture-after-event-cookie",
        PLAIN,
        cookie=True,
        upload_status=201,
        transports=("http",),
        inapplicable_reason="over stdio no HTTP event server answers, so none can set a cookie",
        what="the event server sets a cookie for 127.0.0.1 before the upload",
    ),
    Case(
        "iso-capture-redirect",
        REDIRECT,
        cookie=False,
        upload_status=REDIRECT_STATUS,
        transports=("http", "stdio"),
        what="the upload origin answers 307 to a second capture",
    ),
)


def _state() -> dict[str, Any]:
    """The published state of every case's intercept, written by hand from the response:
    replace the input with {value: settled}, a message, allow."""
    return {
        "decision": "allow",
        "executed": True,
        "input": {"value": "settled"},
        "messages": ["published"],
    }


def expected(case: Case) -> dict[str, Any]:
    """What the client must report for `case` (by hand, never read from the vector)."""
    published = [case.priming_id, case.request_id] if case.cookie else [case.request_id]
    return {
        "published": published,
        "cancelled": [],
        "ignored": [],
        "states": {rid: _state() for rid in published},
        "observations": [],
        "uploadStatuses": [case.upload_status],
    }


@dataclass(frozen=True)
class IsolationCase:
    """One case as a lifecycle row: `raw` as the client gets it (minus the upload
    block's endpoint, filled in per run), and the row the event part is judged on."""

    case: Case
    raw: dict[str, Any]

    @property
    def id(self) -> str:
        return self.case.id

    @property
    def expected(self) -> dict[str, Any]:
        return dict(self.raw["expected"])

    def row(self, upload: dict[str, Any], *, blind: bool) -> dict[str, Any]:
        """The scenario row a client runs: the upload step carries `upload`, its own
        upload block (endpoint, limits, and for https its CA; never a credential)."""
        raw = copy.deepcopy(self.raw)
        for step in raw["steps"]:
            if step["op"] == "upload":
                step["upload"] = copy.deepcopy(upload)
        if blind:
            raw.pop("expected")
        return raw

    def event_part(self) -> LifecycleScenario:
        """The row judged by the lifecycle verifier: no upload step, no upload statuses
        (the upload went elsewhere; the capture's checks judge it)."""
        raw = copy.deepcopy(self.raw)
        raw["steps"] = [s for s in raw["steps"] if s["op"] != "upload"]
        raw["expected"]["uploadStatuses"] = []
        return LifecycleScenario(self.id, raw)


def _retarget(message: dict[str, Any], rid: str, call: str | None = None) -> dict[str, Any]:
    """A copy of an upstream request or response under our id (and the event's id)."""
    copied = copy.deepcopy(message)
    copied["id"] = rid
    params = copied.get("params")
    if isinstance(params, dict):
        params.pop("subscriptionId", None)
        event = params.get("event")
        if isinstance(event, dict):
            event["id"] = rid
            event.pop("items", None)
            if call is not None and isinstance(event.get("call"), dict):
                event["call"]["id"] = call
    return copied


def derive(source: LifecycleScenario, case: Case) -> IsolationCase:
    """`case` as a lifecycle row built from the upstream row `source`, as upstream does:
    the event's items removed, the upload step with bytes of our own; the cookie case
    first publishes one more intercept (its answer carries the cookie)."""
    request = source.raw["requests"]["a"]
    response = source.raw["responses"]["a"]
    requests = {"a": _retarget(request, case.request_id)}
    responses = {"a": _retarget(response, case.request_id)}
    steps: list[dict[str, Any]] = []
    if case.cookie:
        requests["cookie"] = _retarget(request, case.priming_id, call="call-cookie")
        responses["cookie"] = _retarget(response, case.priming_id)
        steps += [
            {"op": "send", "key": "cookie", "slot": "cookie"},
            {"op": "wait", "key": "cookie", "count": 1},
            {"op": "release", "key": "cookie"},
            {"op": "receive", "slot": "cookie"},
            {"op": "accept", "key": "cookie"},
        ]
    body = case.body
    for step in source.steps:
        step = copy.deepcopy(step)
        if step["op"] == "upload":
            step.update(
                ref=ALIAS,
                bodyBase64=base64.b64encode(body).decode("ascii"),
                size=len(body),
                sha256=hashlib.sha256(body).hexdigest(),
            )
        steps.append(step)
    raw = {
        "id": case.id,
        "requests": requests,
        "responses": responses,
        "steps": steps,
        "expected": expected(case),
    }
    return IsolationCase(case, raw)


def _check_source(path: Path, source: LifecycleScenario) -> None:
    """The upstream row still has the shape the derivation assumes, and its own
    expectation (under our ids) is our hand-written plain case's."""
    where = f"{path}: scenario {SOURCE_ROW!r}"
    ops = [s["op"] for s in source.steps]
    if (
        ops != SOURCE_OPS
        or set(source.raw["requests"]) != {"a"}
        or "a" not in source.raw.get("responses", {})
    ):
        raise ScenarioError(
            f"{where}: the isolation suite derives its cases from a row with one request 'a' "
            f"and the steps {', '.join(SOURCE_OPS)}; this one has {', '.join(ops)}"
        )
    plain = next(c for c in CASES if c.origin == PLAIN and not c.cookie)
    theirs = copy.deepcopy(source.expected)
    old = source.request_id("a")
    theirs["published"] = [plain.request_id if i == old else i for i in theirs["published"]]
    theirs["states"] = {
        (plain.request_id if k == old else k): v for k, v in theirs["states"].items()
    }
    found = first_difference(expected(plain), theirs)
    if found is not None:
        raise ScenarioError(
            f"{where}: its expectation no longer agrees with the suite's hand-written one at "
            f"{found[0]} (ours {shown(found[1], 80)}, the vector's {shown(found[2], 80)})"
        )


@dataclass(frozen=True)
class IsolationSet:
    name: str
    path: Path
    cases: tuple[IsolationCase, ...]
    document: dict[str, Any]

    @property
    def scenarios(self) -> tuple[IsolationCase, ...]:
        return self.cases

    def write(self, path: Path, rows: list[dict[str, Any]]) -> Path:
        return write_set_file(path, self.document, rows)


class IsolationSets(list[IsolationSet]):
    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "name": s.name,
                "file": set_file(s.path),
                "sha256": hashlib.sha256(s.path.read_bytes()).hexdigest(),
                "scenarios": len(s.cases),
                "rows": [(c.id, c.expected) for c in s.cases],
            }
            for s in self
        ]

    def row_count(self) -> int:
        return sum(len(s.cases) for s in self)


def load_sets(paths: list[Path]) -> IsolationSets:
    """The cases, from the one lifecycle file that holds the source row."""
    if len(paths) != 1:
        raise ScenarioError(
            f"the isolation suite derives its cases from one lifecycle file holding "
            f"{SOURCE_ROW!r}; {len(paths)} were given"
        )
    lifecycle = load_set(paths[0])
    source = next((s for s in lifecycle.scenarios if s.id == SOURCE_ROW), None)
    if source is None:
        raise ScenarioError(f"{paths[0]}: no scenario {SOURCE_ROW!r} to derive the cases from")
    _check_source(paths[0], source)
    cases = tuple(derive(source, case) for case in CASES)
    return IsolationSets([IsolationSet(SET, lifecycle.path, cases, {"version": 1})])
