"""What the catalogue tests share: hand-built events and notifications, an
in-process catalogue server over real sockets, configs, and the client as a
real process (tests only)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import ADAPTER_DIR, REPO_ROOT, assert_contract
from lifecycle_kit import ahp_command, request_json, write

from ahp_py.contract.config import load_suite_server
from ahp_py.contract.server import ServerProcess
from ahp_py.suites.catalogue import SPEC, catalogue_parts

SOURCE = "urn:ahp:test-a"
OTHER_SOURCE = "urn:ahp:test-b"
TIME = "2026-01-02T03:04:05Z"
UPSTREAM_CATALOGUE = REPO_ROOT / "scenarios" / "upstream" / "catalogue-scenarios.json"


def event(
    ident: str, kind: str, source: str = SOURCE, parent: str | None = None, **fields: Any
) -> dict[str, Any]:
    value: dict[str, Any] = {"id": ident, "source": source, "time": TIME, "type": kind, **fields}
    if parent is not None:
        value["parentEventId"] = parent
    return value


def task(
    ident: str,
    kind: str = "task.change.before",
    tid: str = "t1",
    op: str = "create",
    change: Any = None,
    prior: Any = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": tid,
        "operation": op,
        "change": {"s": 1} if change is None else change,
    }
    if prior is not None:
        body["prior"] = prior
    return event(ident, kind, task=body, **extra)


def workspace(
    ident: str,
    kind: str = "workspace.change.before",
    wkind: str = "cwd",
    change: Any = None,
    prior: Any = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": wkind, "change": {"cwd": "/a"} if change is None else change}
    if prior is not None:
        body["prior"] = prior
    return event(ident, kind, workspace=body, **extra)


def text_part(text: str) -> dict[str, Any]:
    return {
        "id": f"part-{text}",
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": text,
    }


def file_changed(ident: str, *changes: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return event(ident, "file.changed", changes=list(changes), **extra)


def file_change(op: str = "update", before: Any = None, after: Any = None) -> dict[str, Any]:
    change: dict[str, Any] = {"path": "/w/a.txt", "operation": op, "agentCaused": True}
    if before is not None:
        change["before"] = before
    if after is not None:
        change["after"] = after
    return change


def turn_end(ident: str, **extra: Any) -> dict[str, Any]:
    fields = {"turn": {"id": "turn1"}, "outcome": "completed", "continuationCount": 0, "items": []}
    return event(ident, "turn.end", **{**fields, **extra})


def observe(value: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": value},
    }


def server_config(home: Path, transport: str = "http", check: bool = True, **extra: Any) -> Path:
    scenarios = write(
        home / "scenarios.json", {"version": 1, "suite": "catalogue", "scenarios": []}
    )
    config = {
        "suite": "catalogue",
        "transport": transport,
        "readinessFile": str(home / "ready.json"),
        "scenarioFile": str(scenarios),
        "auth": {"mode": "none", "profile": "strict"},
        **extra,
    }
    if check:
        assert_contract("catalogue-server-config.schema.json", config)
    return write(home / f"server-{transport}.json", config)


class LiveCatalogue:
    def __init__(self, process: ServerProcess) -> None:
        self.process = process
        assert process.control is not None and process.listener is not None
        assert process.upload is None  # the catalogue receives no uploads
        self.control_port = process.control.port
        self.port = process.listener.port

    def control(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, parsed, _ = request_json(self.control_port, method, path, body)
        return status, parsed

    def entries(self) -> list[dict[str, Any]]:
        status, answer = self.control("GET", "/receipts")
        assert status == 200 and set(answer) == {"entries"}
        assert_contract("catalogue-control.schema.json#/$defs/receipts", answer)
        return list(answer["entries"])

    def post(self, message: Any, path: str = "/intercept") -> tuple[int, Any, bytes]:
        return request_json(self.port, "POST", path, message)


@contextmanager
def catalogue_server(home: Path, wait_seconds: float = 1.0) -> Iterator[LiveCatalogue]:
    """An HTTP catalogue server in this process (0.5 s read timeout)."""
    settings = load_suite_server(str(server_config(home)), SPEC)
    backend, control = catalogue_parts(settings, wait_seconds)
    process = ServerProcess(
        settings.server, backend, read_timeout=0.5, poll_interval=0.05, control=control
    )
    process.start()
    try:
        yield LiveCatalogue(process)
    finally:
        process.close()


def client_config(
    home: Path,
    scenario_file: Path,
    transport: str,
    ready: dict[str, Any] | None = None,
    check: bool = True,
    **extra: Any,
) -> Path:
    config: dict[str, Any] = {
        "suite": "catalogue",
        "transport": transport,
        "scenarioFile": str(scenario_file),
        "reportFile": str(home / "report.json"),
        "childPidFile": str(home / "child.json"),
        "auth": {"mode": "none", "profile": "strict"},
        "timeoutMs": 10000,
    }
    if transport == "http":
        assert ready is not None
        config.update(endpoint=ready["endpoint"], controlEndpoint=ready["controlEndpoint"])
    else:
        config.update(
            serverCommand=[sys.executable, "-m", "ahp_py", "lifecycle-server"],
            serverCwd=str(ADAPTER_DIR),
            serverConfig=str(server_config(home, "stdio")),
        )
    config.update(extra)
    if check:
        assert_contract("catalogue-client-config.schema.json", config)
    return write(home / f"client-{transport}.json", config)


def run_client(config: Path) -> tuple[dict[str, Any], str]:
    """Our client as a real process; (the report, its stderr)."""
    completed = subprocess.run(
        ahp_command("lifecycle-client", config),
        cwd=ADAPTER_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
    )
    assert completed.returncode == 0, completed.stderr
    settings = json.loads(config.read_text())
    report: dict[str, Any] = json.loads(Path(settings["reportFile"]).read_text())
    assert_contract("catalogue-report.schema.json", report)
    return report, completed.stderr
