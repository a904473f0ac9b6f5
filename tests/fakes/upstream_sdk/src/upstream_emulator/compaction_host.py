"""Contract v1's compaction-wire host, emulated from the facts alone (upstream
`interop/compaction_wire_matrix.py` at 8f91ac41, inline text parts, as the
project's research notes record the plan and its output).

`compaction_wire.py host` reads a plan on stdin: `{cases: [{name, before:
[{supplier, failurePolicy}], after}], schema, transport, endpoint, credentials:
{supplier: {token, uploadToken}}, receiverCommand}`. Per case it compacts the
base instructions "base": each supplier is one `hooks/intercept` call, over
HTTP (`POST <endpoint>/hooks/intercept` with that supplier's bearer token) or
over stdio (spawning `receiverCommand + ["stdio", supplier]`, one line in, one
line out). A reply's effects apply all or nothing: a modify of the boundary's
own target (replace, a text-part array), a `return` before (the candidate
summary), a `message`, a `deny` with a reason; anything else fails the call,
and a failure under `fail-closed` ends the boundary. A changed input drops the
candidate. Without a candidate the summary is "summary:" + the instructions.
It prints per case `{name, result: {instructions, summary, generated, applied,
failures, messages, bodies}, trace: [{subscription, request, response}],
downstream}`.

UPSTREAM_EMULATOR_FAULT, for the harness's tests:
- compaction-wire-host-upload: each text is first uploaded to
  `<endpoint>/upload` (the binding before 8f91ac41); a refused upload fails
  the call before it is made;
- compaction-wire-host-trace: the trace shows every reply with no effects;
- compaction-wire-host-leak: a failed reply's messages are kept.
"""

from __future__ import annotations

import copy
import hashlib
import http.client
import json
import os
import subprocess
from typing import Any
from urllib.parse import urlsplit

TARGETS = {"before": "instructions", "after": "summary"}
SOURCE = "urn:ahp:compaction-host"
TIME = "2026-09-15T12:00:00Z"


def _fault() -> str:
    return os.environ.get("UPSTREAM_EMULATOR_FAULT", "")


def _parts(item_id: str, text: str) -> list[dict[str, Any]]:
    return [
        {
            "id": item_id,
            "kind": "text",
            "mediaType": "text/plain",
            "selection": "body",
            "text": text,
        }
    ]


def _text(value: Any) -> str:
    if not isinstance(value, list) or not value:
        raise ValueError("a text value is a non-empty array of text parts")
    texts = []
    for part in value:
        if not isinstance(part, dict) or part.get("kind") != "text":
            raise ValueError("a part that is not text")
        if not isinstance(part.get("text"), str) or "body" in part:
            raise ValueError("text is inline")
        texts.append(part["text"])
    return "".join(texts)


