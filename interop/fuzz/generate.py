"""Seeded random core scenarios: canonical requests, responses valid or not, no expectations.

Row `i` of seed `S` depends only on `(S, i)` and the boundary list, so a
disagreement found in a run of 50,000 rows is reproduced by the same seed
with any count above `i`. The generator knows what a request may carry (the
per-event capability bounds of the canonical schema) and which readings the
protocol leaves undefined (docs/scenarios.md, "Undefined by the protocol"):
it never generates those, and where a row touches an undefined key anyway
(the effective answer of a result that carries none) it lists the key in
`FuzzCase.ignore`. It knows nothing about what a client should derive.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass
from typing import Any

from interop.fuzz import values as v

SOURCE = "urn:ahp-interop:fuzz"
TIME = "2026-05-04T08:30:00Z"
PROTOCOL = "draft"
CORE_EFFECTS = ("deny", "allow", "ask", "modify", "message", "return", "flow", "inject")
TARGETS = (
    "input",
    "output",
    "prompt",
    "request",
    "response",
    "content",
    "instructions",
    "summary",
    "workspace",
)
# How many effects a response carries: 0 to 6, most often 1 to 3.
EFFECT_COUNTS = (0, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6)


@dataclass(frozen=True)
class Spec:
    """What one core boundary's request may advertise, and its target's shape."""

    event: str
    target: str
    effects: tuple[str, ...]
    shape: str  # object | messages | assistant | parts | workspace | answer
    returns: str | None = None  # any | messages | parts
    flow: tuple[str, ...] = ()


SPECS: dict[str, Spec] = {
    spec.event: spec
    for spec in (
        Spec(
            "tool.before",
            "input",
            ("deny", "allow", "ask", "modify", "inject", "flow", "return", "message"),
            "object",
            returns="any",
            flow=("stop",),
        ),
        Spec(
            "tool.after",
            "output",
            ("modify", "inject", "flow", "message"),
            "messages",
            flow=("stop", "continue"),
        ),
        Spec(
            "turn.finish.before",
            "response",
            ("modify", "flow", "message"),
            "messages",
            flow=("stop", "continue"),
        ),
        Spec(
            "model.request.before",
            "request",
            ("deny", "modify", "inject", "return", "flow", "message"),
            "messages",
            returns="messages",
            flow=("stop",),
        ),
        Spec(
            "context.compact.before",
            "instructions",
            ("deny", "modify", "return", "inject", "message"),
            "parts",
            returns="parts",
        ),
        Spec("context.compact.after", "summary", ("inject", "modify", "message"), "parts"),
        Spec("user.message.outbound", "content", ("deny", "modify", "message"), "assistant"),
        Spec("user.elicitation.result", "content", ("modify", "message"), "answer"),
        Spec("workspace.change.before", "workspace", ("deny", "modify", "message"), "workspace"),
    )
}
BOUNDARIES = tuple(SPECS)


@dataclass(frozen=True)
class FuzzCase:
    """One generated row: the scenario as a client and a server see it."""

    index: int
    boundary: str
    scenario: dict[str, Any]  # {id, request, response}
    ignore: tuple[str, ...] = ()  # actual keys the protocol leaves undefined here

    @property
    def id(self) -> str:
        return str(self.scenario["id"])


def case_id(seed: int, index: int) -> str:
    return f"fuzz-{seed}-{index:06d}"


# ---------------------------------------------------------------- events


def _tool_input(rng: random.Random, name: str) -> dict[str, Any]:
    tool_input = v.obj(rng, depth=2)
    if rng.random() < 0.6:
        tool_input["options"] = v.obj(rng, depth=1, size=rng.randrange(1, 4))
    if name == "task":
        tool_input["task"] = rng.choice((1, 3, 2.0, 0, -2, 1.5, True, "4", None))
    return tool_input


def _event(rng: random.Random, spec: Spec) -> dict[str, Any]:
    """The event payload after the envelope (`type` first); holds the target's original."""
    event: dict[str, Any] = {"type": spec.event, "session": {"id": "fuzz-session"}}
    withheld = rng.random() < 0.25
    if spec.event in ("tool.before", "tool.after"):
        name = rng.choice(("read_file", "shell", "task", "search"))
        tool = {"name": name, "kind": "fuzz", "origin": "native", "input": _tool_input(rng, name)}
        event.update(call={"id": "call-1"}, tool=tool, path="native")
        if spec.event == "tool.after":
            event.update(
                outcome="ok",
                execution={"status": "executed"},
                items=v.messages(rng, "out-", withheld=withheld),
            )
    elif spec.event == "turn.finish.before":
        event.update(
            turn={"id": "turn-1"},
            outcome=rng.choice(("completed", "failed", "cancelled", "max_iterations")),
            continuationCount=rng.randrange(4),
            items=v.messages(rng, "resp-", withheld=withheld),
        )
    elif spec.event == "model.request.before":
        event.update(
            turn={"id": "turn-1"},
            model={"id": "fuzz-model", "provider": "example"},
            attempt={"id": "attempt-1", "number": 1},
            params={},
            items=v.messages(rng, "req-", withheld=withheld),
        )
    elif spec.event == "context.compact.before":
        event.update(trigger=rng.choice(("auto", "manual", "hook")), items=v.messages(rng, "ctx-"))
        if rng.random() < 0.7:
            event["instructions"] = v.text_parts(rng, "ins-", withheld=withheld)
    elif spec.event == "context.compact.after":
        event.update(
            summary=v.text_parts(rng, "sum-", withheld=withheld),
            removed=[{"id": "old-1"}],
            execution={"status": "executed"},
        )
    elif spec.event == "user.message.outbound":
        messages = v.messages(rng, "say-", role="assistant", withheld=withheld)
        event["message"] = {"channel": "chat", "messages": messages}
    elif spec.event == "user.elicitation.result":
        event["parentEventId"] = "fuzz-elicitation-request"
        event["elicitation"] = _elicitation(rng)
    else:
        workspace: dict[str, Any] = {
            "kind": rng.choice(("cwd", "roots", "switch")),
            "change": v.workspace_change(rng),
        }
        if rng.random() < 0.3:
            workspace["prior"] = v.workspace_change(rng)
        event["workspace"] = workspace
    return event


