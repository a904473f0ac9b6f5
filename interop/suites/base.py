"""What every suite provides, and what one combination's outcome looks like."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from interop.adapters import Adapter
from interop.grid import Combination
from interop.runtime import RunContext
from interop.scenarios import ScenarioSet
from interop.verify import FAILED, INAPPLICABLE, PASSED, UNSUPPORTED, CombinationError, RowVerdict


@dataclass
class Outcome:
    """Everything the report needs about one combination in one suite."""

    suite: str
    combination: Combination
    rows: list[RowVerdict] = field(default_factory=list)
    errors: list[CombinationError] = field(default_factory=list)
    seconds: float = 0.0
    inapplicable_rows: int = 0

    @property
    def status(self) -> str:
        if not self.combination.applicable:
            return INAPPLICABLE
        if self.errors or any(r.status == FAILED for r in self.rows) or not self.rows:
            return FAILED
        if any(r.status in (UNSUPPORTED, INAPPLICABLE) for r in self.rows):
            return UNSUPPORTED
        return PASSED


@dataclass
class Job:
    """Combinations that run in order in one worker (e.g. sharing one server)."""

    combinations: list[Combination]
    cost: float


class Suite(Protocol):
    name: str

    def default_sets(self, root: Path) -> list[Path]: ...

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]: ...

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: list[ScenarioSet],
        adapters: dict[str, Adapter],
    ) -> list[Outcome]: ...
