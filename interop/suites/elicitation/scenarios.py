"""The elicitation suite's scenario files (docs/ELICITATION.md), loaded and checked.

A row is a wire row (`steps` of `upload` and `send`, `expected.steps` and
`expected.receipts`) or an atomic row (`atomic`, `responses`,
`expected.actual` and `expected.receipts`). The checks are about the file's
shape and consistency (an error names the file, the row and the field); they
apply no protocol rule.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file
from interop.suites.base import ScenarioError, set_file, write_set_file

TRANSPORTS = ("http", "stdio")
CREDENTIALS = ("upload", "unauthorized", "none")
OUTCOMES = ("accepted", "rejected")
ACTUAL_KEYS = ("request", "result", "published", "provenance")


@dataclass(frozen=True)
class ElicitationRow:
    id: str
    raw: dict[str, Any]

    @property
    def atomic(self) -> dict[str, Any] | None:
        value = self.raw.get("atomic")
        return value if isinstance(value, dict) else None

    @property
    def steps(self) -> list[dict[str, Any]]:
        return list(self.raw.get("steps", []))

    @property
    def expected(self) -> dict[str, Any]:
        return dict(self.raw["expected"])

    @property
    def transports(self) -> tuple[str, ...]:
        return tuple(self.raw.get("transports", TRANSPORTS))

    @property
    def inapplicable_reason(self) -> str:
        reason = self.raw.get("inapplicableReason")
        return reason if isinstance(reason, str) else "the row runs on another transport"

    def event_ids(self) -> set[str]:
        """The ids of every event this row sends (an atomic row: its two boundaries)."""
        if self.atomic is not None:
            return {f"{self.id}:request", f"{self.id}:result"}
        ids: set[str] = set()
        for step in self.steps:
            event = _event_of(step.get("message"))
            if isinstance(event, dict) and isinstance(event.get("id"), str):
                ids.add(event["id"])
        return ids


def _event_of(message: Any) -> Any:
    params = message.get("params") if isinstance(message, dict) else None
    return params.get("event") if isinstance(params, dict) else None


def _fail(where: str, what: str) -> ScenarioError:
    return ScenarioError(f"{where}: {what}")


def _check_receipts(where: str, receipts: Any) -> None:
    if not isinstance(receipts, list):
        raise _fail(where, "expected.receipts must be a list of {eventId, summary}")
    for index, receipt in enumerate(receipts):
        if (
            not isinstance(receipt, dict)
            or set(receipt) != {"eventId", "summary"}
            or not isinstance(receipt["eventId"], str)
            or not isinstance(receipt["summary"], dict)
        ):
            raise _fail(where, f"expected.receipts[{index}] must be exactly {{eventId, summary}}")


def _check_wire(where: str, raw: dict[str, Any]) -> None:
    steps, expected = raw.get("steps"), raw["expected"]
    if not isinstance(steps, list) or not steps:
        raise _fail(where, "a wire row needs a non-empty steps list")
    if set(expected) != {"steps", "receipts"}:
        raise _fail(where, "a wire row's expected has exactly steps and receipts")
    outcomes = expected["steps"]
    if not isinstance(outcomes, list) or len(outcomes) != len(steps):
        raise _fail(where, f"expected.steps must have one entry per step ({len(steps)})")
    for index, (step, outcome) in enumerate(zip(steps, outcomes, strict=True)):
        at = f"steps[{index}]"
        if not isinstance(step, dict) or step.get("op") not in ("upload", "send"):
            raise _fail(where, f"{at}: op must be upload or send")
        if not isinstance(outcome, dict) or outcome.get("op") != step["op"]:
            raise _fail(where, f"expected.steps[{index}] must name the same op as {at}")
        if step["op"] == "upload":
            if not isinstance(step.get("alias"), str) or not step["alias"]:
                raise _fail(where, f"{at}: an upload needs a non-empty alias")
            try:
                base64.b64decode(step.get("bodyBase64", ""), validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise _fail(where, f"{at}: bodyBase64 is not base64") from None
            if step.get("credential") not in CREDENTIALS:
                raise _fail(where, f"{at}: credential must be one of {', '.join(CREDENTIALS)}")
            if "sha256" in step and not isinstance(step["sha256"], str):
                raise _fail(where, f"{at}: sha256 (the declared digest) must be a string")
            if set(outcome) != {"op", "status"} or type(outcome["status"]) is not int:
                raise _fail(where, f"expected.steps[{index}] of an upload is {{op, status}}")
        else:
            if not isinstance(step.get("message"), dict):
                raise _fail(where, f"{at}: a send needs the JSON-RPC message object")
            if (
                set(outcome) != {"op", "outcome", "status"}
                or outcome["outcome"] not in OUTCOMES
                or type(outcome["status"]) is not int
            ):
                raise _fail(
                    where,
                    f"expected.steps[{index}] of a send is {{op, outcome: accepted|rejected, "
                    "status: <HTTP status>}",
                )
            if (outcome["outcome"] == "accepted") != (outcome["status"] == 200):
                raise _fail(where, f"expected.steps[{index}]: accepted goes with 200, only")
    _check_receipts(where, expected["receipts"])


def _check_atomic(where: str, rid: str, raw: dict[str, Any]) -> None:
    atomic, expected = raw["atomic"], raw["expected"]
    if not isinstance(atomic, dict) or set(atomic) != {
        "request",
        "userResult",
        "resultCapabilities",
    }:
        raise _fail(where, "atomic has exactly request, userResult and resultCapabilities")
    request = atomic["request"]
    if not isinstance(request, dict) or request.get("id") != f"{rid}:request":
        raise _fail(where, f"atomic.request must be the intercept request with id '{rid}:request'")
    event = _event_of(request)
    if not isinstance(event, dict) or event.get("id") != f"{rid}:request":
        raise _fail(where, f"atomic.request.params.event.id must be '{rid}:request'")
    if not isinstance(atomic["userResult"], dict):
        raise _fail(where, "atomic.userResult must be an MCP ElicitResult object")
    if not isinstance(atomic["resultCapabilities"], dict):
        raise _fail(where, "atomic.resultCapabilities must be a capabilities object")
    responses = raw.get("responses", {})
    allowed = {f"{rid}:request", f"{rid}:result"}
    if not isinstance(responses, dict) or set(responses) - allowed:
        raise _fail(where, f"responses may be keyed only {sorted(allowed)}")
    if set(expected) != {"actual", "receipts"}:
        raise _fail(where, "an atomic row's expected has exactly actual and receipts")
    actual = expected["actual"]
    if not isinstance(actual, dict) or set(actual) != set(ACTUAL_KEYS):
        raise _fail(where, f"expected.actual has exactly {', '.join(ACTUAL_KEYS)}")
    _check_receipts(where, expected["receipts"])


def _check(path: Path, index: int, raw: Any, seen: set[str]) -> ElicitationRow:
    where = f"{path}: scenarios[{index}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        raise _fail(where, "a row needs a non-empty string id")
    rid = raw["id"]
    where = f"{path}: row {rid!r}"
    if rid in seen:
        raise _fail(where, "the id is used twice")
    seen.add(rid)
    for transport in raw.get("transports", TRANSPORTS):
        if transport not in TRANSPORTS:
            raise _fail(where, f"transport {transport!r} is not http or stdio")
    if not isinstance(raw.get("expected"), dict):
        raise _fail(where, "expected must be an object")
    if ("atomic" in raw) == ("steps" in raw):
        raise _fail(where, "a row has either steps (a wire row) or atomic (an atomic row)")
    if "atomic" in raw:
        _check_atomic(where, rid, raw)
    else:
        if "responses" in raw:
            raise _fail(where, "a wire row scripts no responses (every accepted send is no-effect)")
        _check_wire(where, raw)
    return ElicitationRow(rid, raw)


@dataclass(frozen=True)
class ElicitationSet:
    name: str
    path: Path
    document: dict[str, Any]
    rows: tuple[ElicitationRow, ...]

    @property
    def scenarios(self) -> tuple[ElicitationRow, ...]:
        return self.rows

    def for_transport(self, transport: str) -> list[ElicitationRow]:
        return [r for r in self.rows if transport in r.transports]

    def write(self, path: Path, transport: str, *, server: bool, blind: bool = True) -> Path:
        """The file a process reads: only this transport's rows; the server's
        without `expected`; a client's without the server's scripted
        `responses`, and without `expected` too when the client is blind."""
        dropped = (
            {"expected"} if server else ({"responses", "expected"} if blind else {"responses"})
        )

        def rows() -> list[dict[str, Any]]:
            return [
                {k: v for k, v in r.raw.items() if k not in dropped}
                for r in self.for_transport(transport)
            ]

        path.parent.mkdir(parents=True, exist_ok=True)
        variant = (transport, server, blind)
        return write_set_file(path, self.document, rows, owner=self, variant=variant)

    def describe(self) -> dict[str, Any]:
        file = set_file(self.path)
        return {
            "name": self.name,
            "file": file,
            "sha256": hashlib.sha256(self.path.read_bytes()).hexdigest(),
            "scenarios": len(self.rows),
            "rows": [(r.id, r.raw["expected"]) for r in self.rows],
        }


class ElicitationSets(list[ElicitationSet]):
    def describe(self) -> list[dict[str, Any]]:
        return [s.describe() for s in self]

    def row_count(self) -> int:
        return sum(len(s.rows) for s in self)


def load_set(path: Path) -> ElicitationSet:
    try:
        document = load_file(path)
    except (OSError, JsonError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != 1:
        raise ScenarioError(f"{path}: expected an object with 'version': 1")
    if document.get("suite") != "elicitation":
        raise ScenarioError(f"{path}: suite {document.get('suite')!r} is not elicitation")
    source = document.get("authenticatedSource")
    if not isinstance(source, str) or not source:
        raise ScenarioError(f"{path}: authenticatedSource must be a non-empty string")
    raw = document.get("scenarios")
    if not isinstance(raw, list) or not raw:
        raise ScenarioError(f"{path}: 'scenarios' must be a non-empty array")
    seen: set[str] = set()
    rows = tuple(_check(path, i, r, seen) for i, r in enumerate(raw))
    owners: dict[str, str] = {}
    for row in rows:
        for event_id in row.event_ids():
            if owners.setdefault(event_id, row.id) != row.id:
                raise ScenarioError(
                    f"{path}: rows {owners[event_id]!r} and {row.id!r} both send event "
                    f"{event_id!r}; every row needs ids of its own"
                )
    return ElicitationSet(path.name.removesuffix(".json"), path.resolve(), document, rows)


def load_sets(paths: list[Path]) -> ElicitationSets:
    sets = ElicitationSets(load_set(p) for p in paths)
    names = [s.name for s in sets]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ScenarioError(f"two scenario files share the name {twice[0]!r}; rename one")
    return sets
