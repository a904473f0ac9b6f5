"""A step server's record against the wire: the recheck's evidence of who is wrong.

The step suites read most of their verdicts from the server's own record (its
receipt entries, docs/LIFECYCLE.md "Control"): what it received, what it
answered, which marks the client posted. A record that lies blames the client
(docs/blame.md, "the server's record"). When a failed row is run again alone,
the client talks through recording relays (interop/runtime/capture.py `Relays`;
over stdio the line relay), and this module holds the record to what crossed:

- **counts** (HTTP): every `received` entry is a `hooks/intercept` request that
  crossed with that id and that message, and every such request the server
  answered 200 before the record was read is one; a scenario id's `replied`
  entries are at most the requests with that id that crossed and at least those
  answered 200 before the record was read (the server records `replied` just
  before writing the answer); every client mark (`POST /mark`) is a mark that
  crossed, and every mark answered before the record was read is recorded;
  every `observed` message and every catalogue `discovery` request crossed;
  every `upload` entry is an upload that crossed with that size, digest and
  (once answered) status.
- **order** (HTTP): an entry is made while its exchange is open at the relay
  (after the request reached it, before the answer left the server). When one
  exchange had ended before another began, the record must list the first one's
  entries first. Exchanges of one id (or one mark) that overlapped are not
  ordered: which entry is whose cannot be told.
- **stdio**: the relay logs each direction apart, so only the received messages
  are held to the lines the server was given. The record there is the one the
  client reported, so a contradiction judges either side.

Each contradiction names the ids and rows it concerns; `mark_rows` puts its
class first on those failed rows (`RecordContradictsWire`, judging the server;
`ReportedRecordContradictsWire` over stdio), and blame drops the rules that
read the record it contradicts (interop/blame.py `row_rules`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from interop.results import CombinationError, RowVerdict, Status
from interop.runtime.capture import Frame, Relays
from interop.runtime.context import RunContext

MARKS = ("acquired", "accepted", "cancelled", "discarded", "chain-settled", "observer-blocked")
HTTP_CLASS = "RecordContradictsWire"
STDIO_CLASS = "ReportedRecordContradictsWire"
SHOWN = 12  # contradictions kept on a row


@dataclass
class Contradiction:
    message: str
    ids: set[str] = field(default_factory=set)  # JSON-RPC ids, event ids
    scenarios: set[str] = field(default_factory=set)


@dataclass
class _Crossed:
    """One exchange at the relays, as the checks read it."""

    channel: str
    path: str
    message: Any  # the parsed request body (None: not JSON)
    body: bytes
    status: int
    arrived: int
    done: int

    @property
    def ended(self) -> bool:
        return self.done > 0

    @property
    def method(self) -> Any:
        return self.message.get("method") if isinstance(self.message, dict) else None

    @property
    def ident(self) -> str | None:
        if not isinstance(self.message, dict) or self.message.get("id") is None:
            return None
        return str(self.message["id"])


def _crossed(frame: Frame) -> _Crossed:
    try:
        message = json.loads(frame.body) if frame.body else None
    except ValueError:
        message = None
    return _Crossed(
        frame.channel, frame.path, message, frame.body, frame.status, frame.arrived, frame.done
    )


def contradictions(
    entries: Any,
    frames: Iterable[Frame],
    *,
    read_at: int,
    scenario_ids: set[str],
) -> list[Contradiction]:
    """Where the server's record (its receipt entries, read at monotonic ns
    `read_at`) contradicts the HTTP exchanges the relays saw."""
    if not isinstance(entries, list):
        return []
    wire = [_crossed(f) for f in frames]
    record = [e for e in entries if isinstance(e, dict)]
    found: list[Contradiction] = []
    ties: dict[int, _Crossed] = {}  # record position -> its exchange (unambiguous only)

    def before(c: _Crossed) -> bool:  # answered 200 before the record was read
        return c.ended and c.done < read_at and c.status == 200

    intercepts = [c for c in wire if c.channel == "event" and c.method == "hooks/intercept"]
    by_id: dict[str, list[_Crossed]] = {}
    for c in intercepts:
        if c.ident is not None:
            by_id.setdefault(c.ident, []).append(c)
    received: dict[str, list[tuple[int, dict[str, Any]]]] = {}  # id -> its entries
    replies: dict[str, list[int]] = {}  # id -> positions of its `replied` entries
    for i, e in enumerate(record):
        if e.get("kind") == "received":
            received.setdefault(str(e.get("id")), []).append((i, e))
        elif e.get("kind") == "replied":
            replies.setdefault(str(e.get("id")), []).append(i)
    for ident in sorted(set(received) | set(by_id)):
        crossed = by_id.get(ident, [])
        mine = received.get(ident, [])
        unmatched = list(crossed)
        for position, entry in mine:
            match = next((c for c in unmatched if c.message == entry.get("message")), None)
            if match is None:
                found.append(
                    Contradiction(
                        f"the record has {ident} received with a message no request of that id "
                        f"carried ({len(crossed)} crossed)",
                        {ident},
                    )
                )
                continue
            unmatched.remove(match)
            ties[position] = match
        answered = [c for c in unmatched if before(c)]
        if answered:
            found.append(
                Contradiction(
                    f"{len(answered)} request(s) with id {ident} crossed and were answered 200, "
                    "the record has no receipt of them",
                    {ident},
                )
            )
        replied = replies.get(ident, [])
        if ident in scenario_ids:
            least = sum(1 for c in crossed if before(c))
            if len(replied) > len(crossed) or len(replied) < least:
                found.append(
                    Contradiction(
                        f"the record has {len(replied)} replied for {ident}; {len(crossed)} "
                        f"request(s) with that id crossed, {least} answered 200 before the "
                        "record was read",
                        {ident},
                    )
                )
            elif not _overlap(crossed) and len(replied) == len(crossed):
                ties.update(zip(replied, sorted(crossed, key=lambda c: c.arrived), strict=True))
        if _overlap(crossed):  # whose receipt is whose cannot be told
            for position, _ in mine:
                ties.pop(position, None)

    found += _marks(record, wire, before, ties)
    found += _crossed_messages(record, wire, ties)
    found += _uploads(record, wire)
    found += _order(record, ties)
    return found


def _marks(
    record: list[dict[str, Any]],
    wire: list[_Crossed],
    before: Callable[[_Crossed], bool],
    ties: dict[int, _Crossed],
) -> list[Contradiction]:
    found: list[Contradiction] = []
    posted = [
        c
        for c in wire
        if c.channel == "control"
        and c.path.split("?")[0] == "/mark"
        and isinstance(c.message, dict)
    ]

    def key(value: dict[str, Any]) -> tuple[str, str, str]:
        return (str(value.get("scenario")), str(value.get("kind")), str(value.get("id")))

    recorded: dict[tuple[str, str, str], list[int]] = {}  # mark -> its record positions
    for i, e in enumerate(record):
        if e.get("kind") in MARKS and "scenario" in e:
            recorded.setdefault(key(e), []).append(i)
    sent: dict[tuple[str, str, str], list[_Crossed]] = {}  # mark -> its posts, by arrival
    for c in sorted(posted, key=lambda c: c.arrived):
        sent.setdefault(key(c.message), []).append(c)
    for wanted in sorted(set(recorded) | set(sent)):
        crossed, mine = sent.get(wanted, []), recorded.get(wanted, [])
        least = sum(1 for c in crossed if before(c))
        scenario, kind, ident = wanted
        if len(mine) > len(crossed) or len(mine) < least:
            found.append(
                Contradiction(
                    f"the record has {len(mine)} {kind} mark(s) for {ident} ({scenario}); the "
                    f"client posted {len(crossed)}, {least} answered before the record was read",
                    {ident},
                    {scenario},
                )
            )
        elif len(mine) == len(crossed) and not _overlap(crossed):
            ties.update(zip(mine, crossed, strict=True))
    return found


def _crossed_messages(
    record: list[dict[str, Any]], wire: list[_Crossed], ties: dict[int, _Crossed]
) -> list[Contradiction]:
    """Observations and discoveries: what the record says arrived did arrive."""
    found: list[Contradiction] = []
    event = [c for c in wire if c.channel == "event"]
    used: set[int] = set()
    for position, entry in enumerate(record):
        kind = entry.get("kind")
        if kind not in ("observed", "discovery"):
            continue
        message = entry.get("message") if kind == "observed" else entry.get("request")
        match = next(
            (n for n, c in enumerate(event) if n not in used and c.message == message), None
        )
        if match is None:
            ident = str(entry.get("eventId") or (message or {}).get("id") or "")
            found.append(
                Contradiction(
                    f"the record has a {kind} entry for {ident or 'a message'} no request carried",
                    {ident} if ident else set(),
                )
            )
            continue
        used.add(match)
        same = [c for c in event if c.message == message]
        if len(same) == 1:
            ties[position] = event[match]
    return found


def _uploads(record: list[dict[str, Any]], wire: list[_Crossed]) -> list[Contradiction]:
    found: list[Contradiction] = []
    left = [c for c in wire if c.channel == "upload"]
    for entry in record:
        if entry.get("kind") != "upload":
            continue

        def fits(c: _Crossed, entry: dict[str, Any] = entry) -> bool:
            same = (len(c.body), hashlib.sha256(c.body).hexdigest()) == (
                entry.get("size"),
                entry.get("sha256"),
            )
            return same and (not c.ended or c.status == entry.get("status"))

        match = next((c for c in left if fits(c)), None)
        if match is None:
            found.append(
                Contradiction(
                    f"the record has an upload of {entry.get('size')} bytes answered "
                    f"{entry.get('status')} that no upload carried"
                )
            )
        else:
            left.remove(match)
    return found


def _order(record: list[dict[str, Any]], ties: dict[int, _Crossed]) -> list[Contradiction]:
    """An exchange that had ended before another began: its entries come first."""
    found: list[Contradiction] = []
    tied = sorted(ties.items())
    for n, (first, early) in enumerate(tied):
        for later, late in tied[n + 1 :]:
            if late.ended and late.done < early.arrived:
                a, b = record[first], record[later]
                found.append(
                    Contradiction(
                        f"the record lists {_named(a)} before {_named(b)}, but the exchange of "
                        f"{_named(b)} had ended before that of {_named(a)} began",
                        {str(a.get("id")), str(b.get("id"))} - {"None"},
                        {str(e.get("scenario")) for e in (a, b) if "scenario" in e},
                    )
                )
                if len(found) >= SHOWN:
                    return found
    return found


def _named(entry: dict[str, Any]) -> str:
    return f"{entry.get('kind')} {entry.get('id', entry.get('eventId', ''))}".strip()


def _overlap(crossed: list[_Crossed]) -> bool:
    """Whether two of these exchanges were open at once (or one never ended)."""
    ordered = sorted(crossed, key=lambda c: c.arrived)
    return any(not a.ended or b.arrived <= a.done for a, b in itertools.pairwise(ordered))


def stdio_contradictions(entries: Any, frames: list[dict[str, Any]]) -> list[Contradiction]:
    """Over stdio: every `received` message is a line the server was given."""
    if not isinstance(entries, list):
        return []
    given = [f["request"] for f in frames if "request" in f]
    found: list[Contradiction] = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("kind") != "received":
            continue
        if entry.get("message") in given:
            given.remove(entry.get("message"))
            continue
        ident = str(entry.get("id"))
        found.append(
            Contradiction(
                f"the reported record has {ident} received with a message no line carried", {ident}
            )
        )
    return found


def mark_rows(
    rows: list[RowVerdict],
    found: list[Contradiction],
    *,
    transport: str,
    ids_of: Callable[[str], set[str]] = lambda sid: {sid},
) -> None:
    """Put the contradictions' class first on the failed rows they concern (a
    contradiction naming no row concerns every failed row), with the messages."""
    if not found:
        return
    name = HTTP_CLASS if transport == "http" else STDIO_CLASS
    for row in rows:
        if row.status != Status.FAILED:
            continue
        ids = ids_of(row.id)
        mine = [
            c
            for c in found
            if (not c.ids and not c.scenarios)
            or row.id in c.scenarios
            or any(i in ids or i == row.id or i.startswith(row.id + ":") for i in c.ids)
        ]
        if not mine:
            continue
        classes = row.diagnostics.setdefault("classes", [])
        if name not in classes:
            classes.insert(0, name)
        row.diagnostics["wire"] = [c.message for c in mine[:SHOWN]]


def read_against_wire(
    ctx: RunContext,
    relays: Relays,
    read: Callable[[], tuple[Any, list[CombinationError]]],
    key: str,
    set_name: str,
    scenario_ids: set[str] | None = None,
) -> tuple[Any, list[CombinationError], list[Contradiction]]:
    """After a step client's HTTP run: read the server's record (`read`), then stop the
    relays; on a recheck keep the frames (`<key>/capture-<set>.json`) and hold the
    record to them. Returns the entries, the read's errors and the contradictions."""
    read_at = time.monotonic_ns()
    try:
        entries, errors = read()
    finally:
        relays.stop()
    found: list[Contradiction] = []
    if relays.captures:
        relays.keep(ctx, key, set_name)
        found = contradictions(
            entries, relays.frames(), read_at=read_at, scenario_ids=scenario_ids or set()
        )
    return entries, errors, found
