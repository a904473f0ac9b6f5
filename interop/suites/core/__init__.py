"""The core suite: one intercept response applied by a client, every row, every combination."""

from __future__ import annotations

from interop.suites.core import features, scenarios
from interop.suites.core.suite import CoreSuite
from interop.suites.declaration import Declaration, DeclaredSet

SUITE = Declaration(
    name="core",
    order=10,
    summary="one intercept response applied by a client: every effect, state and composition rule",
    suite=CoreSuite,
    command_keys=("client", "server"),
    cpu_share=1.0,
    sets=(
        DeclaredSet("scenarios/core.json"),
        DeclaredSet("scenarios/upstream/scenarios.json", upstream=True),
    ),
    scenario_schema=scenarios.SCHEMA,
    generator="tools/generate_scenarios.py",
    file_rows=True,
    features=features.row_features,
    timed_rows=True,
    exchange_rows=True,
)

__all__ = ["SUITE", "CoreSuite"]
