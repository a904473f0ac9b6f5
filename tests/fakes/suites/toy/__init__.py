"""A toy eighth suite, used only by tests/test_toy_suite.py: it proves that a suite plugs
into the harness by adding files under its own folder and nothing else.

Found by the registry through `AHP_INTEROP_SUITE_PATH` (the folder holding this one);
each row asks an adapter for the sum of two numbers.
"""

from __future__ import annotations

from pathlib import Path

from interop.suites.toy import features
from interop.suites.toy.suite import ToySuite

from interop.suites.declaration import Declaration, DeclaredSet

HERE = Path(__file__).resolve().parent

SUITE = Declaration(
    name="toy",
    order=80,
    summary="sums of two numbers, asked of an adapter's client (a test's own suite)",
    suite=ToySuite,
    command_keys=("client",),
    cpu_share=0.5,
    sets=(DeclaredSet(str(HERE / "toy.json")),),
    scenario_schema=str(HERE / "toy.schema.json"),
    file_rows=True,
    features=features.row_features,
    feature_families={"toy": features.SHAPES},
)

__all__ = ["SUITE", "ToySuite"]
