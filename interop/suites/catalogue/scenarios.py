"""The catalogue suite's scenario files: the upstream format, loaded and checked as it is.

`{version: 1, suite?: "catalogue", scenarios: [{id, category, steps: [{op:
notify|rawNotify, message} | {op: register, registration, requirements,
context}], expected: {sent, registrations, deliveries}, requests, responses}]}`
(docs/CATALOGUE.md). The file's shape is `schemas/scenarios/catalogue.schema.json`'s
(`validate_document`); the checks here are what a schema cannot say, the file's
internal consistency. None applies a protocol rule.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file, strict_equal
from interop.suites.base import (
    MergeableSet,
    ScenarioError,
    identifiers,
    merged_runs,
    set_file,
    write_set_file,
)
from interop.suites.scenario_schema import row_where, validate_document

SCHEMA = "catalogue"  # schemas/scenarios/catalogue.schema.json: the format's shape
SEND_OPS = ("notify", "rawNotify")


REFUSED_NOTIFY = (
    "the project extension 'refused notify' (a client refuses to send a `notify` whose "
    "message is invalid: docs/CATALOGUE.md), which contract v1 does not define"
)


CHANGED_REDELIVERY = (
    "our reading of a redelivery whose content changed (lineage rule 1: docs/CATALOGUE.md); "
    "AHP-CORE-004 says a retry preserves event content, so a contract v1 client may refuse "
    "to send it"
)


@dataclass(frozen=True)
class CatalogueScenario:
    """A catalogue row, its parts read once when it is made (the loader has checked them against
    schemas/scenarios/catalogue.schema.json); `reading` is a reading of ours beyond what the
    spec says a receiver checks, that the row's verdict rests on (a contract v1 server is
    not held to it), or None."""

    id: str
    raw: dict[str, Any]  # the row as written, kept to write it back out
    category: str = field(init=False)
    steps: list[dict[str, Any]] = field(init=False)
    expected: dict[str, Any] = field(init=False)
    sent: list[dict[str, Any]] = field(init=False)
    deliveries: list[dict[str, Any]] = field(init=False)
    reading: str | None = field(init=False)

    def __post_init__(self) -> None:
        raw = self.raw
        made = {
            "category": str(raw["category"]),
            "steps": list(raw["steps"]),
            "expected": dict(raw["expected"]),
            "sent": list(raw["expected"]["sent"]),
            "deliveries": list(raw["expected"]["deliveries"]),
            "reading": raw.get("reading") if isinstance(raw.get("reading"), str) else None,
        }
        for name, value in made.items():
            object.__setattr__(self, name, value)

    @property
    def extension(self) -> str | None:
        """The project extension the row needs, or None for a contract v1 row: a `notify`
        the client must refuse to send (its message is invalid) is ours; contract v1
        sends only valid messages with `notify` and invalid ones with `rawNotify`."""
        notifications = [s for s in self.steps if s.get("op") in ("notify", "rawNotify")]
        if len(notifications) != len(self.sent):
            return REFUSED_NOTIFY
        seen: dict[str, Any] = {}
        for step in notifications:
            if step.get("op") != "notify":
                continue
            event = step.get("message", {}).get("params", {}).get("event", {})
            if not isinstance(event, dict) or not isinstance(event.get("id"), str):
                continue
            key = f"{event.get('source')}\n{event['id']}"  # an event's identity: (source, id)
            if key in seen and seen[key] != event:
                return CHANGED_REDELIVERY
            seen[key] = event
        return None


def _check(path: Path, index: int, raw: dict[str, Any], seen: set[str]) -> CatalogueScenario:
    """One row the schema passed, with what it cannot say: an id used once, and the
    expectation's lists against the steps (one delivery verdict per sent message, the
    sent messages the steps' own in step order, one registration verdict per register
    step)."""
    sid = raw["id"]
    where = row_where(path, index, raw)
    if sid in seen:
        raise ScenarioError(f"{where}: the id is used twice; ids must be unique in a file")
    seen.add(sid)
    steps = raw["steps"]
    messages = [(step["op"], step["message"]) for step in steps if step["op"] in SEND_OPS]
    registers = sum(1 for step in steps if step["op"] == "register")
    expected = raw["expected"]
    sent, deliveries = expected["sent"], expected["deliveries"]
    if len(deliveries) != len(sent):
        raise ScenarioError(
            f"{where}: expected.deliveries has {len(deliveries)} entries for "
            f"{len(sent)} sent messages; one verdict per sent message"
        )
    # sent: the steps' messages in order, every rawNotify one, a notify one only when sent
    cursor = 0
    for number, message in enumerate(sent):
        while cursor < len(messages) and not strict_equal(messages[cursor][1], message):
            if messages[cursor][0] == "rawNotify":
                raise ScenarioError(
                    f"{where}: expected.sent misses the rawNotify message of step "
                    f"{cursor} (rawNotify always sends)"
                )
            cursor += 1
        if cursor == len(messages):
            raise ScenarioError(
                f"{where}: expected.sent[{number}] is not a step's message, in step order"
            )
        cursor += 1
    if any(op == "rawNotify" for op, _ in messages[cursor:]):
        raise ScenarioError(f"{where}: expected.sent misses a rawNotify message")
    registrations = expected["registrations"]
    if len(registrations) != registers:
        raise ScenarioError(
            f"{where}: expected.registrations has {len(registrations)} entries for "
            f"{registers} register steps"
        )
    return CatalogueScenario(sid, raw)


@dataclass
class CatalogueSet(MergeableSet):
    name: str
    path: Path
    document: dict[str, Any]
    scenarios: list[CatalogueScenario]
    origins: dict[str, str] = field(default_factory=dict)  # row id -> set, when merged

    def write(self, path: Path, *, blind: bool) -> Path:
        """The file an adapter gets: every row, without `expected` when blind, and
        without `reading` (the harness's own note)."""
        dropped = {"expected", "reading"} if blind else {"reading"}

        def rows() -> list[dict[str, Any]]:
            return [{k: v for k, v in s.raw.items() if k not in dropped} for s in self.scenarios]

        path.parent.mkdir(parents=True, exist_ok=True)
        return write_set_file(path, self.document, rows, owner=self, variant=(blind,))

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "file": set_file(self.path),
            "sha256": hashlib.sha256(self.path.read_bytes()).hexdigest(),
            "scenarios": len(self.scenarios),
            "rows": [(row.id, row.raw["expected"]) for row in self.scenarios],
        }