def _elicitation(rng: random.Random) -> dict[str, Any]:
    mode = "form" if rng.random() < 0.8 else "url"
    action = "accept" if rng.random() < 0.75 else rng.choice(("decline", "cancel"))
    elicitation: dict[str, Any] = {"server": "calendar", "mode": mode, "action": action}
    if rng.random() < 0.1:
        return elicitation
    result: dict[str, Any] = {"action": action}
    if mode == "form" and action == "accept":
        result["content"] = v.answer(rng)
    part: dict[str, Any] = {"id": "elicit-result", "kind": "text", "mediaType": "text/plain"}
    roll = rng.random()
    if roll < 0.8:
        part.update(selection="body", text=json.dumps(result, separators=(",", ":")))
    elif roll < 0.9:
        part["selection"] = rng.choice(("metadata", "omit"))
    else:
        part.update(selection="body", gap={"reason": "withheld by policy"})
    elicitation["result"] = part
    return elicitation


def original_value(spec: Spec, event: dict[str, Any]) -> Any:
    """The target's value in the event (None for an answer the result does not carry)."""
    if spec.event in ("tool.before",):
        return event["tool"]["input"]
    if spec.event in ("tool.after", "turn.finish.before", "model.request.before"):
        return event["items"]
    if spec.event == "context.compact.before":
        return event.get("instructions", [])
    if spec.event == "context.compact.after":
        return event["summary"]
    if spec.event == "user.message.outbound":
        return event["message"]["messages"]
    if spec.event == "workspace.change.before":
        return event["workspace"]["change"]
    return editable_answer(event)


