"""Strict JSON: loading that rejects duplicate keys, and the one equality helper."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class JsonError(ValueError):
    """A JSON document is unreadable, malformed or has duplicate keys."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise JsonError(f"duplicate key {key!r}")
        result[key] = value
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


def strict_equal(left: Any, right: Any) -> bool:
    """Deep JSON equality under strict typing.

    Booleans are never numbers; numbers compare by value (1 equals 1.0, since
    JavaScript cannot tell them apart); objects compare by key set; arrays by
    order and length; null equals only null.
    """
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, str) and isinstance(right, str):
        return left == right
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            strict_equal(a, b) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(strict_equal(left[k], right[k]) for k in left)
    return False
