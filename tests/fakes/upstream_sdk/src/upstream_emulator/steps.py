"""The lifecycle suite's step engine: one scenario's steps against the server.

Per request key a state (pending, staged, published, cancelled) and per slot
the reply that arrives for it. Ops: `send` (the request as it is, into a slot;
`bypassSDK` changes nothing here), `wait`, `release`, `receive` (stage the
slot's reply, or list the slot in `ignored` when its request is cancelled,
staged or published), `accept` (evaluate the staged reply, `accept.py`, and
publish it), `cancel`, `failOpen` (publish the original operation allowed,
only while pending) and `observe` (the settled event as `hooks/observe`; over
HTTP the answer must be 200 exactly, as upstream's client requires, then
`/wait-observed`). Marks: `acquired`, `accepted`, `cancelled`.

Not implemented, the row reported unsupported with `actual` null before any
step runs: `upload`, `emit`, chains, any other op.
"""

from __future__ import annotations

import copy
from typing import Any

from upstream_emulator import accept
from upstream_emulator.jsonequal import same
from upstream_emulator.peer import Peer, PeerError, Pending

OPS = ("send", "wait", "release", "receive", "accept", "cancel", "failOpen", "observe")


class RowFailed(Exception):
    pass


def run_row(scenario: dict[str, Any], peer: Peer) -> dict[str, Any]:
    sid = scenario["id"]
    if "chain" in scenario:
        return _unsupported(sid, "op 'chains' (serial observation chains) is not implemented")
    steps = scenario.get("steps")
    if not isinstance(steps, list):
        return _unsupported(sid, "no steps array")
    for step in steps:
        op = step.get("op") if isinstance(step, dict) else None
        if op not in OPS:
            return _unsupported(sid, f"step op {op!r} is not implemented")
    run = StepRun(scenario, peer)
    try:
        for step in steps:
            getattr(run, "op_" + step["op"])(step)
    except accept.Unsupported as exc:
        return _unsupported(sid, f"accept: {exc}")
    except (RowFailed, PeerError, KeyError) as exc:
        return {"id": sid, "status": "failed", "actual": run.actual, "error": f"steps: {exc}"}
    # `expected` is read only here, to set this client's own status
    passed = same(run.actual, scenario.get("expected"))
    entry = {"id": sid, "status": "passed" if passed else "failed", "actual": run.actual}
    return entry if passed else {**entry, "error": "Expected outcome mismatch"}


def _unsupported(sid: str, why: str) -> dict[str, Any]:
    return {"id": sid, "status": "unsupported", "actual": None, "error": why}


class StepRun:
    def __init__(self, scenario: dict[str, Any], peer: Peer) -> None:
        self.sid = scenario["id"]
        self.requests: dict[str, Any] = scenario.get("requests") or {}
        self.peer = peer
        self.state: dict[str, str] = {}
        self.staged: dict[str, Any] = {}
        self.slots: dict[str, tuple[str, Pending]] = {}
        self.observed: dict[str, int] = {}
        self.actual: dict[str, Any] = {
            "published": [],
            "cancelled": [],
            "ignored": [],
            "states": {},
            "observations": [],
            "uploadStatuses": [],
        }

    def rid(self, key: str) -> str:
        return str(self.requests[key]["id"])

    def mark(self, kind: str, key: str) -> None:
        self.peer.control.call("/mark", {"scenario": self.sid, "kind": kind, "id": self.rid(key)})

    def publish(self, key: str, result: dict[str, Any]) -> None:
        self.actual["published"].append(self.rid(key))
        self.actual["states"][self.rid(key)] = result
        self.state[key] = "published"
        self.mark("accepted", key)

    def op_send(self, step: dict[str, Any]) -> None:
        key = step["key"]
        self.slots[step["slot"]] = (key, self.peer.send(self.requests[key]))
        self.state.setdefault(key, "pending")

    def op_wait(self, step: dict[str, Any]) -> None:
        self.peer.control.call("/wait", {"id": self.rid(step["key"]), "count": step["count"]})

    def op_release(self, step: dict[str, Any]) -> None:
        self.peer.control.call("/release", {"id": self.rid(step["key"])})

    def op_receive(self, step: dict[str, Any]) -> None:
        key, pending = self.slots[step["slot"]]
        reply = pending.result()
        if self.state.get(key) in ("cancelled", "staged", "published"):
            self.actual["ignored"].append(step["slot"])
            return
        self.staged[key] = reply
        self.state[key] = "staged"
        self.mark("acquired", key)

    def op_accept(self, step: dict[str, Any]) -> None:
        key = step["key"]
        if self.state.get(key) == "staged":
            self.publish(key, accept.evaluate(self.requests[key], self.staged.pop(key)))

    def op_cancel(self, step: dict[str, Any]) -> None:
        key = step["key"]
        self.mark("cancelled", key)
        self.actual["cancelled"].append(self.rid(key))
        self.staged.pop(key, None)
        self.state[key] = "cancelled"

    def op_failOpen(self, step: dict[str, Any]) -> None:
        key = step["key"]
        if self.state.get(key) == "pending":
            original = self.requests[key]["params"]["event"]["tool"]["input"]
            result = {"decision": "allow", "executed": True, "input": original, "messages": []}
            self.publish(key, copy.deepcopy(result))

    def op_observe(self, step: dict[str, Any]) -> None:
        key, request = step["key"], self.requests[step["key"]]
        event = copy.deepcopy(request["params"]["event"])
        settled = self.actual["states"].get(self.rid(key))
        if settled is not None:
            event["tool"]["input"] = copy.deepcopy(settled["input"])
        if "items" in step:
            event["items"] = copy.deepcopy(step["items"])
        version = request["params"].get("protocolVersion", "draft")
        message = {
            "jsonrpc": "2.0",
            "method": "hooks/observe",
            "params": {"protocolVersion": version, "event": event},
        }
        status = self.peer.notify(message)
        if status is not None and status != 200:
            raise RowFailed(f"Observation transport failure: HTTP {status}")
        event_id = event["id"]
        count = self.observed[event_id] = self.observed.get(event_id, 0) + 1
        self.peer.control.call("/wait-observed", {"eventId": event_id, "count": count})
        seen = {"eventId": event_id, "subscription": step["subscription"]}
        self.actual["observations"].append({**seen, "input": event["tool"]["input"]})