def _post(endpoint: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    parts = urlsplit(endpoint)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=20)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Case:
    def __init__(self, plan: dict[str, Any], case: dict[str, Any]) -> None:
        self.plan = plan
        self.case = case
        self.name = case["name"]
        self.instructions = "base"
        self.candidate: str | None = None
        self.summary: str | None = None
        self.messages: list[str] = []
        self.denied = False
        self.failures: list[dict[str, str]] = []
        self.trace: list[dict[str, Any]] = []
        self.generated = False

    def request(self, boundary: str) -> dict[str, Any]:
        name = self.name
        event: dict[str, Any] = {
            "id": f"{name}:{boundary}",
            "source": SOURCE,
            "time": TIME,
            "session": {"id": name},
            "type": f"context.compact.{boundary}",
        }
        if boundary == "before":
            context = {
                "id": f"{name}:context",
                "role": "user",
                "parts": _parts(f"{name}:context:text", "conversation"),
            }
            event.update(
                trigger="manual",
                items=[context],
                instructions=_parts(f"{name}:instructions", self.instructions),
            )
            effects = ["modify", "message", "return", "deny"]
        else:
            event.update(
                parentEventId=f"{name}:before",
                summary=_parts(f"{name}:summary", self.summary or ""),
                removed=[{"id": f"{name}:context"}],
                execution=(
                    {"status": "executed"}
                    if self.generated
                    else {"status": "skipped", "reason": "supplied_result"}
                ),
            )
            effects = ["modify"]
        target = TARGETS[boundary]
        capabilities = {"effects": effects, "modify": {target: {"replace": True, "merge": False}}}
        return {
            "jsonrpc": "2.0",
            "id": event["id"],
            "method": "hooks/intercept",
            "params": {"protocolVersion": "draft", "event": event, "capabilities": capabilities},
        }

    def call(self, boundary: str, supplier: str) -> list[Any]:
        request = self.request(boundary)
        credential = self.plan["credentials"][supplier]
        if _fault() == "compaction-wire-host-upload":
            text = self.instructions if boundary == "before" else (self.summary or "")
            raw = text.encode()
            headers = {
                "Authorization": "Bearer " + credential["uploadToken"],
                "Content-Type": "application/octet-stream",
                "AHP-Content-SHA256": hashlib.sha256(raw).hexdigest(),
            }
            status, _ = _post(self.plan["endpoint"], "/upload", raw, headers)
            if status != 201:
                raise ValueError(f"upload refused: {status}")
        line = json.dumps(request)
        if self.plan["transport"] == "http":
            headers = {
                "Authorization": "Bearer " + credential["token"],
                "Content-Type": "application/json",
            }
            status, body = _post(self.plan["endpoint"], "/hooks/intercept", line.encode(), headers)
            if status != 200:
                raise ValueError(f"HTTP {status}")
            response = json.loads(body)
        else:
            command = [*self.plan["receiverCommand"], "stdio", supplier]
            child = subprocess.run(
                command, input=line + "\n", capture_output=True, text=True, timeout=20, check=True
            )
            response = json.loads(child.stdout)
        traced = copy.deepcopy(response)
        if _fault() == "compaction-wire-host-trace" and isinstance(traced.get("result"), dict):
            traced["result"]["effects"] = []
        self.trace.append({"subscription": supplier, "request": request, "response": traced})
        if response.get("id") != request["id"] or not isinstance(response.get("result"), dict):
            raise ValueError("correlation, or no result")
        effects = response["result"].get("effects")
        if not isinstance(effects, list):
            raise ValueError("effects must be an array")
        return effects

    def apply(self, boundary: str, effects: list[Any]) -> None:
        """All of a reply's effects, or none (ValueError)."""
        instructions, candidate, summary = self.instructions, self.candidate, self.summary
        messages, denied = list(self.messages), self.denied
        returned = None
        for effect in effects:
            kind = effect.get("type") if isinstance(effect, dict) else None
            if kind == "modify":
                if (
                    effect.get("target") != TARGETS[boundary]
                    or effect.get("operation") != "replace"
                ):
                    raise ValueError("a modify of another target, or not a replace")
                if boundary == "before":
                    instructions = _text(effect.get("value"))
                else:
                    summary = _text(effect.get("value"))
            elif kind == "return" and boundary == "before":
                returned = _text(effect.get("value"))
            elif kind == "message" and boundary == "before" and isinstance(effect.get("text"), str):
                messages.append(effect["text"])
            elif kind == "deny" and boundary == "before" and effect.get("reason"):
                denied = True
            else:
                if _fault() == "compaction-wire-host-leak":
                    self.messages += [
                        e["text"]
                        for e in effects
                        if isinstance(e, dict) and e.get("type") == "message"
                    ]
                raise ValueError(f"effect {kind!r} is not advertised at {boundary}")
        if instructions != self.instructions:
            candidate = None
        if returned is not None:
            candidate = returned
        self.instructions, self.candidate, self.summary = instructions, candidate, summary
        self.messages, self.denied = messages, denied

    def chain(self, boundary: str) -> bool:
        """The boundary's suppliers in order; False when a fail-closed failure ends it."""
        for entry in self.case[boundary]:
            supplier = entry["supplier"]
            try:
                self.apply(boundary, self.call(boundary, supplier))
            except (ValueError, KeyError, OSError, subprocess.SubprocessError):
                self.failures.append({"boundary": boundary, "supplier": supplier})
                if entry["failurePolicy"] == "fail-closed":
                    return False
            if self.denied:
                return False
        return True

    def run(self) -> dict[str, Any]:
        applied = False
        if self.chain("before"):
            self.generated = self.candidate is None
            self.summary = (
                self.candidate if self.candidate is not None else ("summary:" + self.instructions)
            )
            applied = self.chain("after")
        name = self.name
        result = {
            "instructions": _parts(f"{name}:instructions", self.instructions),
            "summary": None if self.summary is None else _parts(f"{name}:summary", self.summary),
            "generated": self.generated,
            "applied": applied,
            "failures": self.failures,
            "messages": self.messages,
            "bodies": {},
        }
        downstream = [self.summary] if applied else []
        return {"name": name, "result": result, "trace": self.trace, "downstream": downstream}


def host(plan: dict[str, Any]) -> int:
    print(json.dumps([Case(plan, case).run() for case in plan["cases"]]), flush=True)
    return 0
