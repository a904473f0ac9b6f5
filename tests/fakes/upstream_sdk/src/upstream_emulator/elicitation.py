"""Contract v1's elicitation adapter, emulated from the facts alone.

The receiver (`server SCHEMA_DIR authenticated:SENDER`) prints one line
`{"endpoint": "http://127.0.0.1:PORT"}` and serves three POST routes, each
behind exactly one `Authorization: Bearer` header (401 otherwise): `/upload`
(the token in AHP_ELICITATION_UPLOAD_TOKEN; raw octets, 201 `{ref, size,
sha256}` with a ref it allocates), `/hooks/intercept` and `/receipts` (the token
in AHP_ELICITATION_TOKEN). An intercept it refuses is answered 400 and not
recorded; an accepted one is answered with the no-effect result and recorded
as `{message, bytes, summary}`. Bodies are inline text parts, as the spec's
MCP elicitation binding has them (interaction-payloads.md): an absent part or
`selection: "omit"` is the omit view, `metadata` carries no text, `body` has
the serialized MCP value. Its schema checks are its own small subset (no
JSON Schema library): enough for the rows its tests pick.

The sender (`client`) reads `{endpoint, token, uploadToken, steps: [{path,
bytes, headers}]}` and posts each step's bytes as they are, with the upload
token on `/upload` and the event token elsewhere (no header for an empty one),
printing `[{status, body}]`.

UPSTREAM_EMULATOR_FAULT=elicitation-accept-all makes the receiver accept and
record every intercept it can parse, and =elicitation-any-token accept any
bearer token: wrong receivers, for the harness's tests.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import os
import sys
import threading
import uuid
from typing import Any
from urllib.parse import urlsplit

from upstream_emulator.httpserve import Listener, Reply, Request, bearer_ok

REQUEST, RESULT = "user.elicitation.request", "user.elicitation.result"
ACTIONS = ("accept", "decline", "cancel")
NO_EFFECT = {"protocolVersion": "draft", "effects": []}
KINDS = {"string": str, "boolean": bool, "array": list}


class Refused(ValueError):
    """The intercept is refused (400), nothing recorded."""


def _strict(text: str) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise Refused(f"duplicate key {key!r}")
            out[key] = value
        return out

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except ValueError as exc:
        raise Refused(f"not JSON: {exc}") from None


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    """A submitted form field against its primitive property schema."""
    kind = schema.get("type")
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if kind == "integer" and not float(value).is_integer():
            return False
        low, high = schema.get("minimum"), schema.get("maximum")
        return (low is None or value >= low) and (high is None or value <= high)
    wanted = KINDS.get(kind) if isinstance(kind, str) else None
    if wanted is None or not isinstance(value, wanted):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if kind == "string":
        shortest, longest = schema.get("minLength", 0), schema.get("maxLength")
        return len(value) >= shortest and (longest is None or len(value) <= longest)
    return True


def _check_content(content: Any, form: dict[str, Any]) -> None:
    if not isinstance(content, dict):
        raise Refused("content is not an object")
    properties = form.get("properties", {})
    for name in form.get("required", []):
        if name not in content:
            raise Refused(f"required field {name!r} missing")
    for name, value in content.items():
        if name in properties and not _fits(value, properties[name]):
            raise Refused(f"field {name!r} does not fit its schema")


class Receiver:
    def __init__(self, principal: str, accept_all: bool) -> None:
        self.principal = principal
        self.accept_all = accept_all
        self.stored: dict[str, bytes] = {}
        self.live: dict[tuple[str, str], dict[str, Any]] = {}
        self.receipts: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def upload(self, request: Request) -> Reply:
        raw = request.body()
        declared = request.headers.get("AHP-Content-SHA256")
        if (
            raw is None
            or request.headers.get("Content-Type") != "application/octet-stream"
            or declared != hashlib.sha256(raw).hexdigest()
        ):
            return Reply(400, {"error": "rejected"}, close=True)
        ref = f"urn:uuid:{uuid.uuid4()}"
        with self.lock:
            self.stored[ref] = raw
        return Reply(201, {"ref": ref, "size": len(raw), "sha256": declared})

    def _part(self, meta: dict[str, Any], name: str) -> tuple[str, Any]:
        """(selection, parsed body or None)."""
        part = meta.get(name)
        if part is None:
            return "omit", None
        if not isinstance(part, dict) or part.get("kind") != "text":
            raise Refused(f"{name} is not a text part")
        selection = part.get("selection")
        if selection not in ("body", "metadata", "omit"):
            raise Refused(f"{name} selection {selection!r}")
        if selection != "body":
            return selection, None
        if not isinstance(part.get("text"), str):
            raise Refused(f"{name} body selected without text")
        value = _strict(part["text"])
        if not isinstance(value, dict):
            raise Refused(f"{name} text is not a JSON object")
        return "body", value

    def _request(self, event: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        key = (event["source"], event["id"])
        if key in self.live:
            raise Refused("a live request has this id")
        selection, params = self._part(meta, "request")
        if params is not None:
            if params.get("mode", "form") != meta["mode"]:
                raise Refused("mode differs from the body's")
            if meta["mode"] == "form":
                form = params.get("requestedSchema")
                if not isinstance(form, dict) or not isinstance(form.get("properties"), dict):
                    raise Refused("a form needs requestedSchema with properties")
            elif not all(isinstance(params.get(k), str) for k in ("url", "elicitationId")):
                raise Refused("a URL request needs url and elicitationId")
        self.live[key] = {"event": event, "selection": selection, "params": params}
        return {"request": params} if params is not None else {"selection": selection}

    def _result(self, event: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        parent = event.get("parentEventId")
        asked = self.live.get((event["source"], parent)) if isinstance(parent, str) else None
        if asked is None:
            raise Refused("no live request is this result's parent")
        first = asked["event"]
        if first["session"]["id"] != event["session"]["id"]:
            raise Refused("another session")
        asked_meta = first["elicitation"]
        if asked_meta["server"] != meta["server"] or asked_meta["mode"] != meta["mode"]:
            raise Refused("server or mode differs from the request's")
        if meta.get("action") not in ACTIONS:
            raise Refused("action")
        selection, answer = self._part(meta, "result")
        if answer is not None:
            if answer.get("action") != meta["action"]:
                raise Refused("action differs from the body's")
            accepted_form = meta["action"] == "accept" and meta["mode"] == "form"
            if "content" in answer and not accepted_form:
                raise Refused("content outside an accepted form")
            if accepted_form and asked["params"] is not None:
                _check_content(answer.get("content", {}), asked["params"]["requestedSchema"])
        del self.live[(event["source"], parent)]
        provenance = {"kind": "mcp", "authenticatedSource": self.principal}
        if answer is not None and asked["params"] is not None:
            return {
                "request": asked["params"],
                "result": answer,
                "provenance": provenance,
                "externalCompletion": False,
            }
        return {
            "selection": {"request": asked["selection"], "result": selection},
            "bodyValidation": "not-selected",
            "provenance": provenance,
            "externalCompletion": False,
        }

    def intercept(self, request: Request) -> Reply:
        raw = request.body()
        message: Any = None
        try:
            message = _strict((raw or b"").decode("utf-8"))
            with self.lock:
                summary = self._judge(message)
        except (Refused, UnicodeDecodeError, KeyError, TypeError, AttributeError):
            if not self.accept_all or not isinstance(message, dict):
                return Reply(400, {"error": "rejected"})
            summary = {}
        with self.lock:
            self.receipts.append({"message": message, "bytes": "", "summary": summary})
        return Reply(200, {"jsonrpc": "2.0", "id": message["id"], "result": NO_EFFECT})

    def _judge(self, message: Any) -> dict[str, Any]:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise Refused("not a JSON-RPC request")
        params = message.get("params")
        if message.get("method") != "hooks/intercept" or not isinstance(params, dict):
            raise Refused("not hooks/intercept")
        event = params.get("event")
        capabilities = params.get("capabilities")
        if params.get("protocolVersion") != "draft" or not isinstance(capabilities, dict):
            raise Refused("protocolVersion or capabilities")
        if not isinstance(event, dict) or message.get("id") != event.get("id"):
            raise Refused("the message id is not its event's")
        session, meta = event.get("session"), event.get("elicitation")
        if not isinstance(session, dict) or not isinstance(session.get("id"), str):
            raise Refused("no session id")
        if not isinstance(event.get("source"), str) or not isinstance(meta, dict):
            raise Refused("no source or elicitation")
        if not isinstance(meta.get("server"), str) or not meta["server"]:
            raise Refused("no server")
        if meta.get("mode") not in ("form", "url"):
            raise Refused("mode")
        for item in event.get("items", []):
            body = item.get("body") if isinstance(item, dict) else None
            if isinstance(body, dict) and body.get("ref") not in self.stored:
                raise Refused("an item names bytes never uploaded")
        if event.get("type") == REQUEST:
            return self._request(event, meta)
        if event.get("type") == RESULT:
            return self._result(event, meta)
        raise Refused("not an elicitation event")


def serve(principal: str) -> int:
    token = os.environ.get("AHP_ELICITATION_TOKEN")
    upload_token = os.environ.get("AHP_ELICITATION_UPLOAD_TOKEN")
    if not token or not upload_token:
        print("elicitation: AHP_ELICITATION_TOKEN and _UPLOAD_TOKEN are required", file=sys.stderr)
        return 2
    fault = os.environ.get("UPSTREAM_EMULATOR_FAULT")
    receiver = Receiver(principal, fault == "elicitation-accept-all")
    any_token = fault == "elicitation-any-token"

    def route(request: Request) -> Reply:
        if request.method != "POST":
            return Reply(404, {"error": "not found"})
        wanted = upload_token if request.path == "/upload" else token
        if not any_token and not bearer_ok(request, wanted):
            return Reply(401, {"error": "unauthorized"}, close=True)
        if request.path == "/upload":
            return receiver.upload(request)
        if request.path == "/hooks/intercept":
            return receiver.intercept(request)
        if request.path == "/receipts":
            with receiver.lock:
                return Reply(200, list(receiver.receipts))
        return Reply(404, {"error": "not found"})

    listener = Listener(route)
    print(json.dumps({"endpoint": listener.url}), flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()  # served until the driver terminates it
    return 0


def send(plan: dict[str, Any]) -> int:
    parts = urlsplit(plan["endpoint"])
    results = []
    for step in plan["steps"]:
        credential = plan.get("uploadToken") if step["path"] == "/upload" else plan.get("token")
        headers = dict(step.get("headers", {}))
        if credential:
            headers["Authorization"] = f"Bearer {credential}"
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=15)
        try:
            path = parts.path.rstrip("/") + step["path"]
            connection.request("POST", path, base64.b64decode(step["bytes"]), headers)
            answer = connection.getresponse()
            results.append({"status": answer.status, "body": answer.read().decode("utf-8")})
        finally:
            connection.close()
    print(json.dumps(results))
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["client"]:
        return send(json.load(sys.stdin))
    if len(argv) == 3 and argv[0] == "server" and argv[2].startswith("authenticated:"):
        return serve(argv[2])
    print("usage: elicitation.py server SCHEMA_DIR authenticated:SENDER | client", file=sys.stderr)
    return 2
