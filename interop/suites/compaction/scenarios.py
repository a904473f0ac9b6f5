"""The compaction suite's scenario files (docs/COMPACTION.md), loaded and checked.

A row is a run (`request`, `before`, `after`, `responseSequences`, `expected`,
`proof`) or a negative (`negative`, `expected: {error}`); in a set of the form
`host-plans` (upstream's case plans for a contract v1 host) a row is a case:
`before` and `after` lists of `{supplier, failurePolicy, effects}` and
`expected`. The checks are about the file's shape and consistency; they apply
no protocol rule.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file
from interop.suites.base import ScenarioError, set_file, write_set_file

TRANSPORTS = ("http", "stdio")
ANSWER_KEYS = ("expected", "proof")
EXPECTED_KEYS = (
    "applied",
    "instructions",
    "summary",
    "execution",
    "provenance",
    "before",
    "after",
)
BOUNDARY_KEYS = ("called", "failures", "observations")
FAULTS = ("server-error", "malformed", "timeout")
HOST_PLANS = "host-plans"  # a set of upstream's case plans for a contract v1 host
HOST_EXPECTED_KEYS = ("instructions", "summary", "generated", "applied", "failures", "seen")
BOUNDARIES = ("before", "after")


@dataclass(frozen=True)
class CompactionRow:
    id: str
    raw: dict[str, Any]

    @property
    def negative(self) -> dict[str, Any] | None:
        value = self.raw.get("negative")
        return value if isinstance(value, dict) else None

    @property
    def expected(self) -> dict[str, Any]:
        return dict(self.raw["expected"])

    @property
    def proof(self) -> dict[str, Any]:
        return dict(self.raw.get("proof", {}))

    @property
    def transports(self) -> tuple[str, ...]:
        return tuple(self.raw.get("transports", TRANSPORTS))

    @property
    def inapplicable_reason(self) -> str:
        reason = self.raw.get("inapplicableReason")
        return reason if isinstance(reason, str) else "the row runs on another transport"

    def boundary_id(self, boundary: str) -> str:
        return f"{self.id}:{boundary}"

    def fault(self, boundary: str, call: int) -> str | None:
        sequence = self.raw.get("responseSequences", {}).get(boundary) or []
        if not sequence:
            return None
        entry = sequence[min(call, len(sequence) - 1)]
        return entry.get("fault") if isinstance(entry, dict) else None


def _fail(where: str, what: str) -> ScenarioError:
    return ScenarioError(f"{where}: {what}")


def _check_subscriptions(where: str, raw: Any, name: str) -> None:
    if not isinstance(raw, list):
        raise _fail(where, f"{name} must be a list of subscriptions")
    seen: set[str] = set()
    for index, sub in enumerate(raw):
        at = f"{name}[{index}]"
        if not isinstance(sub, dict) or not isinstance(sub.get("id"), str) or not sub["id"]:
            raise _fail(where, f"{at} needs a non-empty string id")
        if sub["id"] in seen:
            raise _fail(where, f"{at}: the id {sub['id']!r} is used twice in {name}")
        seen.add(sub["id"])
        if sub.get("mode") not in ("intercept", "observe"):
            raise _fail(where, f"{at}: mode must be intercept or observe")
        if sub["mode"] == "observe" and ("failurePolicy" in sub or "timeoutMs" in sub):
            raise _fail(where, f"{at}: an observer carries neither failurePolicy nor timeoutMs")
        if sub["mode"] == "intercept" and sub.get("failurePolicy") not in (
            "fail-open",
            "fail-closed",
        ):
            raise _fail(where, f"{at}: an intercept subscription needs its failurePolicy")


def _check_host_row(where: str, raw: dict[str, Any]) -> None:
    """A host-plans row's shape: `before` and `after` lists of `{supplier,
    failurePolicy, effects}` and `expected` (HOST_EXPECTED_KEYS). No protocol rule."""
    suppliers: set[str] = set()
    for boundary in BOUNDARIES:
        plan = raw.get(boundary)
        if not isinstance(plan, list):
            raise _fail(where, f"{boundary} must be a list of suppliers")
        for index, supplier in enumerate(plan):
            at = f"{where}: {boundary}[{index}]"
            if not isinstance(supplier, dict) or set(supplier) != {
                "supplier",
                "failurePolicy",
                "effects",
            }:
                raise ScenarioError(f"{at}: has exactly supplier, failurePolicy and effects")
            name = supplier["supplier"]
            if not isinstance(name, str) or not name or name in suppliers:
                raise ScenarioError(f"{at}: supplier must be a non-empty name used once")
            suppliers.add(name)
            if supplier["failurePolicy"] not in ("fail-open", "fail-closed"):
                raise ScenarioError(f"{at}: failurePolicy is fail-open or fail-closed")
            if not isinstance(supplier["effects"], list):
                raise ScenarioError(f"{at}: effects must be a list (the supplier's reply)")
    expected = raw.get("expected")
    if not isinstance(expected, dict) or set(expected) != set(HOST_EXPECTED_KEYS):
        raise _fail(where, f"expected has exactly {', '.join(HOST_EXPECTED_KEYS)}")
    if not isinstance(expected["seen"], list) or not all(
        isinstance(s, str) for s in expected["seen"]
    ):
        raise _fail(where, "expected.seen is the list of texts each call carried")


def _check(
    path: Path, index: int, raw: Any, seen: set[str], form: str | None = None
) -> CompactionRow:
    where = f"{path}: scenarios[{index}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        raise _fail(where, "a row needs a non-empty string id")
    rid = raw["id"]
    where = f"{path}: row {rid!r}"
    if rid in seen:
        raise _fail(where, "the id is used twice")
    seen.add(rid)
    if form == HOST_PLANS:
        _check_host_row(where, raw)
        return CompactionRow(rid, raw)
    for transport in raw.get("transports", TRANSPORTS):
        if transport not in TRANSPORTS:
            raise _fail(where, f"transport {transport!r} is not http or stdio")
    expected = raw.get("expected")
    if not isinstance(expected, dict):
        raise _fail(where, "expected must be an object")
    if "negative" in raw:
        if not isinstance(raw["negative"], dict):
            raise _fail(where, "negative must be a JSON-RPC request object")
        if set(expected) != {"error"} or type(expected["error"]) is not int:
            raise _fail(where, "a negative's expected is {error: <JSON-RPC error code>}")
        return CompactionRow(rid, raw)
    request = raw.get("request")
    if not isinstance(request, dict) or request.get("id") != f"{rid}:before":
        raise _fail(where, f"request must be the before intercept request with id '{rid}:before'")
    event = (
        request.get("params", {}).get("event") if isinstance(request.get("params"), dict) else None
    )
    if not isinstance(event, dict) or event.get("id") != f"{rid}:before":
        raise _fail(where, f"request.params.event.id must be '{rid}:before'")
    if not isinstance(event.get("items"), list) or not event["items"]:
        raise _fail(where, "the before event needs at least one item (the context to compact)")
    for name in ("before", "after"):
        _check_subscriptions(where, raw.get(name), name)
    sequences = raw.get("responseSequences")
    if not isinstance(sequences, dict) or set(sequences) - {"before", "after"}:
        raise _fail(where, "responseSequences has only before and after lists")
    for name, sequence in sequences.items():
        if not isinstance(sequence, list) or not all(isinstance(e, dict) for e in sequence):
            raise _fail(where, f"responseSequences.{name} must be a list of objects")
        for entry in sequence:
            if "fault" in entry and entry["fault"] not in FAULTS:
                raise _fail(where, f"fault {entry['fault']!r} is not one of {', '.join(FAULTS)}")
    if set(expected) != set(EXPECTED_KEYS):
        raise _fail(where, f"expected has exactly {', '.join(EXPECTED_KEYS)}")
    for name in ("before", "after"):
        if not isinstance(expected[name], dict) or set(expected[name]) != set(BOUNDARY_KEYS):
            raise _fail(where, f"expected.{name} has exactly {', '.join(BOUNDARY_KEYS)}")
    proof = raw.get("proof")
    if not isinstance(proof, dict) or set(proof) != {"before", "after", "observations"}:
        raise _fail(where, "proof has exactly before, after and observations lists")
    if not all(isinstance(proof[k], list) for k in proof):
        raise _fail(where, "proof.before, proof.after and proof.observations are lists")
    if expected["applied"] is not True and proof["after"] and not expected["after"]["failures"]:
        raise _fail(
            where,
            "a run that does not compact has no after calls, unless an after failure stopped it",
        )
    return CompactionRow(rid, raw)


@dataclass(frozen=True)
class CompactionSet:
    name: str
    path: Path
    document: dict[str, Any]
    rows: tuple[CompactionRow, ...]

    @property
    def scenarios(self) -> tuple[CompactionRow, ...]:
        return self.rows

    @property
    def host_plans(self) -> bool:
        """Upstream's case plans for a contract v1 host (suites/compaction/host.py)."""
        return self.document.get("form") == HOST_PLANS

    def for_transport(self, transport: str) -> list[CompactionRow]:
        return [r for r in self.rows if transport in r.transports]

    def write(self, path: Path, transport: str, *, blind: bool) -> Path:
        def rows() -> list[dict[str, Any]]:
            return [
                {k: v for k, v in r.raw.items() if not blind or k not in ANSWER_KEYS}
                for r in self.for_transport(transport)
            ]

        path.parent.mkdir(parents=True, exist_ok=True)
        return write_set_file(path, self.document, rows, owner=self, variant=(transport, blind))

    def describe(self) -> dict[str, Any]:
        file = set_file(self.path)
        return {
            "name": self.name,
            "file": file,
            "sha256": hashlib.sha256(self.path.read_bytes()).hexdigest(),
            "scenarios": len(self.rows),
            "rows": [(r.id, r.raw["expected"]) for r in self.rows],
        }


class CompactionSets(list[CompactionSet]):
    def describe(self) -> list[dict[str, Any]]:
        return [s.describe() for s in self]

    def row_count(self) -> int:
        return sum(len(s.rows) for s in self)


def load_set(path: Path) -> CompactionSet:
    try:
        document = load_file(path)
    except (OSError, JsonError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != 1:
        raise ScenarioError(f"{path}: expected an object with 'version': 1")
    if document.get("suite", "compaction") != "compaction":
        raise ScenarioError(f"{path}: suite {document.get('suite')!r} is not compaction")
    raw = document.get("scenarios")
    if not isinstance(raw, list) or not raw:
        raise ScenarioError(f"{path}: 'scenarios' must be a non-empty array")
    form = document.get("form")
    if form not in (None, HOST_PLANS):
        raise ScenarioError(f"{path}: form {form!r} is not {HOST_PLANS!r} (or absent: our rows)")
    seen: set[str] = set()
    rows = tuple(_check(path, i, r, seen, form) for i, r in enumerate(raw))
    return CompactionSet(path.name.removesuffix(".json"), path.resolve(), document, rows)


def load_sets(paths: list[Path]) -> CompactionSets:
    sets = CompactionSets(load_set(p) for p in paths)
    names = [s.name for s in sets]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ScenarioError(f"two scenario files share the name {twice[0]!r}; rename one")
    return sets
