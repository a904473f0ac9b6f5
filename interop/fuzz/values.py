"""Random JSON values and content-model nouns for the fuzzer (no expectations).

Every function takes the row's own `random.Random`, so a value depends only
on the seed and the row index. Numbers stay inside the I-JSON profile
(docs/scenarios.md, "Numbers"): no number of magnitude beyond 2^53 - 1.
Content comes valid by default; `broken` asks for a value that fails the
canonical content schema in one known way.
"""

from __future__ import annotations

import random
from typing import Any

MAX_EXACT = 2**53 - 1
ROLES = ("system", "developer", "user", "assistant", "tool")
STRINGS = (
    "",
    "a",
    "x y",
    "docs/readme.md",
    "naïve café",
    "日本語",
    "emoji 🚀",
    "line\nbreak",
    'tab\tand "quotes"',
    "\u2028separator",
    "nul\u0000byte",
    "0",
    "false",
    "null",
)
KEYS = (
    "path",
    "mode",
    "limit",
    "options",
    "recursive",
    "pattern",
    "",
    "__proto__",
    "constructor",
    "toString",
    "a.b",
    "ключ",
    "🔑",
)
INTEGERS = (0, 1, -1, 2, 7, 42, 1000, MAX_EXACT, -MAX_EXACT, 2**31, -(2**31))
FLOATS = (0.5, -2.25, 1.0, 2.0, -0.0, 123456.789, 5e-324, 3.141592653589793)
FALSY: tuple[Any, ...] = (0, "", False, None, [], {})
ATTACHMENT_TYPES = ("image/png", "application/pdf", "audio/wav", "application/octet-stream")
# Text and JSON types (parameters count); a bare `png` is a valid attachment type.
BAD_ATTACHMENT_TYPES = (
    "application/json; charset=utf-8",
    "text/plain",
    "application/json",
    "application/ld+json",
)


def scalar(rng: random.Random) -> Any:
    pick = rng.randrange(5)
    if pick == 0:
        return None
    if pick == 1:
        return rng.random() < 0.5
    if pick == 2:
        return rng.choice(INTEGERS)
    if pick == 3:
        return rng.choice(FLOATS)
    return rng.choice(STRINGS)


def value(rng: random.Random, depth: int = 2) -> Any:
    """Any JSON value, nested at most `depth` levels."""
    roll = rng.random()
    if depth <= 0 or roll < 0.45:
        return scalar(rng)
    if roll < 0.6:
        return rng.choice(FALSY)
    if roll < 0.8:
        return [value(rng, depth - 1) for _ in range(rng.randrange(4))]
    return obj(rng, depth - 1)


def obj(rng: random.Random, depth: int = 1, size: int | None = None) -> dict[str, Any]:
    count = rng.randrange(4) if size is None else size
    return {rng.choice(KEYS): value(rng, depth) for _ in range(count)}


def text_part(rng: random.Random, part_id: str, *, withheld: bool = False) -> dict[str, Any]:
    part: dict[str, Any] = {"id": part_id, "kind": "text", "mediaType": "text/plain"}
    form = rng.randrange(3) if withheld else 3
    if form == 0:
        part["selection"] = rng.choice(("metadata", "omit"))
    elif form == 1:
        part["selection"] = "body"
        part["gap"] = {"reason": rng.choice(("redacted", "too large", "unavailable"))}
    else:
        part["selection"] = "body"
        part["text"] = rng.choice(STRINGS)
    if rng.random() < 0.15:
        part["category"] = rng.choice(("text", "reasoning", "org.example.notes"))
    return part


def attachment_part(rng: random.Random, part_id: str, *, withheld: bool = False) -> dict[str, Any]:
    part: dict[str, Any] = {
        "id": part_id,
        "kind": "attachment",
        "mediaType": rng.choice(ATTACHMENT_TYPES),
    }
    if withheld and rng.random() < 0.5:
        part["selection"] = rng.choice(("metadata", "omit"))
    else:
        part["selection"] = "body"
        part["body"] = {"ref": f"ref-{rng.randrange(100)}"}
    return part


