"""What every suite says for itself, and how its combinations group into jobs.

A suite owns its scenario format (how its files load and are checked), which
combinations and rows apply (with a reason for each exclusion), how
combinations group into jobs, how a job runs, and how rows are judged. The
runner knows none of that: it expands the grid, asks the suite, schedules the
jobs and writes the report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from interop import ROOT
from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.jsonvalue import dumps_compact
from interop.memo import IdentityMemo
from interop.results import Outcome
from interop.runtime.context import RunContext

T = TypeVar("T")
S = TypeVar("S", bound="MergeableSet")


class ScenarioError(ValueError):
    """A scenario file is unusable; the message names the file and scenario."""


# Texts of set files already made, by set and variant.
_SET_TEXTS: IdentityMemo[str] = IdentityMemo()


def write_set_file(
    path: Path,
    document: dict[str, Any],
    rows: list[Any] | Callable[[], list[Any]],
    *,
    owner: object | None = None,
    variant: tuple[Any, ...] = (),
) -> Path:
    """The scenario file an adapter gets: `document` with these rows, as one line of
    JSON (the C encoder: a set is written for every combination, and an indented
    dump of a large set cost tens of milliseconds each time). With `owner` (the
    set, which never changes) the text of each `variant` (transport, blind, ...)
    is made once and written again for every later combination; `rows` may then
    be a function, called only the first time."""

    def text() -> str:
        made = rows() if callable(rows) else rows
        return dumps_compact({**document, "scenarios": made}) + "\n"

    path.write_text(
        _SET_TEXTS.made((owner,), text, variant) if owner is not None else text(),
        encoding="utf-8",
    )
    return path


# Object keys whose string values name something an adapter may keep state by
# (requests, events, parents, sources, uploads, backends, registrations).
STATEFUL_KEYS = frozenset(
    {"id", "parentEventId", "source", "name", "ref", "backend", "subscription"}
)


def identifiers(node: Any, keys: frozenset[str] = STATEFUL_KEYS) -> set[str]:
    """Every string a scenario names under one of `keys`, at any depth."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, str):
                    if key in keys:
                        found.add(value)
                else:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return found


def merge_groups(
    items: list[T], document: Callable[[T], dict[str, Any]], names: Callable[[T], set[str]]
) -> list[list[T]]:
    """Consecutive scenario sets that can run as one file, one client run and one
    server: their files agree outside `scenarios` and `description` (prose no
    adapter reads), and what they name (`names`: ids, and whatever else a server
    keeps state by) is disjoint, so no row can see another set's state."""
    groups: list[tuple[list[T], set[str]]] = []
    for item in items:
        named = names(item)
        if (
            groups
            and _outside(document(groups[-1][0][0])) == _outside(document(item))
            and not groups[-1][1] & named
        ):
            groups[-1][0].append(item)
            groups[-1][1].update(named)
        else:
            groups.append(([item], set(named)))
    return [group for group, _ in groups]


def _outside(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in ("scenarios", "description")}


class MergeableSet:
    """A scenario set (a dataclass) that may be a merged run (`merged_runs`): its
    `scenarios` are rows with `id` and `raw`, and `origins` maps each row of a merged
    run to its own set's name."""

    name: str
    document: dict[str, Any]
    scenarios: Any
    origins: dict[str, str]

    def origin(self, scenario_id: str) -> str:
        """The set a row belongs to: its own set's name when this is a merged run."""
        return self.origins.get(scenario_id, self.name)

    def subset(self: S, rows: list[Any], suffix: str = "") -> S:
        """These rows alone, as a set of their own (named `name + suffix`; each row
        keeps its own set's name)."""
        made: S = dataclasses.replace(  # type: ignore[type-var]
            self,
            name=self.name + suffix,
            scenarios=type(self.scenarios)(rows),
            document={**self.document, "scenarios": [row.raw for row in rows]},
            origins={row.id: self.origin(row.id) for row in rows},
        )
        return made


# Runs already made, by the list of sets they were made from.
_RUNS: IdentityMemo[list[Any]] = IdentityMemo()


def merged_runs(items: list[S], names: Callable[[S], set[str]]) -> list[S]:
    """The sets as a combination runs them: each group of `merge_groups` as one set
    named after its members, their rows in order; a set alone as it is. Made once
    per list of sets, so every combination gets the same merged sets (and
    `write_set_file` their texts made once)."""

    def made() -> list[Any]:
        groups = merge_groups(items, lambda s: s.document, names)
        return [group[0] if len(group) == 1 else _merged(group) for group in groups]

    return list(_RUNS.made(tuple(items), made))


def _merged(group: list[S]) -> S:
    first: Any = group[0]
    scenarios = [row for item in group for row in item.scenarios]
    merged: S = dataclasses.replace(  # keeps the first set's path, never handed out:
        first,  # each suite writes a run's own file from its `document`
        name="+".join(item.name for item in group),
        scenarios=type(first.scenarios)(scenarios),
        document={**first.document, "scenarios": [row.raw for row in scenarios]},
        origins={row.id: item.name for item in group for row in item.scenarios},
    )
    return merged


@dataclass
class Job:
    """Combinations that run in order in one worker (e.g. sharing one server)."""

    combinations: list[Combination]
    cost: float


class ScenarioSets(Protocol):
    """A suite's loaded scenario files: what the report's meta and counts need."""

    def describe(self) -> list[dict[str, Any]]: ...

    def row_count(self) -> int: ...


SetsT = TypeVar("SetsT", bound=ScenarioSets)
Done = Callable[[Outcome], None]  # told of each combination as it finishes


class Suite(Protocol[SetsT]):
    """What a suite's class does; what it is (its name, commands, cost, default sets,
    coverage) is its `Declaration` (interop/suites/declaration.py)."""

    name: str

    def load_sets(self, paths: list[Path]) -> SetsT:
        """Load and check the suite's files; a problem raises ScenarioError naming the file."""
        ...

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        """None when the combination runs in this suite, else the reason it does not."""
        ...

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]: ...

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: SetsT,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        """Run one job over the sets `load_sets` returned; call `done(outcome)` as each
        combination finishes."""
        ...


def set_file(path: Path) -> str:
    """A scenario file as a report names it: relative to the repository when it lies
    inside, else its absolute path (coverage and re-runs read it from there)."""
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(ROOT))
    except ValueError:
        return str(resolved)


def set_name(path: Path) -> str:
    """The set a file holds, by default: its name without `.json`, or its folder's name
    for a file named `scenarios.json` (`scenarios/core.json` is `core`;
    `scenarios/upstream/scenarios.json` is `upstream`)."""
    return path.parent.name if path.stem == "scenarios" else path.stem
