"""The auth suite (docs/AUTH.md): servers refuse bad credentials, clients bad peers."""

from __future__ import annotations

from interop.suites.auth import features
from interop.suites.auth.suite import AuthSuite
from interop.suites.core import scenarios as core_scenarios
from interop.suites.declaration import Declaration, DeclaredSet

SUITE = Declaration(
    name="auth",
    order=50,
    summary="every bad credential refused by every server, bad peers by clients",
    suite=AuthSuite,
    command_keys=("client", "server"),
    cpu_share=0.5,
    sets=(DeclaredSet("scenarios/core.json"),),
    scenario_schema=core_scenarios.SCHEMA,
    features=features.row_features,
    feature_families={"auth-server": features.SERVER_SHAPES, "auth-client": features.CLIENT_SHAPES},
)

__all__ = ["SUITE", "AuthSuite"]
