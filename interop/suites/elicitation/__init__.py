"""The elicitation suite (docs/ELICITATION.md)."""

from __future__ import annotations

from interop.suites.declaration import Declaration, DeclaredSet
from interop.suites.elicitation import features, scenarios
from interop.suites.elicitation.suite import ElicitationSuite
from interop.suites.steps import STEP_COMMANDS

SUITE = Declaration(
    name="elicitation",
    order=70,
    summary="MCP elicitation bodies checked by receivers; atomic host effects",
    suite=ElicitationSuite,
    command_keys=STEP_COMMANDS,
    cpu_share=1.0,
    sets=(DeclaredSet("scenarios/elicitation.json"),),
    scenario_schema=scenarios.SCHEMA,
    generator="tools/generate_elicitation_scenarios.py",
    file_rows=True,
    features=features.row_features,
    feature_families={"elicitation": features.SHAPES},
)

__all__ = ["SUITE", "ElicitationSuite"]
