"""Minimisation: shrink a disagreeing row while the same clients still disagree the same way.

Each round proposes simpler variants of every row being minimised (fewer
effects, smaller values, simpler state, fewer advertised effects, a smaller
original value), runs all of them through the clients in one batch, and
keeps the smallest variant that still shows the row's class (the same keys
differ). Requests stay canonically valid: a variant whose request fails the
canonical schema is never sent. A row is done when no variant disagrees.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from interop.fuzz.compare import Disagreement, compare
from interop.fuzz.execute import ClientRows
from interop.fuzz.generate import SPECS, FuzzCase
from interop.schema import SchemaSet

REQUEST_SCHEMA = "intercept-request.schema.json"
PER_ROW = 80  # variants tried per row and round
Run = Callable[[list[FuzzCase], str], dict[str, ClientRows]]


def size(case: FuzzCase) -> tuple[int, int]:
    """Fewest effects first, then the shortest JSON (an incoming permission other
    than `none` counts as longer than `none`)."""
    scenario = case.scenario
    state = scenario["request"]["params"].get("state")
    weight = 8 if isinstance(state, dict) and state.get("permission") != "none" else 0
    return (len(effects_of(scenario["response"]) or ()), len(json.dumps(scenario)) + weight)


def effects_of(response: Any) -> list[Any] | None:
    result = response.get("result") if isinstance(response, dict) else None
    effects = result.get("effects") if isinstance(result, dict) else None
    return effects if isinstance(effects, list) else None


def smaller(value: Any) -> Iterator[Any]:
    """Simpler JSON values than `value`, simplest first."""
    if isinstance(value, list):
        if value:
            yield []
        for index in range(len(value)):
            yield value[:index] + value[index + 1 :]
        for index, item in enumerate(value):
            for simpler in smaller(item):
                yield [*value[:index], simpler, *value[index + 1 :]]
    elif isinstance(value, dict):
        if value:
            yield {}
        for key in value:
            yield {k: val for k, val in value.items() if k != key}
        for key, item in value.items():
            for simpler in smaller(item):
                yield {**value, key: simpler}
    elif isinstance(value, str):
        if value not in ("", "a"):
            yield "a"
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float) and value not in (0, 1):
        yield 0
        yield 1


def rename(scenario: dict[str, Any], new_id: str) -> dict[str, Any]:
    """The scenario under another id; a deliberately wrong response id stays wrong."""
    out = copy.deepcopy(scenario)
    old = out["id"]
    out["id"] = new_id
    out["request"]["id"] = new_id
    out["request"]["params"]["event"]["id"] = new_id
    response = out["response"]
    if isinstance(response, dict) and isinstance(response.get("id"), str):
        if response["id"] == old:
            response["id"] = new_id
        elif response["id"].startswith(old):
            response["id"] = new_id + response["id"][len(old) :]
    return out


def _with_response(scenario: dict[str, Any], effects: list[Any]) -> dict[str, Any]:
    out = copy.deepcopy(scenario)
    out["response"]["result"]["effects"] = effects
    return out


def _response_variants(scenario: dict[str, Any]) -> Iterator[dict[str, Any]]:
    effects = effects_of(scenario["response"])
    if effects is None:
        return
    if len(effects) > 1:
        for index in range(len(effects)):
            yield _with_response(scenario, [effects[index]])
        for index in range(len(effects)):
            yield _with_response(scenario, effects[:index] + effects[index + 1 :])
    result = scenario["response"]["result"]
    for key in sorted(set(result) - {"protocolVersion", "effects"}):
        out = copy.deepcopy(scenario)
        del out["response"]["result"][key]
        yield out
    for index, effect in enumerate(effects):
        if not isinstance(effect, dict) or "value" not in effect:
            continue
        for count, simpler in enumerate(smaller(effect["value"])):
            if count >= 12:
                break
            changed = copy.deepcopy(effects)
            changed[index]["value"] = simpler
            yield _with_response(scenario, changed)


def _used_effects(scenario: dict[str, Any]) -> set[str]:
    return {
        e["type"]
        for e in effects_of(scenario["response"]) or []
        if isinstance(e, dict) and isinstance(e.get("type"), str)
    }


def _request_variants(scenario: dict[str, Any], target_path: tuple[str, ...]) -> Iterator[Any]:
    params = scenario["request"]["params"]
    state = params.get("state")
    if state is not None:
        out = copy.deepcopy(scenario)
        del out["request"]["params"]["state"]
        yield out
        for key, simple in (("candidate", None), ("permission", "none")):
            if state.get(key) != simple:
                out = copy.deepcopy(scenario)
                out["request"]["params"]["state"][key] = simple
                yield out
        if "flow" in state:
            out = copy.deepcopy(scenario)
            del out["request"]["params"]["state"]["flow"]
            yield out
        candidate = state.get("candidate")
        if isinstance(candidate, dict):
            if "provenance" in candidate:
                out = copy.deepcopy(scenario)
                del out["request"]["params"]["state"]["candidate"]["provenance"]
                yield out
            for count, simpler in enumerate(smaller(candidate.get("value"))):
                if count >= 6:
                    break
                out = copy.deepcopy(scenario)
                out["request"]["params"]["state"]["candidate"]["value"] = simpler
                yield out
    caps = params["capabilities"]
    used = _used_effects(scenario)
    for effect in caps.get("effects", []):
        if effect in used:
            continue
        out = copy.deepcopy(scenario)
        new_caps = out["request"]["params"]["capabilities"]
        new_caps["effects"].remove(effect)
        new_caps.pop(effect, None)
        yield out
    for key in sorted(set(caps) - {"effects", "modify", "flow", "inject"}):
        out = copy.deepcopy(scenario)
        del out["request"]["params"]["capabilities"][key]
        yield out
    event = params["event"]
    original = _at(event, target_path)
    for count, simpler in enumerate(smaller(original)):
        if count >= 12:
            break
        out = copy.deepcopy(scenario)
        _put(out["request"]["params"]["event"], target_path, simpler)
        yield out


def target_path(boundary: str) -> tuple[str, ...]:
    """Where the boundary's modify target lives in the event (the elicitation answer
    is serialized inside text, so it is not shrunk)."""
    return {
        "tool.before": ("tool", "input"),
        "tool.after": ("items",),
        "turn.finish.before": ("items",),
        "model.request.before": ("items",),
        "context.compact.before": ("instructions",),
        "context.compact.after": ("summary",),
        "user.message.outbound": ("message", "messages"),
        "workspace.change.before": ("workspace", "change"),
    }.get(boundary, ())


def _at(node: Any, path: tuple[str, ...]) -> Any:
    if not path:
        return None
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _put(node: Any, path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def variants(case: FuzzCase, schema: SchemaSet, limit: int = PER_ROW) -> list[dict[str, Any]]:
    """Simpler scenarios than `case`'s, each with a canonically valid request."""
    assert case.boundary in SPECS
    out: list[dict[str, Any]] = []
    seen = {json.dumps(case.scenario, sort_keys=True)}
    path = target_path(case.boundary)
    for candidate in (*_response_variants(case.scenario), *_request_variants(case.scenario, path)):
        key = json.dumps(candidate, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        if schema.issue(REQUEST_SCHEMA, candidate["request"]) is not None:
            continue
        out.append(candidate)
        if len(out) >= limit:
            break
    return out


def minimise(
    targets: list[Disagreement], run: Run, schema: SchemaSet, max_rounds: int = 40
) -> dict[str, Disagreement]:
    """The smallest still-disagreeing variant of each target, keyed by the target's id."""
    best = {d.case.id: d for d in targets}
    active = set(best)
    for round_number in range(max_rounds):
        if not active:
            break
        proposals: dict[str, list[FuzzCase]] = {}
        batch: list[FuzzCase] = []
        for origin in sorted(active):
            current = best[origin].case
            cases = [
                replace(current, scenario=rename(s, f"{origin}-m{round_number}-{n}"))
                for n, s in enumerate(variants(current, schema))
            ]
            proposals[origin] = cases
            batch.extend(cases)
        if not batch:
            break
        results = run(batch, f"shrink-{round_number + 1}")
        for origin, cases in proposals.items():
            wanted = best[origin].keys
            found = [
                d
                for d in (
                    compare(c, {name: rows.entries.get(c.id) for name, rows in results.items()})
                    for c in cases
                )
                if d is not None and d.keys == wanted
            ]
            if not found:
                active.discard(origin)
                continue
            chosen = min(found, key=lambda d: size(d.case))
            if size(chosen.case) >= size(best[origin].case):
                active.discard(origin)
                continue
            best[origin] = chosen
    return best
