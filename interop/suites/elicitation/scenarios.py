"""The elicitation suite's scenario files (docs/ELICITATION.md), loaded and checked.

A row is a wire row (`steps` of `upload` and `send`, `expected.steps` and
`expected.receipts`) or an atomic row (`atomic`, `responses`,
`expected.actual` and `expected.receipts`). The file's shape is
`schemas/scenarios/elicitation.schema.json`'s (`validate_document`); the checks
here are what a schema cannot say, the file's consistency. An error names the
file, the row and the field; none applies a protocol rule.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file
from interop.suites.base import ScenarioError, set_file, write_set_file
from interop.suites.scenario_schema import row_where, validate_document

SCHEMA = "elicitation"  # schemas/scenarios/elicitation.schema.json: the format's shape
TRANSPORTS = ("http", "stdio")


@dataclass(frozen=True)
class ElicitationRow:
    """An elicitation row, its parts read once when it is made (the loader has checked them
    against schemas/scenarios/elicitation.schema.json)."""

    id: str
    raw: dict[str, Any]  # the row as written, kept to write it back out
    atomic: dict[str, Any] | None = field(init=False)
    steps: list[dict[str, Any]] = field(init=False)
    expected: dict[str, Any] = field(init=False)
    transports: tuple[str, ...] = field(init=False)
    inapplicable_reason: str = field(init=False)

    def __post_init__(self) -> None:
        raw = self.raw
        made = {
            "atomic": raw.get("atomic") if isinstance(raw.get("atomic"), dict) else None,
            "steps": list(raw.get("steps", [])),
            "expected": dict(raw["expected"]),
            "transports": tuple(raw.get("transports", TRANSPORTS)),
            "inapplicable_reason": raw["inapplicableReason"]
            if isinstance(raw.get("inapplicableReason"), str)
            else "the row runs on another transport",
        }
        for name, value in made.items():
            object.__setattr__(self, name, value)

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


def _check(path: Path, index: int, raw: dict[str, Any], seen: set[str]) -> ElicitationRow:
    """One row the schema passed, with what it cannot say: an id used once, one expected
    step per step naming the same op (a wire row), and the ids an atomic row's request
    and responses carry (its own)."""
    rid = raw["id"]
    where = row_where(path, index, raw)
    if rid in seen:
        raise ScenarioError(f"{where}: the id is used twice")
    seen.add(rid)
    expected = raw["expected"]
    if "atomic" not in raw:
        steps, outcomes = raw["steps"], expected["steps"]
        if len(outcomes) != len(steps):
            raise ScenarioError(
                f"{where}: expected.steps must have one entry per step ({len(steps)})"
            )
        for number, (step, outcome) in enumerate(zip(steps, outcomes, strict=True)):
            if outcome["op"] != step["op"]:
                raise ScenarioError(
                    f"{where}: expected.steps[{number}].op: must name the same op as "
                    f"steps[{number}] ({step['op']})"
                )
        return ElicitationRow(rid, raw)
    request = raw["atomic"]["request"]
    if request.get("id") != f"{rid}:request":
        raise ScenarioError(
            f"{where}: atomic.request.id: must be '{rid}:request' (the intercept request "
            "of the row's user.elicitation.request event)"
        )
    event = _event_of(request)
    if not isinstance(event, dict) or event.get("id") != f"{rid}:request":
        raise ScenarioError(f"{where}: atomic.request.params.event.id: must be '{rid}:request'")
    allowed = [f"{rid}:request", f"{rid}:result"]
    for key in raw.get("responses", {}):
        if key not in allowed:
            raise ScenarioError(
                f"{where}: responses: {key!r}: responses may be keyed only "
                f"{' or '.join(map(repr, allowed))}"
            )
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
    """An elicitation file checked against `schemas/scenarios/elicitation.schema.json`,
    then row by row, then across rows (no event id sent by two rows)."""
    try:
        document = load_file(path)
    except (OSError, JsonError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    validate_document(path, document, SCHEMA)
    seen: set[str] = set()
    rows = tuple(_check(path, i, r, seen) for i, r in enumerate(document["scenarios"]))
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
