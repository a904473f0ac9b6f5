"""The client role: send every scenario's request once, apply each response with the
engine, and write the upstream-shaped report. Exit 1 when a row failed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from upstream_emulator import engine, settings
from upstream_emulator.http_client import HttpTransport, TransportError
from upstream_emulator.stdio_client import StdioTransport
from upstream_emulator.verdict import own_status

LANGUAGE = "upstream-emulator"
Transport = HttpTransport | StdioTransport


def _transport(config: dict[str, Any]) -> Transport:
    if config["transport"] == "http":
        return HttpTransport(str(config.get("endpoint")), settings.bearer_token(config))
    command = config.get("serverCommand")
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        raise settings.ConfigError("serverCommand must be an array of strings")
    return StdioTransport(command, str(config.get("serverCwd")), str(config.get("serverConfig")))


def _row(scenario: dict[str, Any], transport: Transport) -> dict[str, Any]:
    request = scenario.get("request")
    entry: dict[str, Any] = {"id": scenario["id"]}
    if not isinstance(request, dict):
        return {**entry, "status": "unsupported", "actual": None, "error": "no request object"}
    try:
        response = transport.exchange(request)
    except TransportError:
        return {**entry, "status": "failed", "actual": None, "error": "Transport"}
    outcome = engine.apply(request, response)
    if outcome.unsupported is not None:
        return {**entry, "status": "unsupported", "actual": None, "error": outcome.unsupported}
    status, error = own_status(scenario, outcome.actual)
    entry.update(status=status, actual=outcome.actual)
    if error is not None:
        entry["error"] = error
    return entry


def run(config: dict[str, Any]) -> int:
    try:
        rows = settings.scenarios(config)
        transport = _transport(config)
    except (settings.ConfigError, TransportError, OSError) as exc:
        print(f"upstream-emulator client: {exc}", file=sys.stderr)
        return 2
    try:
        problem = transport.discover()
        if problem is not None:
            print(f"upstream-emulator client: discovery: {problem}", file=sys.stderr)
            results = [
                {"id": r["id"], "status": "failed", "actual": None, "error": "Setup: discovery"}
                for r in rows
            ]
        else:
            results = [_row(r, transport) for r in rows]
    finally:
        transport.close()
    write_report(Path(str(config["reportFile"])), {"language": LANGUAGE, "results": results})
    return 1 if any(r["status"] == "failed" for r in results) else 0


def write_report(path: Path, report: dict[str, Any]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    os.replace(temporary, path)
