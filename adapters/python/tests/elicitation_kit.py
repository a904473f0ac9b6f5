"""What the elicitation tests share: hand-built events, rows, configs, and the
client and server as real processes (tests only)."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from conftest import ADAPTER_DIR, assert_contract
from lifecycle_kit import UPLOAD_TOKEN, ahp_command, client_env, request_json, wait_ready, write

SOURCE = "urn:ahp-interop:py-elicitation"
AUTHENTICATED = "authenticated:py-elicitation-tests"
TIME = "2026-11-03T09:00:00Z"
SERVER = "mcp-forms"
AUTH = {"mode": "none", "profile": "strict"}
REQUEST_CAPS = {"effects": ["deny", "return", "message"]}
RESULT_CAPS = {
    "effects": ["modify", "message"],
    "modify": {"content": {"replace": True, "merge": True}},
}
FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "email": {"type": "string", "format": "email"},
        "colours": {
            "type": "array",
            "items": {"type": "string", "enum": ["red", "green", "blue"]},
            "minItems": 1,
            "maxItems": 2,
        },
    },
    "required": ["name"],
}
FORM_PARAMS = {"message": "Who are you?", "requestedSchema": FORM}
URL_PARAMS = {
    "mode": "url",
    "message": "Sign in, please.",
    "elicitationId": "el-1",
    "url": "https://example.test/sign-in",
}


def body_part(ident: str, value: Any) -> dict[str, Any]:
    """A body-selected text part; a non-string ``value`` is serialized."""
    text = value if isinstance(value, str) else json.dumps(value)
    return {
        "id": ident,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": text,
    }


def withheld_part(ident: str, selection: str) -> dict[str, Any]:
    return {"id": ident, "kind": "text", "mediaType": "text/plain", "selection": selection}


def gap_part(ident: str) -> dict[str, Any]:
    return {
        "id": ident,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "gap": {"reason": "too large"},
    }


def attachment(ref: str, ident: str = "att") -> dict[str, Any]:
    return {
        "id": ident,
        "kind": "attachment",
        "mediaType": "image/png",
        "selection": "body",
        "body": {"ref": ref},
    }


def request_event(
    eid: str,
    session: str,
    params: Any = FORM_PARAMS,
    mode: str = "form",
    part: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": eid,
        "source": SOURCE,
        "time": TIME,
        "session": {"id": session},
        "type": "user.elicitation.request",
        "elicitation": {
            "server": SERVER,
            "mode": mode,
            "request": part if part is not None else body_part(f"{eid}:body", params),
        },
    }
    event.update(extra)
    return event


def result_event(
    eid: str,
    parent: str,
    session: str,
    result: Any,
    mode: str = "form",
    action: str | None = None,
    part: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    if action is None:
        action = result["action"] if isinstance(result, dict) else "accept"
    event: dict[str, Any] = {
        "id": eid,
        "source": SOURCE,
        "time": TIME,
        "session": {"id": session},
        "type": "user.elicitation.result",
        "parentEventId": parent,
        "elicitation": {
            "server": SERVER,
            "mode": mode,
            "action": action,
            "result": part if part is not None else body_part(f"{eid}:body", result),
        },
    }
    event.update(extra)
    return event


def intercept(event: dict[str, Any], capabilities: Any = None) -> dict[str, Any]:
    if capabilities is None:
        capabilities = REQUEST_CAPS if event["type"].endswith(".request") else RESULT_CAPS
    return {
        "jsonrpc": "2.0",
        "id": event["id"],
        "method": "hooks/intercept",
        "params": {
            "protocolVersion": "draft",
            "event": event,
            "capabilities": json.loads(json.dumps(capabilities)),
        },
    }


def reply(ident: str, *effects: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "result": {"protocolVersion": "draft", "effects": list(effects)},
    }


def upload(alias: str, data: bytes, credential: str = "upload", **extra: Any) -> dict[str, Any]:
    return {
        "op": "upload",
        "alias": alias,
        "bodyBase64": base64.b64encode(data).decode(),
        "credential": credential,
        **extra,
    }


def send(event: dict[str, Any], capabilities: Any = None) -> dict[str, Any]:
    return {"op": "send", "message": intercept(event, capabilities)}


def wire_row(rid: str, *steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": rid, "steps": list(steps), **extra}


def atomic_row(
    rid: str,
    user: dict[str, Any],
    params: Any = FORM_PARAMS,
    mode: str = "form",
    request_reply: list[dict[str, Any]] | None = None,
    result_reply: list[dict[str, Any]] | None = None,
    result_caps: Any = None,
    part: dict[str, Any] | None = None,
) -> dict[str, Any]:
    event = request_event(f"{rid}:request", f"{rid}:session", params, mode, part)
    responses: dict[str, Any] = {}
    if request_reply is not None:
        responses[f"{rid}:request"] = reply(f"{rid}:request", *request_reply)
    if result_reply is not None:
        responses[f"{rid}:result"] = reply(f"{rid}:result", *result_reply)
    return {
        "id": rid,
        "atomic": {
            "request": intercept(event),
            "userResult": user,
            "resultCapabilities": json.loads(json.dumps(result_caps or RESULT_CAPS)),
        },
        "responses": responses,
    }


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def scenario_file(home: Path, rows: list[dict[str, Any]], name: str = "elicitation.json") -> Path:
    document = {
        "version": 1,
        "suite": "elicitation",
        "authenticatedSource": AUTHENTICATED,
        "scenarios": rows,
    }
    return write(home / name, document)


def client_copy(home: Path, scenarios: Path) -> Path:
    """The file a blind client gets: without ``expected`` and ``responses``."""
    document = json.loads(scenarios.read_text())
    for row in document["scenarios"]:
        row.pop("expected", None)
        row.pop("responses", None)
    return write(home / "client-scenarios.json", document)


def server_config(
    home: Path,
    scenarios: Path,
    transport: str,
    auth: dict[str, Any] | None = None,
    tls: dict[str, Any] | None = None,
) -> Path:
    config: dict[str, Any] = {
        "suite": "elicitation",
        "transport": transport,
        "readinessFile": str(home / f"ready-{transport}.json"),
        "scenarioFile": str(scenarios),
        "auth": auth or AUTH,
        "uploadAuth": {"token": UPLOAD_TOKEN},
    }
    if tls is not None:
        config["tls"] = tls
    assert_contract("elicitation-server-config.schema.json", config)
    return write(home / f"server-{transport}.json", config)


def client_config(
    home: Path,
    scenarios: Path,
    transport: str,
    ready: dict[str, Any] | None = None,
    server_scenarios: Path | None = None,
    auth: dict[str, Any] | None = None,
    tls: dict[str, Any] | None = None,
) -> Path:
    config: dict[str, Any] = {
        "suite": "elicitation",
        "transport": transport,
        "scenarioFile": str(scenarios),
        "reportFile": str(home / f"report-{transport}.json"),
        "childPidFile": str(home / f"child-{transport}.json"),
        "auth": auth or AUTH,
        "timeoutMs": 10000,
        "upload": {
            "auth": {"type": "bearer", "tokenEnv": "AHP_INTEROP_UPLOAD_TOKEN"},
            "timeoutMs": 5000,
            "maxBytes": 1048576,
        },
    }
    if tls is not None:
        config["tls"] = tls
    if transport == "http":
        assert ready is not None
        config.update(endpoint=ready["endpoint"], controlEndpoint=ready["controlEndpoint"])
        config["upload"]["endpoint"] = ready["uploadEndpoint"]
    else:
        assert server_scenarios is not None
        config.update(
            serverCommand=[sys.executable, "-m", "ahp_py", "lifecycle-server"],
            serverCwd=str(ADAPTER_DIR),
            serverConfig=str(server_config(home, server_scenarios, "stdio")),
        )
    assert_contract("elicitation-client-config.schema.json", config)
    return write(home / f"client-{transport}.json", config)


def control_port(ready: dict[str, Any]) -> int:
    return int(ready["controlEndpoint"].rsplit(":", 1)[1].split("/")[0])


@contextmanager
def http_server(
    home: Path,
    scenarios: Path,
    auth: dict[str, Any] | None = None,
    tls: dict[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """An elicitation server as a real process over HTTP; yields its readiness."""
    config = server_config(home, scenarios, "http", auth, tls)
    process = subprocess.Popen(
        ahp_command("lifecycle-server", config),
        cwd=ADAPTER_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield wait_ready(home / "ready-http.json", process)
    finally:
        if process.poll() is None:
            ready = json.loads((home / "ready-http.json").read_text())
            with suppress(OSError):
                request_json(control_port(ready), "POST", "/shutdown", {})
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def fetch_receipts(ready: dict[str, Any]) -> list[dict[str, Any]]:
    status, answer, _ = request_json(control_port(ready), "GET", "/receipts")
    assert status == 200
    assert_contract("elicitation-control.schema.json#/$defs/receipts", answer)
    entries: list[dict[str, Any]] = answer["entries"]
    return entries


def run_client(config: Path) -> tuple[dict[str, Any], str]:
    completed = subprocess.run(
        ahp_command("lifecycle-client", config),
        cwd=ADAPTER_DIR,
        capture_output=True,
        text=True,
        timeout=180,
        env=client_env(),
        start_new_session=True,
    )
    assert completed.returncode == 0, completed.stderr
    settings = json.loads(config.read_text())
    report: dict[str, Any] = json.loads(Path(settings["reportFile"]).read_text())
    assert_contract("elicitation-report.schema.json", report)
    return report, completed.stderr


def segments(entries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each row's entries, from its row-start mark to the next (as the harness reads them)."""
    owned: dict[str, list[dict[str, Any]]] = {}
    current: list[dict[str, Any]] | None = None
    for entry in entries:
        if entry["kind"] == "row-start":
            current = owned.setdefault(entry["scenario"], [])
        assert current is not None, f"an entry before any row-start mark: {entry}"
        current.append(entry)
    return owned


def receipts_of(owned: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"eventId": e["eventId"], "summary": e["summary"]}
        for e in owned
        if e["kind"] == "elicitation"
    ]
