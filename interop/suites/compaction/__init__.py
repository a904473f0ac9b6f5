"""The compaction suite (docs/COMPACTION.md)."""

from __future__ import annotations

from interop.suites.compaction import features, scenarios
from interop.suites.compaction.suite import CompactionSuite
from interop.suites.declaration import Declaration, DeclaredSet
from interop.suites.steps import STEP_COMMANDS

SUITE = Declaration(
    name="compaction",
    order=60,
    summary="context.compact.before/after as two chains: summaries, failures",
    suite=CompactionSuite,
    command_keys=STEP_COMMANDS,
    cpu_share=0.5,
    sets=(
        DeclaredSet("scenarios/compaction.json"),
        DeclaredSet("scenarios/compaction-host.json", schema=scenarios.HOST_SCHEMA),
    ),
    scenario_schema=scenarios.SCHEMA,
    generator="tools/generate_compaction_scenarios.py",
    file_rows=True,
    features=features.row_features,
    feature_families={"compaction": features.SHAPES},
)

__all__ = ["SUITE", "CompactionSuite"]