def break_part(rng: random.Random, part: dict[str, Any]) -> dict[str, Any]:
    """One schema fault on a part: the faults hand-written checks tend to miss."""
    fault = rng.randrange(6)
    if fault == 0:
        part["category"] = ""
    elif fault == 1:
        part["kind"] = "attachment"
        part["mediaType"] = rng.choice(BAD_ATTACHMENT_TYPES)
        part.pop("text", None)
        part.pop("gap", None)
        part["selection"] = "body"
        part["body"] = {"ref": "ref-1"}
    elif fault == 2:
        part.pop("text", None)
        part["selection"] = "body"
        part["gap"] = {"reason": ""}
    elif fault == 3:
        part["role"] = "user"
    elif fault == 4:
        part["id"] = ""
    else:
        part["text"] = 7
    return part


def message(
    rng: random.Random,
    message_id: str,
    role: str | None = None,
    *,
    withheld: bool = False,
    attachments: bool = True,
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for index in range(rng.randrange(1, 3)):
        part_id = f"{message_id}-p{index}"
        if attachments and rng.random() < 0.2:
            parts.append(attachment_part(rng, part_id, withheld=withheld))
        else:
            parts.append(text_part(rng, part_id, withheld=withheld))
    return {"id": message_id, "role": role or rng.choice(ROLES), "parts": parts}


def messages(
    rng: random.Random,
    prefix: str,
    *,
    role: str | None = None,
    withheld: bool = False,
    broken: bool = False,
    size: int | None = None,
) -> list[dict[str, Any]]:
    count = rng.randrange(0, 3) if size is None else size
    items = [message(rng, f"{prefix}{i}", role, withheld=withheld) for i in range(count)]
    if broken:
        if not items:
            items.append(message(rng, f"{prefix}0", role))
        target = rng.choice(items)
        fault = rng.randrange(4)
        if fault == 0:
            target["role"] = "narrator"
        elif fault == 1:
            target["extra"] = True
        else:
            break_part(rng, rng.choice(target["parts"]))
    return items


def text_parts(
    rng: random.Random,
    prefix: str,
    *,
    withheld: bool = False,
    broken: bool = False,
    size: int | None = None,
) -> list[dict[str, Any]]:
    count = rng.randrange(0, 3) if size is None else size
    items = [text_part(rng, f"{prefix}{i}", withheld=withheld) for i in range(count)]
    if broken:
        if not items or rng.random() < 0.3:
            items.append(attachment_part(rng, f"{prefix}x"))
        else:
            break_part(rng, rng.choice(items))
    return items


def workspace_change(rng: random.Random, *, broken: bool = False) -> dict[str, Any]:
    change: dict[str, Any] = {}
    form = rng.randrange(3)
    if form in (0, 2):
        change["cwd"] = rng.choice(("/work/app", "/tmp/other", "relative/dir", "/ünï"))
    if form in (1, 2):
        change["workspaceRoots"] = [
            rng.choice(("/work/app", "/work/lib", "/srv")) for _ in range(rng.randrange(3))
        ]
    if broken:
        fault = rng.randrange(5)
        if fault == 0:
            change = {}
        elif fault == 1:
            change["cwd"] = ""
        elif fault == 2:
            change["workspaceRoots"] = [""]
        elif fault == 3:
            change["settings"] = {"theme": "dark"}
        else:
            change["cwd"] = 5
    return change


def answer(rng: random.Random, *, broken: bool = False) -> dict[str, Any]:
    """A flat elicitation answer (string, number, boolean or string-array values)."""
    fields = ("slot", "attendees", "remind", "tags", "note", "__proto__")
    result: dict[str, Any] = {}
    for _ in range(rng.randrange(0, 4)):
        kind = rng.randrange(4)
        key = rng.choice(fields)
        if kind == 0:
            result[key] = rng.choice(STRINGS)
        elif kind == 1:
            result[key] = rng.choice(INTEGERS + FLOATS)
        elif kind == 2:
            result[key] = rng.random() < 0.5
        else:
            result[key] = [rng.choice(STRINGS) for _ in range(rng.randrange(3))]
    if broken:
        result[rng.choice(fields)] = rng.choice((None, {"nested": 1}, [1, 2], [None]))
    return result
