"""Shapes of the content model: canonical messages, parts, and answer objects (no I/O).

Each check returns None when the value has the shape, else a short reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .codec import is_integer, is_number

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
SELECTIONS = frozenset({"body", "metadata", "omit"})
WITHHELD_SELECTIONS = frozenset({"metadata", "omit"})
_SHA256 = re.compile(r"[a-f0-9]{64}\Z")
_COMMON_PART_KEYS = frozenset(
    {"id", "kind", "mediaType", "selection", "category", "synthesized"}
)
_MESSAGE_KEYS = frozenset({"id", "role", "parts", "synthesized"})


def _non_empty_string(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _first_error(items: list[Any], check: Callable[[Any], str | None]) -> str | None:
    """The first item's failure reason, or None when every item passes."""
    for item in items:
        error = check(item)
        if error:
            return error
    return None


def _attachment_media_type_ok(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return not (
        base.startswith("text/") or base == "application/json" or base.endswith("+json")
    )


def _gap_error(gap: Any) -> str | None:
    if not isinstance(gap, dict) or not isinstance(gap.get("reason"), str):
        return "gap must be an object with a string reason"
    if "path" in gap and not isinstance(gap["path"], str):
        return "gap path must be a string"
    return None


def _digest_fields_error(part: dict[str, Any]) -> str | None:
    if "size" in part and not (is_integer(part["size"]) and part["size"] >= 0):
        return "size must be a non-negative integer"
    if "sha256" in part and not (
        isinstance(part["sha256"], str) and _SHA256.match(part["sha256"])
    ):
        return "sha256 must be 64 lowercase hex characters"
    return None


def part_error(part: Any) -> str | None:
    """Check one content part against the eight closed part variants."""
    if not isinstance(part, dict):
        return "part must be an object"
    if not _non_empty_string(part.get("id")):
        return "part id must be a non-empty string"
    kind, selection, media_type = (
        part.get("kind"),
        part.get("selection"),
        part.get("mediaType"),
    )
    if kind not in ("text", "attachment"):
        return "part kind must be text or attachment"
    if selection not in SELECTIONS:
        return "part selection must be body, metadata or omit"
    if not isinstance(media_type, str):
        return "part mediaType must be a string"
    if kind == "text" and media_type != "text/plain":
        return "text parts must have mediaType text/plain"
    if kind == "attachment" and not _attachment_media_type_ok(media_type):
        return "attachment mediaType must not be text or JSON"
    if "category" in part and not isinstance(part["category"], str):
        return "part category must be a string"
    if "synthesized" in part and not isinstance(part["synthesized"], bool):
        return "part synthesized must be a boolean"
    payload = "text" if kind == "text" else "body"
    if selection == "body" and "gap" in part:
        allowed = _COMMON_PART_KEYS | {"gap"}
        error = _gap_error(part["gap"])
    elif selection == "body":
        allowed = _COMMON_PART_KEYS | {payload}
        if kind == "text":
            error = (
                None if isinstance(part.get("text"), str) else "text must be a string"
            )
        else:
            body = part.get("body")
            ok = (
                isinstance(body, dict)
                and set(body) == {"ref"}
                and _non_empty_string(body["ref"])
            )
            error = None if ok else "attachment body must be {ref}"
    else:
        allowed = _COMMON_PART_KEYS | {"size", "sha256"}
        error = _digest_fields_error(part)
    if error:
        return error
    extra = sorted(set(part) - allowed)
    if extra:
        return f"unexpected part field(s): {', '.join(extra)}"
    return None


def message_error(message: Any) -> str | None:
    if not isinstance(message, dict):
        return "message must be an object"
    extra = sorted(set(message) - _MESSAGE_KEYS)
    if extra:
        return f"unexpected message field(s): {', '.join(extra)}"
    if not _non_empty_string(message.get("id")):
        return "message id must be a non-empty string"
    if message.get("role") not in ROLES:
        return "message role is not a canonical role"
    if "synthesized" in message and not isinstance(message["synthesized"], bool):
        return "message synthesized must be a boolean"
    parts = message.get("parts")
    if not isinstance(parts, list):
        return "message parts must be an array"
    return _first_error(parts, part_error)


def message_list_error(value: Any) -> str | None:
    """A canonical message list: an array of message objects."""
    if not isinstance(value, list):
        return "expected an array of messages"
    return _first_error(value, message_error)


def _text_part_error(part: Any) -> str | None:
    error = part_error(part)
    if error is None and part.get("kind") != "text":
        return "only text parts are allowed here"
    return error


def text_part_list_error(value: Any) -> str | None:
    """A text-part list: an array of parts of kind text."""
    if not isinstance(value, list):
        return "expected an array of text parts"
    return _first_error(value, _text_part_error)


def part_is_withheld(part: Any) -> bool:
    return isinstance(part, dict) and (
        part.get("selection") in WITHHELD_SELECTIONS or "gap" in part
    )


def holds_withheld(value: Any) -> bool:
    """True when a message or part list holds omitted, metadata or gap parts."""
    if not isinstance(value, list):
        return False
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("parts"), list):
            if any(part_is_withheld(part) for part in item["parts"]):
                return True
        elif part_is_withheld(item):
            return True
    return False


def answer_error(value: Any) -> str | None:
    """A flat elicitation answer: string, number, boolean or string-array values."""
    if not isinstance(value, dict):
        return "answer must be an object"
    for key, item in value.items():
        if isinstance(item, (str, bool)) or is_number(item):
            continue
        if isinstance(item, list) and all(isinstance(entry, str) for entry in item):
            continue
        return f"answer field {key!r} is not a flat value"
    return None


def workspace_change_error(value: Any) -> str | None:
    """A workspace change: at least one of cwd, workspaceRoots, and nothing else."""
    if not isinstance(value, dict) or not value:
        return "workspace change must be a non-empty object"
    extra = sorted(set(value) - {"cwd", "workspaceRoots"})
    if extra:
        return f"unexpected workspace field(s): {', '.join(extra)}"
    if "cwd" in value and not isinstance(value["cwd"], str):
        return "cwd must be a string"
    roots = value.get("workspaceRoots", [])
    if not isinstance(roots, list) or not all(isinstance(root, str) for root in roots):
        return "workspaceRoots must be an array of strings"
    return None


def object_error(value: Any) -> str | None:
    return None if isinstance(value, dict) else "expected an object"