class CatalogueSets(list[CatalogueSet]):
    def describe(self) -> list[dict[str, Any]]:
        from interop.suites.catalogue.probes import EXPECTED, SET

        probes: dict[str, Any] = {"name": SET, "file": "interop/suites/catalogue/probes.py"}
        probes.update(sha256="", scenarios=len(EXPECTED))
        return [*(s.describe() for s in self), {**probes, "rows": list(EXPECTED.items())}]

    def row_count(self) -> int:
        from interop.suites.catalogue.probes import EXPECTED

        return sum(len(s.scenarios) for s in self) + len(EXPECTED)

    def runs(self, *, apart: bool = False) -> list[CatalogueSet]:
        """The sets as a combination runs them: consecutive sets that name nothing
        alike (`merge_groups`: ids, events, sources, registrations) as one file, one
        server and one client run. Every row keeps its own set's name
        (`CatalogueSet.origin`) and is judged alone, as before. `apart`: each set in
        processes of its own (a contract v1 adapter takes part)."""
        return list(self) if apart else merged_runs(list(self), _names)


def _names(scenario_set: CatalogueSet) -> set[str]:
    return identifiers([s.raw for s in scenario_set.scenarios])  # row ids among them


def load_set(path: Path) -> CatalogueSet:
    """A catalogue file checked against `schemas/scenarios/catalogue.schema.json`, then
    row by row."""
    try:
        document = load_file(path)
    except (OSError, JsonError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    validate_document(path, document, SCHEMA)
    seen: set[str] = set()
    scenarios = [_check(path, i, raw, seen) for i, raw in enumerate(document["scenarios"])]
    return CatalogueSet(path.name.removesuffix(".json"), path.resolve(), document, scenarios)


def load_sets(paths: list[Path]) -> CatalogueSets:
    sets = CatalogueSets(load_set(p) for p in paths)
    names = [s.name for s in sets]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ScenarioError(f"two scenario files share the name {twice[0]!r}; rename one")
    return sets
