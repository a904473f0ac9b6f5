"""The adapter config: a JSON object; unknown keys are ignored, as upstream SDKs do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

AUTH_MODES = ("none", "bearer")


class ConfigError(ValueError):
    """The config cannot be used (unreadable, or a key this adapter needs is wrong)."""


def load(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"config {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config {path}: not a JSON object")
    if data.get("transport") not in ("http", "stdio"):
        raise ConfigError(f"transport {data.get('transport')!r} is not http or stdio")
    return data


def bearer_token(config: dict[str, Any]) -> str | None:
    """The bearer token of `auth`, None for mode none; other modes are not emulated."""
    auth = config.get("auth") or {"mode": "none"}
    mode = auth.get("mode") if isinstance(auth, dict) else None
    if mode not in AUTH_MODES:
        raise ConfigError(f"auth mode {mode!r} is not emulated (only none and bearer)")
    if mode == "none":
        return None
    token = auth.get("token")
    if not isinstance(token, str) or not token:
        raise ConfigError("auth mode bearer needs a non-empty token")
    return token


def scenarios(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of `scenarioFile`: `{version: 1, scenarios: [...]}`, each with a string id."""
    path = config.get("scenarioFile")
    try:
        data = json.loads(Path(str(path)).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"scenarioFile {path}: {exc}") from None
    rows = data.get("scenarios") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ConfigError(f"scenarioFile {path}: no scenarios array")
    if not all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in rows):
        raise ConfigError(f"scenarioFile {path}: a scenario has no string id")
    return rows
