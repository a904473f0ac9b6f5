"""Receipts: the requests a server says it received, from its log or its control listener.

`GET /receipts` answers `{"requests": [...]}`. Each entry is the request itself (ours,
and contract v1's first shape) or, as the upstream SDKs' servers write it,
`{"id", "method", "message": <request>}` with an optional `eventId` and `accepted`
(upstream `interop/matrix.py`, `receipt_matches`). Both are read; a wrapper must
agree with the request it wraps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from interop.contract.check import contract_problem
from interop.jsonvalue import JsonError, loads
from interop.results import CombinationError


def read_receipt_log(path: Path, offset: int) -> tuple[list[Any], list[CombinationError]]:
    """Intercept receipts appended after `offset`; malformed lines are errors."""
    requests: list[Any] = []
    problems: list[CombinationError] = []
    if not path.exists():
        return requests, problems
    with path.open("rb") as handle:
        handle.seek(offset)
        for number, line in enumerate(handle.read().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = loads(line, origin=f"receipt line {number}")
            except JsonError as exc:
                problems.append(CombinationError("receipts", "ReceiptMalformed", str(exc)))
                continue
            problem = contract_problem("receipt-line.schema.json", entry, text=line)
            if problem is not None:
                problems.append(
                    CombinationError("receipts", "ReceiptMalformed", f"line {number}: {problem}")
                )
            elif entry["kind"] == "request":
                requests.append(entry.get("message"))
    return requests, problems


WRAPPED = "wrapped: {id, method, message} (upstream SDK servers)"


def unwrap_receipts(entries: list[Any]) -> tuple[list[Any], list[CombinationError], str | None]:
    """The requests of `GET /receipts` entries, what is wrong with the wrappers, and the
    upstream shape read (`WRAPPED`), or None when every entry is a request itself."""
    requests: list[Any] = []
    problems: list[CombinationError] = []
    wrapped = False
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or "jsonrpc" in entry or "message" not in entry:
            requests.append(entry)
            continue
        wrapped = True
        message = entry["message"]
        problem = _wrapper_problem(entry, message)
        if problem is not None:
            problems.append(
                CombinationError(
                    "receipts",
                    "ReceiptMalformed",
                    f"receipt {index} (wrapped in 'message'): {problem}",
                )
            )
        requests.append(message)
    return requests, problems, WRAPPED if wrapped else None


def _wrapper_problem(entry: dict[str, Any], message: Any) -> str | None:
    """What a wrapper says that its message does not (upstream's `receipt_matches`)."""
    if not isinstance(message, dict):
        return "'message' is not a JSON-RPC request object"
    for key in ("id", "method"):
        if key not in entry:
            return f"the wrapper has no {key!r}"
        if entry[key] != message.get(key) or type(entry[key]) is not type(message.get(key)):
            return f"the wrapper's {key} {entry[key]!r} is not the message's {message.get(key)!r}"
    if "eventId" in entry:
        params = message.get("params")
        event = params.get("event") if isinstance(params, dict) else None
        event_id = event.get("id") if isinstance(event, dict) else None
        if entry["eventId"] != event_id:
            return f"eventId {entry['eventId']!r} is not the message's event id {event_id!r}"
    if "accepted" in entry and entry["accepted"] is not True:
        return f"'accepted' is {entry['accepted']!r}: a receipt records an accepted request"
    return None


def replies_beside(receipt_log: Path) -> Path:
    """Where the stdio relay in front of a contract v1 server records its replies."""
    return receipt_log.with_name("replies.jsonl")


def read_replies(path: Path) -> list[tuple[Any, Any]]:
    """What a relayed stdio server wrote back: (id of the request before it, the value)."""
    found: list[tuple[Any, Any]] = []
    if not path.exists():
        return found
    for line in path.read_bytes().splitlines():
        try:
            entry = loads(line, origin="relay reply")
        except JsonError:
            continue  # the relay writes whole lines: a torn last line is its death, not news
        if isinstance(entry, dict) and "reply" in entry:
            found.append((entry.get("request"), entry["reply"]))
    return found


def stdio_frames(receipt_log: Path) -> list[dict[str, Any]]:
    """The stdio relay's record of a step server's lines (a recheck's wire evidence):
    `{"channel": "stdio", "request": MESSAGE}` for each line the client wrote to it,
    then `{"channel": "stdio", "reply": VALUE}` for each line it wrote back (the two
    directions are logged apart: their relative order is not kept)."""
    frames: list[dict[str, Any]] = []
    if receipt_log.exists():
        for line in receipt_log.read_bytes().splitlines():
            try:
                entry = loads(line, origin="relay log")
            except JsonError:
                continue
            if isinstance(entry, dict) and "message" in entry:
                frames.append({"channel": "stdio", "request": entry["message"]})
    frames += [
        {"channel": "stdio", "reply": value}
        for _, value in read_replies(replies_beside(receipt_log))
    ]
    return frames


def snapshot_beside(receipt_log: Path) -> Path:
    """Where the stdio relay saves a contract v1 server's own `GET /receipts` answer."""
    return receipt_log.with_name("server-receipts.json")


def server_receipts(path: Path) -> tuple[list[Any] | None, list[CombinationError], str | None]:
    """A v1 stdio server's own receipts (the relay's last snapshot of its `GET /receipts`),
    unwrapped; None when no snapshot was taken (the server never answered)."""
    if not path.exists():
        return None, [], None
    try:
        answer = loads(path.read_bytes(), origin="the server's GET /receipts")
    except JsonError as exc:
        return None, [CombinationError("receipts", "ReceiptMalformed", str(exc))], None
    problem = contract_problem("control.schema.json#/$defs/receipts", answer)
    if problem is not None:
        return (
            None,
            [CombinationError("receipts", "ReceiptMalformed", f"GET /receipts answer {problem}")],
            None,
        )
    return unwrap_receipts(answer["requests"])


def own_receipt_problems(
    own: list[Any], delivered: list[Any], answered: set[Any]
) -> list[CombinationError]:
    """What a v1 stdio server's own receipts say wrongly: every request it was sent
    (`delivered`, the relay's record) and answered must be among them, unchanged."""
    from interop.jsonvalue import strict_equal

    by_id: dict[Any, list[Any]] = {}
    for request in own:
        if isinstance(request, dict):
            by_id.setdefault(request.get("id"), []).append(request)
    missing: list[str] = []
    altered: list[str] = []
    for request in delivered:
        rid = request.get("id") if isinstance(request, dict) else None
        if rid not in answered or not isinstance(request, dict):
            continue
        if request.get("method") != "hooks/intercept":
            continue
        kept = by_id.get(rid, [])
        if not kept:
            missing.append(str(rid))
        elif not any(strict_equal(k, request) for k in kept):
            altered.append(str(rid))
    problems = []
    if missing:
        problems.append(
            CombinationError(
                "receipts",
                "ReceiptMissing",
                f"the server's own GET /receipts lacks {len(missing)} requests it was sent and "
                f"answered, e.g. {', '.join(missing[:5])}",
            )
        )
    if altered:
        problems.append(
            CombinationError(
                "receipts",
                "ReceiptMismatch",
                f"the server's own GET /receipts records other requests than it was sent: "
                f"{', '.join(altered[:5])}",
            )
        )
    return problems
