"""What a suite declares about itself: everything the harness outside its folder knows of it.

Each suite package (`interop/suites/<name>/__init__.py`) holds one `SUITE =
Declaration(...)`. The registry (`interop.suites`) finds them; the command line, the
runner, selection, coverage, the HTML report, the slow-side timing, the known-failures
check and `python -m interop scenarios` read these fields and keep no list of suite
names of their own. A suite's code then lives in its folder only where it loads
(`scenarios.py`), plans and runs (`suite.py`), judges (`verify.py`) or probes
(`probes.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from interop.suites.base import Suite

RowFeatures = Callable[[dict[str, Any]], set[str]]
DerivedRows = Callable[[Path], dict[str, dict[str, Any]]]


@dataclass(frozen=True)
class DeclaredSet:
    """One default scenario file: its path from the repository root, whether it is a
    published upstream vector (run unchanged, never rewritten), whether the run goes
    on without it when it is missing (a file only this repository's checkout has), and
    its schema when it is not the suite's (`Declaration.scenario_schema`)."""

    path: str
    upstream: bool = False
    optional: bool = False
    schema: str | None = None


@dataclass(frozen=True)
class Declaration:
    """A suite, declared. `order` places it in `--suite all` and in the report (smaller
    first); the other fields are read by one part of the harness each (named below)."""

    name: str
    order: int
    summary: str  # one line: the command line's help and the docs
    suite: type[Suite[Any]]  # the class that plans, runs and judges (interop.suites.base)
    # the adapter.json command keys it runs, and the share of one `--jobs` slot one of its
    # jobs keeps busy (1.0 computes; 0.5 mostly waits: two run per slot; docs/bench.md)
    command_keys: tuple[str, ...]
    cpu_share: float
    sets: tuple[DeclaredSet, ...] = ()  # its default scenario files, in run order
    # the scenario format's schema (schemas/scenarios/<name>.schema.json unless a path)
    scenario_schema: str | None = None
    generator: str | None = None  # the script (from the root) that writes its own files
    # its rows are exactly the rows of its files: selection trims copies of the files
    # (interop.select), and a repro bundle re-runs one row from its file
    file_rows: bool = False
    # coverage (interop.coverage): the features one raw row exercises, the closed
    # families of feature names it may return beyond the shared ones, and, when its
    # rows are made in code from a file, the function that makes them by id
    features: RowFeatures | None = None
    feature_families: dict[str, tuple[str, ...]] = field(default_factory=dict)
    derived_rows: DerivedRows | None = None
    # a row is one round trip in one client process: the slow-side timing applies
    timed_rows: bool = False
    # a row is one request and its response: the HTML shows them, `repro` replays them
    exchange_rows: bool = False

    def default_sets(self, root: Path) -> list[Path]:
        """Its default files under `root`, an optional one left out when missing."""
        paths = [root / declared.path for declared in self.sets]
        return [p for p, d in zip(paths, self.sets, strict=True) if not d.optional or p.exists()]

    def schemas(self) -> list[tuple[str, str]]:
        """(file, scenario schema) of each default file that has one."""
        found = [(d.path, d.schema or self.scenario_schema) for d in self.sets]
        return [(path, schema) for path, schema in found if schema is not None]

    def upstream_sets(self, root: Path) -> list[Path]:
        """Its default files that are published upstream vectors."""
        return [root / declared.path for declared in self.sets if declared.upstream]
