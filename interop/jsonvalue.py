"""Strict JSON: loading that rejects duplicate keys, and the one equality helper."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class JsonError(ValueError):
    """A JSON document is unreadable, malformed or has duplicate keys."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # one C call; a repeated key leaves fewer entries than pairs
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise JsonError(f"duplicate key {key!r}")
            seen.add(key)
    return result


def _reject_constant(name: str) -> Any:
    raise JsonError(f"non-standard JSON constant {name}")


def loads(text: str | bytes, *, origin: str | None = None) -> Any:
    """Parse JSON, rejecting duplicate object keys and non-finite numbers.

    Errors name `origin` (a file, a stage) when given.
    """
    prefix = f"{origin}: " if origin else ""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except JsonError as exc:
        raise JsonError(f"{prefix}{exc}") from None
    except RecursionError:
        raise JsonError(f"{prefix}malformed JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise JsonError(
            f"{prefix}malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise JsonError(f"{prefix}malformed JSON: {exc}") from None


def load_file(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JsonError(f"{path}: cannot read: {exc.strerror}") from None
    return loads(data, origin=str(path))


def dumps_canonical(value: Any) -> str:
    """Deterministic JSON text: sorted keys, fixed indentation, trailing newline."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def dumps_compact(value: Any) -> str:
    """Deterministic one-line JSON text: sorted keys, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def first_difference(left: Any, right: Any, path: str = "$") -> tuple[str, Any, Any] | None:
    """Where two JSON values first differ under strict typing, or None when equal.

    Booleans are never numbers; numbers compare by value (1 equals 1.0, since
    JavaScript cannot tell them apart); objects compare by key set; arrays by
    order and length; null equals only null. Returns (JSON path, left value,
    right value) at the first difference, in key order.
    """
    if isinstance(left, bool) or isinstance(right, bool):
        same = isinstance(left, bool) and isinstance(right, bool) and left is right
    elif (isinstance(left, int | float) and isinstance(right, int | float)) or (
        isinstance(left, str) and isinstance(right, str)
    ):
        same = left == right
    elif left is None or right is None:
        same = left is None and right is None
    elif isinstance(left, list) and isinstance(right, list):
        for index, (a, b) in enumerate(zip(left, right, strict=False)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found is not None:
                return found
        if len(left) == len(right):
            return None
        shorter = min(len(left), len(right))
        return (f"{path}[{shorter}]", _at(left, shorter), _at(right, shorter))
    elif isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(left.keys() | right.keys()):
            if key not in left or key not in right:
                return (f"{path}.{key}", left.get(key, ABSENT), right.get(key, ABSENT))
            found = first_difference(left[key], right[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    else:
        same = False
    return None if same else (path, left, right)


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()  # stands for a missing key or element in a difference


def _at(items: list[Any], index: int) -> Any:
    return items[index] if index < len(items) else ABSENT


def shown(value: Any, limit: int = 160) -> str:
    """A JSON value on one line for a message, shortened to `limit` characters."""
    text = "<absent>" if value is ABSENT else dumps_compact(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def strict_equal(left: Any, right: Any) -> bool:
    """Deep JSON equality under strict typing (see `first_difference`).

    Two shortcuts in C come first. Python's `==` is looser than strict typing (it
    also takes `true` for `1`), so values it finds unequal are unequal. Equal
    compact texts (sorted keys) are the same JSON value, so such values are equal.
    Only equal values whose texts differ (`1` against `1.0`, or a boolean against
    a number) are walked."""
    if left is right:
        return True
    if left != right:
        return False
    try:
        if dumps_compact(left) == dumps_compact(right):
            return True
    except (TypeError, ValueError):  # not JSON values: walked
        pass
    return first_difference(left, right) is None
