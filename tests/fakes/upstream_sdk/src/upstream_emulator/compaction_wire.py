"""Contract v1's compaction-wire receiver (and, in compaction_host.py, its host),
emulated from the facts alone
(upstream `interop/compaction_wire_matrix.py` at its newest revision, 8f91ac41,
with inline text parts, as the project's research notes record it).

`SCHEMA_DIR STORE_DIR SUBSCRIPTIONS stdio SCOPE` answers each request line
on stdin with one line for that scope (no credential: one process per call,
spawned by the host). `SCHEMA_DIR STORE_DIR SUBSCRIPTIONS server` prints one line `{"endpoint":
"http://127.0.0.1:PORT"}` and serves two POST routes. A caller is known by its
bearer token alone: exactly one `Authorization: Bearer` header whose token
AHP_COMPACTION_TOKENS (for /hooks/intercept) or AHP_COMPACTION_UPLOAD_TOKENS (for
/upload) maps to a scope, else 401; a scope the subscriptions file lacks 403;
another path 404. `/upload` stores raw octets and answers 201 `{ref, size,
sha256}`. `/hooks/intercept` checks the request, answers the scope's action
(`{"kind": "effects", "effects"}` as they are, or `{"kind": "append", "target",
"suffix"}`: the target's last text part with the suffix added) and appends
`{subscription, request, response}` to STORE_DIR/receipts.jsonl; a request it
refuses gets the JSON-RPC error -32602 (HTTP 200) and is not recorded. Its
checks are its own small subset (no JSON Schema library): the request's shape,
`id` equal to the event's, a before event's `trigger`, text parts inline (`text`,
never `body`), text-part arrays (never a scalar), and capabilities that offer
`modify` on the boundary's own target only.

UPSTREAM_EMULATOR_FAULT=compaction-wire-accept-all answers and records every
request it can parse, and =compaction-wire-body-refs refuses every text part
that is not a body reference (the binding the driver had before its newest
revision): wrong receivers, for the harness's tests.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

from upstream_emulator.compaction_host import host
from upstream_emulator.httpserve import Listener, Reply, Request

TARGETS = {"context.compact.before": "instructions", "context.compact.after": "summary"}


class Refused(ValueError):
    """The request is answered -32602 and not recorded."""


def _text_parts(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise Refused(f"{where} must be an array of text parts")
    for part in value:
        if not isinstance(part, dict) or part.get("kind") != "text":
            raise Refused(f"{where}: a part that is not text")
        if os.environ.get("UPSTREAM_EMULATOR_FAULT") == "compaction-wire-body-refs":
            if not isinstance(part.get("body"), dict):
                raise Refused(f"{where}: a text part without a body reference")
        elif "body" in part or not isinstance(part.get("text"), str):
            raise Refused(f"{where}: text is inline, never a body reference")


def _check(request: Any) -> tuple[str, dict[str, Any]]:
    """The request's event type and event, or Refused."""
    if not isinstance(request, dict) or request.get("jsonrpc") != "2.0":
        raise Refused("not a JSON-RPC request")
    params = request.get("params")
    if request.get("method") != "hooks/intercept" or not isinstance(params, dict):
        raise Refused("not hooks/intercept")
    event = params.get("event")
    if params.get("protocolVersion") != "draft" or not isinstance(event, dict):
        raise Refused("protocolVersion or event")
    kind = event.get("type")
    if kind not in TARGETS or request.get("id") != event.get("id"):
        raise Refused("event type, or id not the event's")
    if kind == "context.compact.before":
        if event.get("trigger") not in ("auto", "manual", "hook"):
            raise Refused("a before event needs its trigger")
        if "instructions" in event:
            _text_parts(event["instructions"], "instructions")
    else:
        _text_parts(event.get("summary"), "summary")
    for item in event.get("items", []):
        if not isinstance(item, dict):
            raise Refused("an item that is not an object")
        _text_parts([p for p in item.get("parts", []) if p.get("kind") == "text"], "items")
    capabilities = params.get("capabilities")
    modify = capabilities.get("modify", {}) if isinstance(capabilities, dict) else None
    if not isinstance(modify, dict) or set(modify) - {TARGETS[kind]}:
        raise Refused("modify offered on another target than the boundary's")
    return kind, event


