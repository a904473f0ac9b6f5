"""The contract's blind client: send each scenario's request once, apply, report."""

from __future__ import annotations

import sys
from typing import Any, Protocol

from . import engine
from .auth import AuthError, client_token
from .boundaries import DEFINITIONS
from .config import (
    AuthSettings,
    ConfigError,
    load_config,
    load_json_file,
    write_json_atomic,
)
from .http_transport import TransportError
from .schemas import INTERCEPT_REQUEST, INTERCEPT_RESPONSE, SchemaSet, load

LANGUAGE = "python"
DEFAULT_TIMEOUT_MS = 10000


def log(text: str) -> None:
    print(f"ahp_py client: {text}", file=sys.stderr, flush=True)


class Peer(Protocol):
    def exchange(self, message: Any) -> Any: ...

    def close(self) -> None: ...


class BrokenPeer:
    """Stands in when no connection can be made: every exchange fails alike."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def exchange(self, message: Any) -> Any:
        raise TransportError(self.reason)

    def close(self) -> None:
        pass


def make_peer(config: dict[str, Any], settings: AuthSettings, timeout: float) -> Peer:
    transport = config.get("transport", "http")
    if transport == "stdio":
        from .stdio_transport import StdioPeer

        command, config_path = config.get("serverCommand"), config.get("serverConfig")
        if not (
            isinstance(command, list)
            and command
            and all(isinstance(a, str) for a in command)
        ):
            raise ConfigError("serverCommand must be a non-empty array of strings")
        if not isinstance(config_path, str):
            raise ConfigError("serverConfig must be a path")
        cwd = config.get("serverCwd")
        return StdioPeer(
            [*command, "--config", config_path],
            cwd if isinstance(cwd, str) else None,
            timeout,
        )
    if transport != "http":
        raise ConfigError(f"transport {transport!r} is not supported")
    endpoint = config.get("endpoint")
    if not isinstance(endpoint, str):
        raise ConfigError("endpoint must be a URL")
    from .http_transport import HttpPeer, intercept_url

    scheme = intercept_url(endpoint)[0]
    if settings.profile == "strict" and settings.mode != "none" and scheme != "https":
        return BrokenPeer(
            f"profile strict refuses auth mode {settings.mode} over plain HTTP"
        )
    try:
        token = client_token(settings, timeout)
    except AuthError as exc:
        return BrokenPeer(f"authentication failed: {exc}")
    context = None
    if scheme == "https":
        from .tls import client_context

        context = client_context(settings.client_tls())
    return HttpPeer(endpoint, timeout, token=token, ssl_context=context)


def run_scenario(scenario: Any, peer: Peer, schemas: SchemaSet) -> dict[str, Any]:
    scenario_id = scenario.get("id") if isinstance(scenario, dict) else None
    request = scenario.get("request") if isinstance(scenario, dict) else None
    problem = schemas.error(INTERCEPT_REQUEST, request)
    if problem or not isinstance(request, dict):
        return {
            "id": scenario_id,
            "status": "failed",
            "error": f"request is invalid: {problem}",
        }
    unsupported: str | None = None
    try:
        engine.boundary_for(request)
    except engine.Unsupported as exc:
        unsupported = str(exc)
    try:
        response = peer.exchange(request)
    except TransportError as exc:
        if unsupported:
            return {"id": scenario_id, "status": "unsupported", "error": unsupported}
        return {"id": scenario_id, "status": "failed", "error": str(exc)}
    if unsupported:
        return {"id": scenario_id, "status": "unsupported", "error": unsupported}

    def response_error(message: Any) -> str | None:
        return schemas.error(INTERCEPT_RESPONSE, message)

    outcome = engine.apply(request, response, response_error, schemas.error)
    if outcome.reason:
        log(f"{scenario_id}: response rejected: {outcome.reason}")
    return {"id": scenario_id, "status": "completed", "actual": outcome.actual}


def run(config_path: str) -> int:
    config = load_config(config_path)
    report_file = config.get("reportFile")
    scenario_file = config.get("scenarioFile")
    if not isinstance(report_file, str) or not isinstance(scenario_file, str):
        raise ConfigError("reportFile and scenarioFile must be paths")
    timeout_ms = config.get("timeoutMs", DEFAULT_TIMEOUT_MS)
    if (
        isinstance(timeout_ms, bool)
        or not isinstance(timeout_ms, (int, float))
        or timeout_ms <= 0
    ):
        raise ConfigError("timeoutMs must be a positive number")
    document = load_json_file(scenario_file)
    scenarios = document.get("scenarios") if isinstance(document, dict) else None
    if not isinstance(scenarios, list):
        raise ConfigError(f"{scenario_file} has no scenarios array")
    settings = AuthSettings.from_config(config)
    schemas = load()
    for name in (INTERCEPT_REQUEST, INTERCEPT_RESPONSE, *DEFINITIONS):
        schemas.validator(name)  # built once, before the first row
    peer = make_peer(config, settings, timeout_ms / 1000.0)
    results: list[dict[str, Any]] = []
    try:
        for scenario in scenarios:
            results.append(run_scenario(scenario, peer, schemas))
    finally:
        peer.close()
    write_json_atomic(report_file, {"language": LANGUAGE, "results": results})
    return 0
