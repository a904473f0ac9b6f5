"""The catalogue suite (docs/CATALOGUE.md)."""

from __future__ import annotations

from interop.suites.catalogue import features, scenarios
from interop.suites.catalogue.suite import CatalogueSuite
from interop.suites.declaration import Declaration, DeclaredSet
from interop.suites.steps import STEP_COMMANDS

SUITE = Declaration(
    name="catalogue",
    order=30,
    summary="all 32 event types, discovery, lineage, registration documents",
    suite=CatalogueSuite,
    command_keys=STEP_COMMANDS,
    cpu_share=1.0,
    sets=(
        DeclaredSet("scenarios/catalogue.json", optional=True),
        DeclaredSet("scenarios/upstream/catalogue-scenarios.json", upstream=True),
    ),
    scenario_schema=scenarios.SCHEMA,
    generator="tools/generate_catalogue_scenarios.py",
    file_rows=True,
    features=features.row_features,
    feature_families={
        "catalogue": features.CATEGORIES,
        "registration": features.REGISTRATION_SHAPES,
    },
)

__all__ = ["SUITE", "CatalogueSuite"]
