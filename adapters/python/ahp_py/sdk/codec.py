"""Strict JSON: parsing, compact encoding, and typed equality (no I/O).

Every JSON text the adapter reads goes through ``loads``: invalid UTF-8, a
duplicate object key, ``NaN``/``Infinity``, trailing data, or nesting deeper
than ``MAX_DEPTH`` containers makes the text malformed.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 512  # containers; a text nested deeper is malformed


class JsonDecodeError(ValueError):
    """The bytes are not one strict JSON value."""


def _reject_constant(name: str) -> Any:
    raise JsonDecodeError(f"non-standard JSON constant {name}")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise JsonDecodeError(f"duplicate object key {key!r}")
        result[key] = value
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_reject_constant)


def loads(data: bytes | str) -> Any:
    """Parse exactly one JSON value: UTF-8, no NaN/Infinity, no duplicate keys."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonDecodeError(f"invalid UTF-8: {exc.reason}") from None
    else:
        text = data
    stripped = text.strip(" \t\r\n")
    try:
        value, end = _DECODER.raw_decode(stripped)
    except json.JSONDecodeError as exc:
        raise JsonDecodeError(exc.msg) from None
    except RecursionError:
        raise JsonDecodeError(f"nested deeper than {MAX_DEPTH} levels") from None
    if end != len(stripped):
        raise JsonDecodeError("trailing data after the JSON value")
    # Fewer opening brackets than the limit cannot nest deeper: one C-level count
    # spares the walk for every ordinary text.
    if stripped.count("[") + stripped.count("{") > MAX_DEPTH and depth(value) > MAX_DEPTH:
        raise JsonDecodeError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def depth(value: Any) -> int:
    """How many containers deep ``value`` nests (a scalar is 0, ``[]`` is 1)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        stack.extend((child, level) for child in children)
    return deepest


def dumps(value: Any) -> str:
    """Compact JSON text on one line (non-ASCII kept as UTF-8)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dump_bytes(value: Any) -> bytes:
    """UTF-8 bytes of ``dumps``; a lone surrogate (which ``loads`` accepts from a
    ``\\ud800`` escape) is written back as the same escape, never as bad UTF-8."""
    try:
        return dumps(value).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")


def is_number(value: Any) -> bool:
    """A JSON number: int or float, never a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_integer(value: Any) -> bool:
    """A JSON integer by value (2 and 2.0 alike, as JavaScript sees them)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def is_positive_integer(value: Any) -> bool:
    return is_integer(value) and value > 0


def json_equal(left: Any, right: Any) -> bool:
    """Deep equality under JSON typing: booleans are not numbers, 1 equals 1.0,
    object key order is ignored, arrays compare in order and length."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if is_number(left) and is_number(right):
        return bool(left == right)
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, str) and isinstance(right, str):
        return left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(
            json_equal(value, right[key]) for key, value in left.items()
        )
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            json_equal(a, b) for a, b in zip(left, right, strict=True)
        )
    return False


def clone(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists and scalars only)."""
    if isinstance(value, dict):
        return {key: clone(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clone(item) for item in value]
    return value
