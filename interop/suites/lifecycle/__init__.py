"""The lifecycle suite (docs/LIFECYCLE.md): steps, chains, uploads, receiver probes."""

from __future__ import annotations

from interop.suites.declaration import Declaration, DeclaredSet
from interop.suites.lifecycle import features, scenarios
from interop.suites.lifecycle.suite import LifecycleSuite
from interop.suites.steps import STEP_COMMANDS

SUITE = Declaration(
    name="lifecycle",
    order=20,
    summary="pending requests, cancellation, observation, uploads, chains, receiver probes",
    suite=LifecycleSuite,
    command_keys=STEP_COMMANDS,
    cpu_share=0.5,
    sets=(
        DeclaredSet("scenarios/lifecycle.json", optional=True),
        DeclaredSet("scenarios/upstream/lifecycle-scenarios.json", upstream=True),
        DeclaredSet("scenarios/upstream/observation-chain-scenarios.json", upstream=True),
    ),
    scenario_schema=scenarios.SCHEMA,
    generator="tools/generate_lifecycle_scenarios.py",
    file_rows=True,
    features=features.row_features,
)

__all__ = ["SUITE", "LifecycleSuite"]
