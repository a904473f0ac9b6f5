"""The features of an auth row: a server probe or a client refusal (auth/cases.py)."""

from __future__ import annotations

from typing import Any

from interop.suites.auth.cases import CASES

SERVER_SHAPES = ("acceptance", "jwt", "refusal")
CLIENT_SHAPES = ("acceptance", "refusal")


def row_features(row: dict[str, Any]) -> set[str]:
    """An auth row is `profile/case@route` (server probes) or `profile/case` (client
    refusals); its case table (interop/suites/auth/cases.py) says whether it is a negative."""
    row_id = str(row.get("id", ""))
    name, _, route = row_id.partition("/")[2].partition("@")
    if route:
        found = {"method:hooks/intercept" if route == "intercept" else "method:hooks/capabilities"}
        case = next((c for c in CASES if c.name == name), None)
        negative = case.negative if case is not None else name != "positive-control"
        found.add("auth-server:refusal" if negative else "auth-server:acceptance")
        if name.startswith("jwt-"):
            found.add("auth-server:jwt")
        return found
    # a client row: the expectation's kind (a refusal) is the feature
    expected = row.get("expected")
    refused = isinstance(expected, dict) and "reached" in expected
    return {
        "method:hooks/intercept",
        "auth-client:refusal" if refused else "auth-client:acceptance",
    }
