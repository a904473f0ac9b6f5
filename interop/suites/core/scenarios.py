"""The core suite's scenario files: loading, checking, and blind copies.

The shape is `schemas/scenarios/core.schema.json`'s (`validate_document`); the
checks here are what a schema cannot say (ids, I-JSON numbers, lone surrogates).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file
from interop.suites.base import (
    MergeableSet,
    ScenarioError,
    merged_runs,
    set_file,
    set_name,
    write_set_file,
)
from interop.suites.scenario_schema import row_where, validate_document

SCHEMA = "core"  # schemas/scenarios/core.schema.json: the format's shape
ANSWER_KEYS = ("expected", "expectError", "hostExpected", "tags")


@dataclass(frozen=True)
class Scenario:
    id: str
    request: dict[str, Any]
    response: Any
    expected: dict[str, Any] | None
    expect_error: bool
    host_expected: dict[str, Any] | None
    raw: dict[str, Any]  # the row as written, kept to write it back out
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScenarioSet(MergeableSet):
    """One scenario file under a short name (`core`, `upstream`, ...)."""

    name: str
    path: Path
    scenarios: tuple[Scenario, ...]
    document: dict[str, Any]
    # a run of several sets in one file (`CoreSets.runs`): each row's own set name
    origins: dict[str, str] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.scenarios]

    def by_id(self) -> dict[str, Scenario]:
        return {s.id: s for s in self.scenarios}

    def blind_document(self) -> dict[str, Any]:
        """The file without answers: what a blind client receives."""
        scenarios = [
            {k: v for k, v in s.raw.items() if k not in ANSWER_KEYS} for s in self.scenarios
        ]
        return {**self.document, "scenarios": scenarios}

    def write_blind(self, path: Path) -> Path:
        return write_set_file(
            path,
            self.document,
            lambda: self.blind_document()["scenarios"],
            owner=self,
            variant=("blind",),
        )

    def write_full(self, path: Path) -> Path:
        """The file with its answers (a merged run has no file of its own)."""
        return write_set_file(
            path, self.document, self.document["scenarios"], owner=self, variant=("full",)
        )


MAX_EXACT = 2**53 - 1  # the I-JSON profile of RFC 7493 (docs/scenarios.md, "Numbers")


def beyond_i_json(value: Any, path: str = "$") -> str | None:
    """The JSON path of the first number whose magnitude exceeds 2^53 - 1, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return path if abs(value) > MAX_EXACT else None
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        found = beyond_i_json(item, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}")
        if found is not None:
            return found
    return None


def _lone(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")  # refuses exactly the unpaired surrogates
    except UnicodeEncodeError:
        return True
    return False


def lone_surrogate(value: Any, path: str = "$") -> str | None:
    """The JSON path of the first string (value or key) with a lone surrogate, else None
    (Python's json keeps `\\ud800` as one unpaired code point; a pair decodes to one)."""
    if isinstance(value, str):
        return path if _lone(value) else None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = lone_surrogate(item, f"{path}[{index}]")
            if found is not None:
                return found
    if isinstance(value, dict):
        for key, item in value.items():
            if _lone(key):
                return f"{path} (a key)"
            found = lone_surrogate(item, f"{path}.{key}")
            if found is not None:
                return found
    return None


def _scenario(path: Path, index: int, raw: dict[str, Any]) -> Scenario:
    """One row the schema passed, with what it cannot say: the request's ids, and
    numbers and strings every implementation can carry."""
    sid = raw["id"]
    where = row_where(path, index, raw)
    request = raw["request"]
    params = request.get("params")
    event = params.get("event") if isinstance(params, dict) else None
    if request.get("id") != sid or not isinstance(event, dict) or event.get("id") != sid:
        raise ScenarioError(f"{where}: request.id and request.params.event.id must equal the id")
    outside = beyond_i_json(raw)
    if outside is not None:
        raise ScenarioError(
            f"{where}: the number at {outside} is beyond 2^53 - 1, outside the I-JSON profile "
            'every implementation can carry exactly (docs/scenarios.md, "Numbers")'
        )
    lone = lone_surrogate(raw)
    if lone is not None:
        raise ScenarioError(
            f"{where}: the string at {lone} holds a lone surrogate (an escape such as \\ud800 "
            "with no pair), which I-JSON forbids and not every implementation can hold "
            '(docs/scenarios.md, "Strings")'
        )
    return Scenario(
        id=sid,
        request=request,
        response=raw["response"],
        expected=raw.get("expected"),
        expect_error=raw.get("expectError", False),
        host_expected=raw.get("hostExpected"),
        raw=raw,
        tags=tuple(raw.get("tags", ())),
    )


def load_set(path: Path, name: str | None = None) -> ScenarioSet:
    """A core file checked against `schemas/scenarios/core.schema.json`, then row by row."""
    try:
        document = load_file(path)
    except JsonError as exc:
        raise ScenarioError(str(exc)) from None
    validate_document(path, document, SCHEMA)
    rows = document["scenarios"]
    scenarios = tuple(_scenario(path, i, raw) for i, raw in enumerate(rows))
    seen: set[str] = set()
    for index, scenario in enumerate(scenarios):
        if scenario.id in seen:
            raise ScenarioError(
                f"{row_where(path, index, rows[index])}: duplicate scenario id {scenario.id!r}"
            )
        seen.add(scenario.id)
    return ScenarioSet(
        name=name or set_name(path), path=path.resolve(), scenarios=scenarios, document=document
    )


REJECTED = {"rejected": True}


def expectation(scenario: Scenario) -> Any:
    """What the report shows as `expected` for a row."""
    if scenario.expect_error:
        if scenario.host_expected is not None:
            return {"rejected": True, "or hostExpected": scenario.host_expected}
        return dict(REJECTED)
    return scenario.expected


class CoreSets(list[ScenarioSet]):
    """The scenario sets of one core run, in the order given."""

    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "name": s.name,
                "file": set_file(s.path),
                "sha256": hashlib.sha256(s.path.read_bytes()).hexdigest(),
                "scenarios": len(s.scenarios),
                "rows": [(row.id, expectation(row)) for row in s.scenarios],
            }
            for s in self
        ]

    def row_count(self) -> int:
        return sum(len(s.scenarios) for s in self)

    def runs(self) -> list[ScenarioSet]:
        """The sets as the adapters run them (`merge_groups`): consecutive sets whose
        ids are disjoint and whose files agree outside `scenarios` become one file, so
        a combination starts its client (and resets its server) once, not once per
        set. Every row keeps its own set's name (`ScenarioSet.origin`), and the
        verdict is the same: each row is judged alone against its own expectation."""
        return merged_runs(list(self), lambda s: set(s.ids))


def load_sets(paths: list[Path]) -> CoreSets:
    sets = CoreSets(load_set(p) for p in paths)
    names = [s.name for s in sets]
    for name in names:
        if names.count(name) > 1:
            raise ScenarioError(f"two scenario files share the set name {name!r}: rename one")
    return sets
