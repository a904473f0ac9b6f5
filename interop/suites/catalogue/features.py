"""The features of a catalogue row: its messages, steps, category and registration documents."""

from __future__ import annotations

from typing import Any

from interop.suites.features import op_features, probe_features, steps_of, wire_features

CATEGORIES = ("execution", "lineage", "registration")
REGISTRATION_SHAPES = (
    "authentication",
    "intercept",
    "literal-credential",
    "observe",
    "requirement",
    "wildcard",
)


def _registration_features(registration: Any) -> set[str]:
    found: set[str] = set()
    hooks = registration.get("hooks") if isinstance(registration, dict) else None
    for hook in hooks if isinstance(hooks, list) else []:
        if not isinstance(hook, dict):
            continue
        authentication = hook.get("authentication")
        if isinstance(authentication, dict):
            found.add("registration:authentication")
            if "token" in authentication:
                found.add("registration:literal-credential")
        subscriptions = hook.get("subscriptions")
        for sub in subscriptions if isinstance(subscriptions, list) else []:
            if not isinstance(sub, dict):
                continue
            if sub.get("mode") in ("intercept", "observe"):
                found.add(f"registration:{sub['mode']}")
            events = sub.get("events")
            if isinstance(events, list) and any(isinstance(e, str) and "*" in e for e in events):
                found.add("registration:wildcard")
    return found


def row_features(row: dict[str, Any]) -> set[str]:
    found = wire_features(row) | op_features(row) | probe_features(row)
    if row.get("category") in CATEGORIES:
        found.add(f"catalogue:{row['category']}")
    for step in steps_of(row):
        if step.get("op") == "register":
            # a registration is judged against the manifest discovered with hooks/capabilities
            found.add("method:hooks/capabilities")
            found |= _registration_features(step.get("registration"))
            if step.get("requirements"):
                found.add("registration:requirement")
    return found