def editable_answer(event: dict[str, Any]) -> dict[str, Any] | None:
    """The answer object of an accepted form result that carries its body, else None."""
    elicitation = event.get("elicitation", {})
    part = elicitation.get("result")
    if elicitation.get("mode") != "form" or elicitation.get("action") != "accept":
        return None
    if not isinstance(part, dict) or part.get("selection") != "body" or "gap" in part:
        return None
    try:
        parsed = json.loads(part.get("text", ""))
    except (TypeError, ValueError):
        return None
    content = parsed.get("content") if isinstance(parsed, dict) else None
    return content if isinstance(content, dict) else None


# ---------------------------------------------------------------- capabilities and state


def _subset(rng: random.Random, items: tuple[str, ...], keep: float) -> list[str]:
    chosen = [item for item in items if rng.random() < keep]
    rng.shuffle(chosen)
    return chosen


def _capabilities(rng: random.Random, spec: Spec) -> dict[str, Any]:
    effects = _subset(rng, spec.effects, 0.7)
    caps: dict[str, Any] = {"effects": effects}
    if "modify" in effects:
        grant = rng.choice(((True, True), (True, False), (False, True)))
        caps["modify"] = {spec.target: {"replace": grant[0], "merge": grant[1]}}
    if "flow" in effects:
        operations = _subset(rng, spec.flow, 0.7) or [rng.choice(spec.flow)]
        block: dict[str, Any] = {"operations": operations}
        if "continue" in operations:
            remaining = rng.choice((0, 1, 1, 2, 3))
            block["remainingContinuations"] = _maybe_float(rng, remaining)
            block["continuationCount"] = _maybe_float(rng, rng.randrange(4))
            if rng.random() < 0.5:
                block["maxContinuations"] = remaining + rng.randrange(3)
        caps["flow"] = block
    if "inject" in effects:
        delivery = _subset(rng, ("now", "next_turn"), 0.6) or ["now"]
        caps["inject"] = {"context": {"append": True, "deliverAt": delivery}}
    if rng.random() < 0.05:
        caps["org.example.hint"] = {"effects": list(CORE_EFFECTS)}  # unknown: ignored
    return caps


def _maybe_float(rng: random.Random, number: int) -> int | float:
    """Now and then an integer written as `2.0`: the same JSON number by value."""
    return float(number) if rng.random() < 0.15 else number


def can_continue(caps: dict[str, Any]) -> bool:
    """An incoming `continue` is only defined where the request can continue."""
    flow = caps.get("flow", {})
    return "continue" in flow.get("operations", []) and flow.get("remainingContinuations", 0) >= 1


def _state(rng: random.Random, caps: dict[str, Any]) -> dict[str, Any] | None:
    if rng.random() < 0.15:
        return None
    state: dict[str, Any] = {
        "permission": rng.choice(("none", "none", "allow", "ask", "deny")),
        "candidate": None,
    }
    if rng.random() < 0.45:
        candidate: dict[str, Any] = {
            "value": rng.choice(v.FALSY) if rng.random() < 0.4 else v.value(rng)
        }
        if rng.random() < 0.5:
            candidate["provenance"] = {"backend": "org.example.cache"}
        state["candidate"] = candidate
    flows = ["none", "stop"] + (["continue", "continue"] if can_continue(caps) else [])
    if rng.random() < 0.4:
        state["flow"] = rng.choice(flows)
    return state


# ---------------------------------------------------------------- effects


def target_value(rng: random.Random, spec: Spec, *, broken: bool = False) -> Any:
    """A modify value for the boundary's target: its shape, or deliberately not."""
    if spec.shape == "object":
        if broken:
            return rng.choice(([1, 2], "input", None, 3))
        value = v.obj(rng, depth=2)
        if rng.random() < 0.3:
            value["task"] = rng.choice((1, 2, 3.0, 0, -1, 2.5, False, "2"))
        return value
    if spec.shape in ("messages", "assistant"):
        role = "assistant" if spec.shape == "assistant" and rng.random() < 0.8 else None
        if broken and rng.random() < 0.3:
            return rng.choice(({"id": "m"}, v.text_parts(rng, "bare-", size=1), "text"))
        return v.messages(rng, "mod-", role=role, broken=broken, size=rng.randrange(1, 3))
    if spec.shape == "parts":
        if broken and rng.random() < 0.3:
            return rng.choice(({"kind": "text"}, v.messages(rng, "msg-", size=1)))
        return v.text_parts(rng, "mod-", broken=broken, size=rng.randrange(1, 3))
    if spec.shape == "workspace":
        if broken and rng.random() < 0.2:
            return ["/work/app"]
        return v.workspace_change(rng, broken=broken)
    if broken and rng.random() < 0.2:
        return "slot=10:00"
    return v.answer(rng, broken=broken)


