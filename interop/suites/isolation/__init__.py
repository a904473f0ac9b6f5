"""The sender isolation suite (docs/ISOLATION.md): uploads carry no event credential."""

from __future__ import annotations

from interop.suites.declaration import Declaration, DeclaredSet
from interop.suites.isolation import features
from interop.suites.isolation.suite import IsolationSuite
from interop.suites.lifecycle import scenarios as lifecycle_scenarios
from interop.suites.steps import STEP_COMMANDS

SUITE = Declaration(
    name="isolation",
    order=40,
    summary="uploads to the harness's own origins carry no event credential",
    suite=IsolationSuite,
    command_keys=STEP_COMMANDS,
    cpu_share=0.5,
    sets=(DeclaredSet("scenarios/upstream/lifecycle-scenarios.json", upstream=True),),
    scenario_schema=lifecycle_scenarios.SCHEMA,
    features=features.row_features,
    feature_families={"isolation": features.SHAPES},
    derived_rows=features.derived_rows,
)

__all__ = ["SUITE", "IsolationSuite"]
