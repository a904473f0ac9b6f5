"""What the compaction tests share: hand-built runs and negatives, configs, and
the client and server as real processes (tests only)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from conftest import ADAPTER_DIR, assert_contract
from lifecycle_kit import ahp_command, request_json, wait_ready, write

SOURCE = "urn:ahp-interop:py-compaction"
TIME = "2026-11-02T10:00:00Z"
CAPS = {
    "effects": ["deny", "modify", "return", "message"],
    "modify": {"instructions": {"replace": True, "merge": True}},
}
AUTH = {"mode": "none", "profile": "strict"}


def text(ident: str, value: str) -> dict[str, Any]:
    return {
        "id": ident,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": value,
    }


def message(ident: str, value: str, role: str = "user") -> dict[str, Any]:
    return {"id": ident, "role": role, "parts": [text(f"{ident}:p", value)]}


def before_event(
    rid: str, items: int = 2, instructions: list[Any] | None = None, **extra: Any
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": f"{rid}:before",
        "source": SOURCE,
        "time": TIME,
        "type": "context.compact.before",
        "trigger": "manual",
        "items": [message(f"{rid}:m{n}", f"line {n}") for n in range(items)],
        **extra,
    }
    if instructions is not None:
        event["instructions"] = instructions
    return event


def before_request(rid: str, **event: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": f"{rid}:before",
        "method": "hooks/intercept",
        "params": {
            "protocolVersion": "draft",
            "event": before_event(rid, **event),
            "capabilities": json.loads(json.dumps(CAPS)),
        },
    }


def reply(ident: str, *effects: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "result": {"protocolVersion": "draft", "effects": list(effects)},
    }


def sub(ident: str, mode: str = "intercept", **extra: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"id": ident, "mode": mode, **extra}
    if mode == "intercept":
        value.setdefault("failurePolicy", "fail-open")
    return value


def run_row(
    rid: str,
    before: list[dict[str, Any]],
    after: list[dict[str, Any]],
    before_replies: list[Any],
    after_replies: list[Any],
    observe_only: bool = False,
    **event: Any,
) -> dict[str, Any]:
    return {
        "id": rid,
        "request": before_request(rid, **event),
        "before": before,
        "after": after,
        "afterObserveOnly": observe_only,
        "responseSequences": {"before": before_replies, "after": after_replies},
    }


def scenario_file(home: Path, rows: list[dict[str, Any]]) -> Path:
    return write(home / "compaction.json", {"version": 1, "suite": "compaction", "scenarios": rows})


def server_config(home: Path, scenarios: Path, transport: str) -> Path:
    config = {
        "suite": "compaction",
        "transport": transport,
        "readinessFile": str(home / f"ready-{transport}.json"),
        "scenarioFile": str(scenarios),
        "auth": AUTH,
    }
    assert_contract("compaction-server-config.schema.json", config)
    return write(home / f"server-{transport}.json", config)


def client_config(
    home: Path, scenarios: Path, transport: str, ready: dict[str, Any] | None = None
) -> Path:
    config: dict[str, Any] = {
        "suite": "compaction",
        "transport": transport,
        "scenarioFile": str(scenarios),
        "reportFile": str(home / f"report-{transport}.json"),
        "childPidFile": str(home / f"child-{transport}.json"),
        "auth": AUTH,
        "timeoutMs": 3000,
    }
    if transport == "http":
        assert ready is not None
        config.update(endpoint=ready["endpoint"], controlEndpoint=ready["controlEndpoint"])
    else:
        config.update(
            serverCommand=[sys.executable, "-m", "ahp_py", "lifecycle-server"],
            serverCwd=str(ADAPTER_DIR),
            serverConfig=str(server_config(home, scenarios, "stdio")),
        )
    assert_contract("compaction-client-config.schema.json", config)
    return write(home / f"client-{transport}.json", config)


@contextmanager
def http_server(home: Path, scenarios: Path) -> Iterator[dict[str, Any]]:
    """A compaction server as a real process over HTTP; yields its readiness."""
    config = server_config(home, scenarios, "http")
    process = subprocess.Popen(
        ahp_command("lifecycle-server", config),
        cwd=ADAPTER_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        yield wait_ready(home / "ready-http.json", process)
    finally:
        if process.poll() is None:
            ready = json.loads((home / "ready-http.json").read_text())
            port = int(ready["controlEndpoint"].rsplit(":", 1)[1].split("/")[0])
            with suppress(OSError):
                request_json(port, "POST", "/shutdown", {})
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        assert process.stderr is not None
        process.stderr.close()


def run_client(config: Path) -> tuple[dict[str, Any], str]:
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
    return report, completed.stderr