def _return_value(rng: random.Random, spec: Spec, *, broken: bool = False) -> Any:
    if spec.returns == "messages":
        if broken and rng.random() < 0.3:
            return rng.choice(({"answer": 42}, "text", v.text_parts(rng, "r-", size=1)))
        return v.messages(rng, "ret-", broken=broken, size=rng.randrange(0, 3))
    if spec.returns == "parts":
        if broken and rng.random() < 0.3:
            return rng.choice(({"summary": "x"}, v.messages(rng, "r-", size=1)))
        return v.text_parts(rng, "ret-", broken=broken, size=rng.randrange(0, 3))
    return rng.choice(v.FALSY) if rng.random() < 0.3 else v.value(rng)


def _inject(rng: random.Random, delivery: list[str], *, broken: bool = False) -> dict[str, Any]:
    deliver_at = rng.choice(delivery) if delivery else rng.choice(("now", "next_turn"))
    return {
        "type": "inject",
        "target": "context",
        "operation": "append",
        "deliverAt": deliver_at,
        "value": v.messages(rng, "inj-", broken=broken, size=rng.randrange(1, 3)),
    }


def _well_formed(rng: random.Random, kind: str, spec: Spec, ctx: _Context) -> dict[str, Any]:
    """An effect of type `kind` whose own fields are right (advertised or not)."""
    if kind == "deny":
        effect: dict[str, Any] = {"type": "deny", "reason": rng.choice(("blocked", "policy x"))}
        if rng.random() < 0.2:
            effect["code"] = "org.example.policy"
        return effect
    if kind in ("allow", "ask"):
        return {"type": kind}
    if kind == "message":
        return {"type": "message", "text": rng.choice(v.STRINGS)}
    if kind == "return":
        return {"type": "return", "value": _return_value(rng, spec, broken=rng.random() < 0.15)}
    if kind == "modify":
        grant = ctx.caps.get("modify", {}).get(spec.target, {})
        operations = [op for op in ("replace", "merge") if grant.get(op)] or ["replace", "merge"]
        effect = {"type": "modify", "target": spec.target, "operation": rng.choice(operations)}
        roll = rng.random()
        if roll < 0.2 and ctx.original is not None:
            effect.update(operation="replace", value=_restored(rng, ctx.original))
        elif roll < 0.3 and isinstance(ctx.original, dict) and ctx.original:
            key = rng.choice(sorted(ctx.original))
            effect.update(operation="merge", value={key: copy.deepcopy(ctx.original[key])})
        elif roll < 0.6 and isinstance(ctx.original, dict) and ctx.original:
            nested = sorted(k for k, val in ctx.original.items() if isinstance(val, dict) and val)
            key = rng.choice(nested if nested and rng.random() < 0.7 else sorted(ctx.original))
            effect["value"] = {key: _overlapping(rng, ctx.original[key])}
            if "merge" in operations:
                effect["operation"] = "merge"  # where shallow and deep merges differ
        else:
            effect["value"] = target_value(rng, spec, broken=rng.random() < 0.15)
        return effect
    if kind == "flow":
        operations = ctx.caps.get("flow", {}).get("operations") or list(spec.flow or ("stop",))
        if rng.choice(operations) == "stop":
            return {"type": "flow", "operation": "stop", "reason": "halt"}
        effect = {"type": "flow", "operation": "continue"}
        if rng.random() < 0.6:
            effect["instruction"] = rng.choice(("keep going", "check tests", "x"))
        return effect
    delivery = ctx.caps.get("inject", {}).get("context", {}).get("deliverAt", [])
    return _inject(rng, delivery, broken=rng.random() < 0.1)


