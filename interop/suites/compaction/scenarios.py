"""The compaction suite's scenario files (docs/COMPACTION.md), loaded and checked.

A row is a run (`request`, `before`, `after`, `responseSequences`, `expected`,
`proof`) or a negative (`negative`, `expected: {error}`); in a set of the form
`host-plans` (upstream's case plans for a contract v1 host) a row is a case:
`before` and `after` lists of `{supplier, failurePolicy, effects}` and
`expected`. The shapes are `schemas/scenarios/compaction.schema.json`'s and
`compaction-host.schema.json`'s (`validate_document`); the checks here are what a
schema cannot say, the file's consistency. None applies a protocol rule.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file
from interop.suites.base import ScenarioError, set_file, write_set_file
from interop.suites.scenario_schema import row_where, validate_document

SCHEMA = "compaction"  # schemas/scenarios/compaction.schema.json: runs and negatives
HOST_SCHEMA = "compaction-host"  # schemas/scenarios/compaction-host.schema.json
TRANSPORTS = ("http", "stdio")
ANSWER_KEYS = ("expected", "proof")
HOST_PLANS = "host-plans"  # a set of upstream's case plans for a contract v1 host
BOUNDARIES = ("before", "after")


@dataclass(frozen=True)
class CompactionRow:
    """A compaction row, its parts read once when it is made (the loader has checked them
    against schemas/scenarios/compaction.schema.json)."""

    id: str
    raw: dict[str, Any]  # the row as written, kept to write it back out
    negative: dict[str, Any] | None = field(init=False)
    expected: dict[str, Any] = field(init=False)
    proof: dict[str, Any] = field(init=False)
    transports: tuple[str, ...] = field(init=False)
    inapplicable_reason: str = field(init=False)
    response_sequences: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        raw = self.raw
        made = {
            "negative": raw.get("negative") if isinstance(raw.get("negative"), dict) else None,
            "expected": dict(raw["expected"]),
            "proof": dict(raw.get("proof", {})),
            "transports": tuple(raw.get("transports", TRANSPORTS)),
            "inapplicable_reason": raw["inapplicableReason"]
            if isinstance(raw.get("inapplicableReason"), str)
            else "the row runs on another transport",
            "response_sequences": dict(raw.get("responseSequences", {})),
        }
        for name, value in made.items():
            object.__setattr__(self, name, value)

    def boundary_id(self, boundary: str) -> str:
        return f"{self.id}:{boundary}"

    def fault(self, boundary: str, call: int) -> str | None:
        sequence = self.response_sequences.get(boundary) or []
        if not sequence:
            return None
        entry = sequence[min(call, len(sequence) - 1)]
        return entry.get("fault") if isinstance(entry, dict) else None


def _unique(where: str, names: list[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ScenarioError(f"{where}: {what} {name!r} is used twice")
        seen.add(name)


def _check(
    path: Path, index: int, raw: dict[str, Any], seen: set[str], form: str | None = None
) -> CompactionRow:
    """One row the schema passed, with what it cannot say: an id used once, a run's
    boundary ids, and names used once (a boundary's subscription ids; a case's
    suppliers)."""
    rid = raw["id"]
    where = row_where(path, index, raw)
    if rid in seen:
        raise ScenarioError(f"{where}: the id is used twice")
    seen.add(rid)
    if form == HOST_PLANS:
        _unique(where, [s["supplier"] for b in BOUNDARIES for s in raw[b]], "the supplier")
        return CompactionRow(rid, raw)
    if "negative" in raw:
        return CompactionRow(rid, raw)
    request = raw["request"]
    if request.get("id") != f"{rid}:before":
        raise ScenarioError(
            f"{where}: request.id: must be '{rid}:before' (the before boundary's request)"
        )
    if request["params"]["event"].get("id") != f"{rid}:before":
        raise ScenarioError(f"{where}: request.params.event.id: must be '{rid}:before'")
    for boundary in BOUNDARIES:
        _unique(where, [s["id"] for s in raw[boundary]], f"{boundary}: the subscription id")
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
    """A compaction file checked against its form's schema (`schemas/scenarios/`:
    `compaction-host.schema.json` for host plans, else `compaction.schema.json`), then
    row by row."""
    try:
        document = load_file(path)
    except (OSError, JsonError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    form = document.get("form") if isinstance(document, dict) else None
    validate_document(path, document, HOST_SCHEMA if form == HOST_PLANS else SCHEMA)
    seen: set[str] = set()
    rows = tuple(_check(path, i, r, seen, form) for i, r in enumerate(document["scenarios"]))
    return CompactionSet(path.name.removesuffix(".json"), path.resolve(), document, rows)


def load_sets(paths: list[Path]) -> CompactionSets:
    sets = CompactionSets(load_set(p) for p in paths)
    names = [s.name for s in sets]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ScenarioError(f"two scenario files share the name {twice[0]!r}; rename one")
    return sets