def _effects(action: dict[str, Any], event: dict[str, Any]) -> list[Any]:
    if action.get("kind") == "append":
        target = action["target"]
        value = copy.deepcopy(event.get(target) or [])
        if value:
            value[-1]["text"] = value[-1]["text"] + action["suffix"]
        return [{"type": "modify", "target": target, "operation": "replace", "value": value}]
    return list(action.get("effects", []))


def exchange(store: Path, config: dict[str, Any], scope: str, raw: bytes) -> dict[str, Any]:
    """One call of a scope: the JSON-RPC answer; an accepted one is recorded."""
    try:
        message = json.loads(raw)
    except ValueError:
        message = None
    ident = message.get("id") if isinstance(message, dict) else None
    error = {"code": -32602, "message": "Invalid compaction request"}
    try:
        if os.environ.get("UPSTREAM_EMULATOR_FAULT") == "compaction-wire-accept-all":
            params = message.get("params") if isinstance(message, dict) else None
            event = params.get("event") if isinstance(params, dict) else None
            event = event if isinstance(event, dict) else {}
        else:
            _, event = _check(message)
        action = config[scope]
    except (Refused, AttributeError, KeyError):
        return {"jsonrpc": "2.0", "id": ident, "error": error}
    result = {"protocolVersion": "draft", "effects": _effects(action, event)}
    response = {"jsonrpc": "2.0", "id": ident, "result": result}
    line = {"subscription": scope, "request": message, "response": response}
    with _LOCK, (store / "receipts.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
    return response


_LOCK = threading.Lock()


def serve(store: Path, config: dict[str, Any]) -> int:
    tokens = json.loads(os.environ.get("AHP_COMPACTION_TOKENS") or "{}")
    uploads = json.loads(os.environ.get("AHP_COMPACTION_UPLOAD_TOKENS") or "{}")

    def route(request: Request) -> Reply:
        known = uploads if request.path == "/upload" else tokens
        given = request.headers.get_all("Authorization") or []
        token = given[0][7:] if len(given) == 1 and given[0].startswith("Bearer ") else None
        scope = known.get(token) if token is not None else None
        if scope is None:
            return Reply(401, None)
        if scope not in config:
            return Reply(403, None)
        if request.method != "POST" or request.path not in ("/upload", "/hooks/intercept"):
            return Reply(404, None)
        raw = request.body()
        if raw is None:
            return Reply(400, None)
        if request.path == "/upload":
            ref = f"urn:uuid:{uuid.uuid4()}"
            (store / hashlib.sha256(f"{scope}\0{ref}".encode()).hexdigest()).write_bytes(raw)
            digest = hashlib.sha256(raw).hexdigest()
            return Reply(201, {"ref": ref, "size": len(raw), "sha256": digest})
        return Reply(200, exchange(store, config, scope, raw))

    listener = Listener(route)
    print(json.dumps({"endpoint": listener.url}), flush=True)
    try:
        threading.Event().wait()  # served until the driver terminates it
    finally:
        listener.close()
    return 0


def stdio(store: Path, config: dict[str, Any], scope: str) -> int:
    """One process per subscription call: each line answered by one line."""
    for line in sys.stdin.buffer:
        if line.strip():
            print(json.dumps(exchange(store, config, scope, line)), flush=True)
    return 0


def main(argv: list[str]) -> int:
    if argv == ["host"]:
        return host(json.load(sys.stdin))
    if len(argv) >= 4:
        config = json.loads(Path(argv[2]).read_text(encoding="utf-8"))
        if argv[3:] == ["server"]:
            return serve(Path(argv[1]), config)
        if len(argv) == 5 and argv[3] == "stdio":
            return stdio(Path(argv[1]), config, argv[4])
    usage = (
        "usage: compaction_wire.py SCHEMA_DIR STORE_DIR SUBSCRIPTIONS server | stdio SCOPE\n"
        "       compaction_wire.py host  (the plan on stdin)"
    )
    print(usage, file=sys.stderr)
    return 2