def _overlapping(rng: random.Random, current: Any) -> Any:
    """A new value for an existing key: for an object, one that shares some of its keys."""
    if not isinstance(current, dict) or not current:
        return v.value(rng)
    changed = {k: val for k, val in current.items() if rng.random() < 0.5}
    changed[rng.choice(sorted(current))] = v.value(rng, depth=1)
    return changed


def _restored(rng: random.Random, original: Any) -> Any:
    """The original value again; objects with their keys in another order."""
    restored = copy.deepcopy(original)
    if isinstance(restored, dict):
        items = list(restored.items())
        rng.shuffle(items)
        restored = dict(items)
    return restored


def _malformed(rng: random.Random, spec: Spec, ctx: _Context) -> Any:
    """An effect whose own fields fail the effect schema."""
    choices: tuple[Any, ...] = (
        {"type": "deny"},
        {"type": "deny", "reason": ""},
        {"type": "deny", "reason": "x", "code": "not reverse dns"},
        {"type": "allow", "why": "extra"},
        {"type": "message", "text": 5},
        {"type": "message"},
        {"type": "return"},
        {"type": "modify", "target": spec.target, "value": {}},
        {"type": "modify", "target": spec.target, "operation": "patch", "value": {}},
        {"type": "modify", "target": spec.target, "operation": "merge", "value": {}, "path": "a"},
        {"type": "modify", "target": "everything", "operation": "merge", "value": {}},
        {"type": "flow", "operation": "stop"},
        {"type": "flow", "operation": "stop", "reason": ""},
        {"type": "flow", "operation": "continue", "instruction": ""},
        {"type": "flow", "operation": "pause", "reason": "x"},
        {"type": "inject", "target": "context", "operation": "append", "value": []},
        {
            "type": "inject",
            "target": "context",
            "operation": "prepend",
            "deliverAt": "now",
            "value": [],
        },
        "deny",
        None,
        [{"type": "allow"}],
    )
    return rng.choice(choices)


@dataclass
class _Context:
    caps: dict[str, Any]
    original: Any


def _effect(rng: random.Random, spec: Spec, ctx: _Context, *, faulty: bool) -> Any:
    """An advertised, well-formed effect, or (`faulty`) one drawn to be wrong somehow."""
    advertised = ctx.caps["effects"]
    roll = rng.random() if faulty else 0.0
    if roll < 0.1 and advertised:
        return _well_formed(rng, rng.choice(advertised), spec, ctx)
    if roll < 0.45:
        unadvertised = [e for e in CORE_EFFECTS if e not in advertised]
        if unadvertised:
            return _well_formed(rng, rng.choice(unadvertised), spec, ctx)
    if roll < 0.6:
        target = rng.choice([t for t in TARGETS if t != spec.target])
        return {"type": "modify", "target": target, "operation": "replace", "value": []}
    if roll < 0.7:
        return {"type": rng.choice(("org.example.audit", "escalate", "Deny"))}
    return _malformed(rng, spec, ctx)


def _edit_and_restore(
    rng: random.Random, spec: Spec, ctx: _Context, effects: list[Any]
) -> list[Any]:
    """Change the target, then put the original value back: the final value is the original."""
    grant = ctx.caps.get("modify", {}).get(spec.target)
    if grant is None or ctx.original is None:
        return effects
    changed: dict[str, Any] = {"type": "modify", "target": spec.target}
    if grant["replace"]:
        changed.update(operation="replace", value=target_value(rng, spec))
        restore: dict[str, Any] = {"type": "modify", "target": spec.target}
        restore["operation"] = "replace"
        restore["value"] = _restored(rng, ctx.original)
    elif isinstance(ctx.original, dict) and ctx.original:
        key = rng.choice(sorted(ctx.original))
        changed.update(operation="merge", value={key: v.value(rng)})
        restore = {"type": "modify", "target": spec.target, "operation": "merge"}
        restore["value"] = {key: copy.deepcopy(ctx.original[key])}
    else:
        return effects
    at = rng.randrange(len(effects) + 1)
    return [*effects[:at], changed, *effects[at:], restore]


def _response(rng: random.Random, sid: str, spec: Spec, ctx: _Context) -> Any:
    count = rng.choice(EFFECT_COUNTS)
    # Most responses are well formed and advertised (their values may still be
    # wrong for the boundary); the rest carry one effect drawn to be wrong.
    faulty = rng.randrange(count) if count and rng.random() < 0.3 else -1
    effects = [_effect(rng, spec, ctx, faulty=i == faulty) for i in range(count)]
    if faulty < 0 and rng.random() < 0.15:
        effects = _edit_and_restore(rng, spec, ctx, effects)
    if effects and rng.random() < 0.15:
        effects.insert(rng.randrange(len(effects) + 1), copy.deepcopy(rng.choice(effects)))
    result: dict[str, Any] = {"protocolVersion": PROTOCOL, "effects": effects}
    if rng.random() < 0.05:
        result["org.example.trace"] = {"ignored": True}  # unknown envelope field: ignored
    response: dict[str, Any] = {"jsonrpc": "2.0", "id": sid, "result": result}
    if rng.random() >= 0.05:
        return response
    fault = rng.randrange(10)
    if fault == 0:
        response["id"] = sid + "-other"
    elif fault == 1:
        response["id"] = rng.choice((1, None))
    elif fault == 2:
        del response["id"]
    elif fault == 3:
        response["jsonrpc"] = "1.0"
    elif fault == 4:
        response["error"] = {"code": -32003, "message": "backend unavailable"}
    elif fault == 5:
        result["protocolVersion"] = "0.1"
    elif fault == 6:
        result["effects"] = {"type": "deny", "reason": "x"}
    elif fault == 7:
        del result["effects"]
    elif fault == 8:
        response["result"] = rng.choice((None, [], "ok"))
    else:
        return rng.choice((None, [], "response", 7))
    return response


# ---------------------------------------------------------------- rows


def request_for(sid: str, event: dict[str, Any], caps: Any, state: Any) -> dict[str, Any]:
    full = {"id": sid, "source": SOURCE, "type": event["type"], "time": TIME}
    full.update({k: val for k, val in event.items() if k != "type"})
    params: dict[str, Any] = {"protocolVersion": PROTOCOL, "event": full, "capabilities": caps}
    if state is not None:
        params["state"] = state
    return {"jsonrpc": "2.0", "id": sid, "method": "hooks/intercept", "params": params}


def undefined_keys(boundary: str, event: dict[str, Any]) -> tuple[str, ...]:
    """Keys of `actual` the protocol leaves undefined for this event."""
    if boundary == "user.elicitation.result" and editable_answer(event) is None:
        return ("effective",)  # the effective answer of a result that carries none
    return ()


def generate_case(seed: int, index: int, boundaries: tuple[str, ...] = BOUNDARIES) -> FuzzCase:
    rng = random.Random(f"ahp-fuzz:{seed}:{index}")
    spec = SPECS[rng.choice(boundaries)]
    sid = case_id(seed, index)
    event = _event(rng, spec)
    caps = _capabilities(rng, spec)
    state = _state(rng, caps)
    ctx = _Context(caps, original_value(spec, event))
    response = _response(rng, sid, spec, ctx)
    request = request_for(sid, event, caps, state)
    scenario = {"id": sid, "request": request, "response": response}
    return FuzzCase(index, spec.event, scenario, undefined_keys(spec.event, event))


def generate(
    seed: int, count: int, boundaries: tuple[str, ...] = BOUNDARIES, start: int = 0
) -> list[FuzzCase]:
    return [generate_case(seed, index, boundaries) for index in range(start, start + count)]
