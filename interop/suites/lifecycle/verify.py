"""The lifecycle suite's verdict: every rule, from receipt positions, never from time.

Input: one set's scenarios (those of the combination's transport), the
client's report, the server's receipt entries in the order recorded, and the
client's exit status. The client ran the scenarios in file order against one
server. Upload entries carry no scenario: each upload step owns the receipt
that declares its size and sha256, matched in file order (`attribute_uploads`),
so a row's missing or extra uploads fail that row alone. Emitted frames are
assigned to scenarios in file order. Each rule that fails names its error
class (docs/errors.md); a row passes only when no rule fails.
"""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from interop.contract.check import contract_problem
from interop.jsonvalue import first_difference, shown, strict_equal
from interop.results import CombinationError, RowVerdict, Status
from interop.schema import canonical
from interop.suites.common import check_step_report, conclude, prejudge
from interop.suites.lifecycle.scenarios import LifecycleScenario, Upload

KINDS = (
    "received",
    "replied",
    "acquired",
    "accepted",
    "cancelled",
    "discarded",
    "emitted",
    "upload",
    "observed",
    "chain-settled",
    "observer-blocked",
)
CHAIN_KINDS = ("received", "replied", "cancelled", "chain-settled", "observed", "observer-blocked")
MARKS = ("acquired", "accepted", "cancelled", "discarded", "chain-settled", "observer-blocked")
Problem = tuple[str, str]  # (error class, message)


def _short(value: Any) -> str:
    return shown(value, 140)


INDEXED = ("id", "eventId", "scenario")  # the entry fields rows look entries up by


@dataclass
class Entries:
    """The receipt entries of one run, with positions, split by what they belong to."""

    all: list[dict[str, Any]]
    uploads: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    emitted: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    _index: dict[tuple[str, str], list[int]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.uploads = [(i, e) for i, e in enumerate(self.all) if e["kind"] == "upload"]
        self.emitted = [(i, e) for i, e in enumerate(self.all) if e["kind"] == "emitted"]
        # positions by what an entry names, in log order: every row looks its own up,
        # so judging a run is linear in its log, not rows x entries
        for position, entry in enumerate(self.all):
            for key in INDEXED:
                value = entry.get(key)
                if isinstance(value, str):
                    self._index.setdefault((key, value), []).append(position)

    def naming(self, key: str, value: Any) -> list[int]:
        """Positions of the entries whose `key` is `value`, in log order."""
        if isinstance(value, str) and key in INDEXED:
            return self._index.get((key, value), [])
        return [i for i, e in enumerate(self.all) if strict_equal(e.get(key), value)]

    def naming_any(self, *pairs: tuple[str, Any]) -> list[int]:
        """Positions of the entries that name any `(key, value)` of `pairs`, in log order."""
        return sorted({i for key, value in pairs for i in self.naming(key, value)})

    def of(self, kind: str, ident: str) -> list[int]:
        """Positions of `kind` entries for a request id (or an event id when observed)."""
        key = "eventId" if kind == "observed" else "id"
        return [i for i in self.naming(key, ident) if self.all[i]["kind"] == kind]

    def marks(self, scenario: str, kind: str, ident: str | None = None) -> list[int]:
        return [
            i
            for i in self.naming("scenario", scenario)
            if self.all[i]["kind"] == kind and (ident is None or self.all[i].get("id") == ident)
        ]


def check_entries(entries: Any, stage: str) -> tuple[list[dict[str, Any]], list[CombinationError]]:
    """The entries when each is a known receipt; else one ReceiptMalformed per bad entry."""
    if not isinstance(entries, list):
        return [], [CombinationError(stage, "ReceiptsUnavailable", "no receipt entries")]
    errors = []
    good: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        problem = contract_problem("lifecycle-control.schema.json#/$defs/entry", entry)
        if problem is not None:
            errors.append(CombinationError(stage, "ReceiptMalformed", f"entry {index}: {problem}"))
        else:
            good.append(entry)
    return good, errors


# ---------------------------------------------------------------- uploads

Positioned = tuple[int, dict[str, Any]]  # (position in the log, entry)


@dataclass
class RowUploads:
    """One row's upload receipts: each upload step with the receipt that declares its
    size and sha256 (None: no receipt does), and the receipts of the row's span that
    no upload step of any row declares (`extra`)."""

    steps: list[tuple[Upload, Positioned | None]] = field(default_factory=list)
    extra: list[Positioned] = field(default_factory=list)

    def entries(self) -> list[Positioned]:
        """Every receipt attributed to the row, in log order."""
        return sorted([found for _, found in self.steps if found is not None] + self.extra)


def _declared(size: Any, sha256: Any) -> str:
    return f"size {size}, sha256 {str(sha256)[:16]}..."


def _recorded(entry: dict[str, Any]) -> str:
    declared = _declared(entry.get("size"), entry.get("sha256"))
    return f"status {entry.get('status')} declaring {declared}"


def _fit(row: RowUploads, entry: dict[str, Any]) -> tuple[bool, bool, bool]:
    """How well a receipt no step declares fits a row: a missing step of the same size
    or hash, any step of the same size or hash, any missing step."""
    near = [
        strict_equal(step.size, entry.get("size")) or strict_equal(step.sha256, entry.get("sha256"))
        for step, _ in row.steps
    ]
    missing = [found is None for _, found in row.steps]
    return any(a and b for a, b in zip(near, missing, strict=True)), any(near), any(missing)


def _anchors(scenario: LifecycleScenario, log: Entries) -> list[int]:
    """Positions of the receipts the row's client run itself caused while the row ran:
    its marks, its requests' receipts, its events' observations (never a reply, which a
    server may still be holding when the next row starts)."""
    requests = scenario.requests.values()
    pairs = [("scenario", scenario.id)]
    pairs += [("id", r["id"]) for r in requests]
    pairs += [("eventId", r["params"]["event"]["id"]) for r in requests]
    return [
        i
        for i in log.naming_any(*pairs)
        if log.all[i]["kind"] not in ("replied", "upload", "emitted")
    ]


def _windows(anchors: list[list[int]]) -> list[tuple[float, float]]:
    """Per row, the open interval of positions its receipts can hold: after every
    anchor of an earlier row, before every anchor of a later one (rows run in file order)."""
    lows: list[float] = []
    low: float = -1
    for found in anchors:
        lows.append(low)
        low = max([low, *found])
    highs: list[float] = []
    high: float = float("inf")
    for found in reversed(anchors):
        highs.append(high)
        high = min([high, *found])
    return list(zip(lows, reversed(highs), strict=True))


QUIET = ("upload", "wait", "release")  # step ops that leave no receipt of the row's own


def _step_window(
    scenario: LifecycleScenario, step: Upload, row: tuple[float, float], own: list[int]
) -> tuple[float, float]:
    """Where one upload step's receipt can lie: in its row's window, and before the row's
    own receipts when no step before it leaves one (after them when none after it does)."""
    low, high = row
    ops = [s["op"] for s in scenario.steps]
    if own and all(op in QUIET for op in ops[: step.index]):
        high = min(high, min(own))
    if own and all(op in QUIET for op in ops[step.index + 1 :]):
        low = max(low, max(own))
    return low, high


def _identifies(entry: dict[str, Any], step: Upload) -> bool:
    return strict_equal(entry.get("size"), step.size) and strict_equal(
        entry.get("sha256"), step.sha256
    )


@dataclass
class _Pairing:
    """The upload steps of every row in file order (`wanted`: the row's index and the
    step's number in it), where each step's receipt can lie (`within`), and the upload
    receipts in log order (`recorded`). `rows` receives the pairs."""

    rows: list[RowUploads]
    wanted: list[tuple[int, int]]
    within: list[tuple[float, float]]
    recorded: list[Positioned]

    def weight(self, i: int, j: int) -> int | None:
        """The worth of pairing step `i` with receipt `j` (None: the receipt does not
        declare the step): one more inside the step's window, and a pairing outweighs
        every tie-break together."""
        row, number = self.wanted[i]
        position, entry = self.recorded[j]
        if not _identifies(entry, self.rows[row].steps[number][0]):
            return None
        low, high = self.within[i]
        return len(self.wanted) + 1 + (1 if low < position < high else 0)


def _pairing(
    scenarios: list[LifecycleScenario], log: Entries, anchors: list[list[int]]
) -> _Pairing:
    """Every row's upload steps, none paired yet, with each step's window from the rows'
    `anchors`."""
    rows = [RowUploads([(step, None) for step in s.uploads()]) for s in scenarios]
    windows = _windows(anchors)
    wanted = [(row, number) for row, s in enumerate(rows) for number in range(len(s.steps))]
    within = [
        _step_window(scenarios[row], rows[row].steps[number][0], windows[row], anchors[row])
        for row, number in wanted
    ]
    return _Pairing(rows, wanted, within, log.uploads)


def _best(pairing: _Pairing) -> list[list[int]]:
    """`best[i][j]`: the greatest total weight of pairs among steps i.. and receipts j..,
    in order (a longest common subsequence, weighted)."""
    n, m = len(pairing.wanted), len(pairing.recorded)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            score = max(best[i + 1][j], best[i][j + 1])
            paired = pairing.weight(i, j)
            if paired is not None:
                score = max(score, paired + best[i + 1][j + 1])
            best[i][j] = score
    return best


def _pair(pairing: _Pairing) -> set[int]:
    """Each step paired with its receipt along one best path, the earliest receipt first
    among equals; returns the indexes of the receipts paired."""
    best = _best(pairing)
    rows, wanted, recorded = pairing.rows, pairing.wanted, pairing.recorded
    used: set[int] = set()
    i = j = 0
    while i < len(wanted) and j < len(recorded):
        paired = pairing.weight(i, j)
        if paired is not None and paired + best[i + 1][j + 1] == best[i][j]:
            row, number = wanted[i]
            rows[row].steps[number] = (rows[row].steps[number][0], recorded[j])
            used.add(j)
            i, j = i + 1, j + 1
        elif best[i][j + 1] == best[i][j]:
            j += 1
        else:
            i += 1
    return used


def _undelivered(
    recorded: list[Positioned], used: set[int], content_uploads: Any
) -> list[Positioned]:
    """The receipts no step owns that no contentUploads delivery accounts for (one whose
    descriptor names the receipt's ref, size and sha256, a 201; each delivery accounts
    for one receipt)."""
    delivered = [
        c["descriptor"]
        for c in (content_uploads if isinstance(content_uploads, list) else [])
        if isinstance(c, dict) and isinstance(c.get("descriptor"), dict)
    ]
    left: list[Positioned] = []
    for j, (position, entry) in enumerate(recorded):
        if j in used:
            continue
        descriptor = next(
            (
                d
                for d in delivered
                if entry["status"] == 201
                and isinstance(entry.get("ref"), str)
                and strict_equal(d.get("ref"), entry.get("ref"))
                and strict_equal(d.get("size"), entry.get("size"))
                and strict_equal(d.get("sha256"), entry.get("sha256"))
            ),
            None,
        )
        if descriptor is not None:
            delivered.remove(descriptor)
        else:
            left.append((position, entry))
    return left


def _place_extras(
    rows: list[RowUploads], anchors: list[list[int]], left: list[Positioned]
) -> list[Positioned]:
    """Each receipt `left` an extra of the row with upload steps whose window holds it
    (windows again, now that each row's own uploads bound it too): the best fit, among
    equals the latest row (uploads lead a row). Returns those no such row holds."""
    windows = _windows(
        [
            found + [f[0] for _, f in row.steps if f is not None]
            for found, row in zip(anchors, rows, strict=True)
        ]
    )
    unaccounted: list[Positioned] = []
    for position, entry in left:
        candidates = [
            number
            for number, (low, high) in enumerate(windows)
            if rows[number].steps and low < position < high
        ]
        if candidates:
            chosen = max(candidates, key=lambda number: (*_fit(rows[number], entry), number))
            rows[chosen].extra.append((position, entry))
        else:
            unaccounted.append((position, entry))
    return unaccounted


def attribute_uploads(
    scenarios: list[LifecycleScenario], log: Entries, content_uploads: Any
) -> tuple[dict[str, RowUploads], list[Positioned]]:
    """Each row's upload receipts, by what identifies them, never by counting.

    An upload step owns a receipt that declares the step's size and sha256 (the
    server records the declaration as sent); steps and receipts are paired in file
    and log order, as many as can be (a longest common subsequence), ties going to
    a receipt inside the step's window (after every earlier row's own receipts,
    before every later row's, and before or after the row's own when the steps
    put it there) and then to the earliest receipt. A receipt left
    over is a contentUploads delivery when one names its ref (a 201); otherwise
    it is an extra of the row with upload steps whose window holds it (one
    with a missing step of the same size or hash first), else of no row. So one
    row's missing, refused or extra upload never moves another row's receipts.
    Returns the rows' uploads by id and the receipts no row accounts for."""
    anchors = [_anchors(s, log) for s in scenarios]
    pairing = _pairing(scenarios, log, anchors)
    used = _pair(pairing)
    left = _undelivered(pairing.recorded, used, content_uploads)
    unaccounted = _place_extras(pairing.rows, anchors, left)
    return {s.id: row for s, row in zip(scenarios, pairing.rows, strict=True)}, unaccounted


# ---------------------------------------------------------------- step scenarios


@dataclass
class Walk:
    """What the steps call for, derived from the steps alone (no expectation read)."""

    sends: Counter[str] = field(default_factory=Counter)
    acquired: list[str] = field(default_factory=list)
    emits: list[str] = field(default_factory=list)
    failed_open: set[str] = field(default_factory=set)  # published by the fail-open fallback


def walk(scenario: LifecycleScenario) -> Walk:
    """Simulate the steps: which replies are taken first (acquired), which frames emitted."""
    result = Walk()
    slots: dict[str, str] = {}  # slot -> request key
    state: dict[str, str] = {}  # request key -> pending | staged | published | cancelled
    for step in scenario.steps:
        op = step["op"]
        if op == "send":
            result.sends[scenario.request_id(step["key"])] += 1
            slots[step["slot"]] = step["key"]
            state.setdefault(step["key"], "pending")
        elif op == "receive":
            key = slots.get(step["slot"])
            if key is not None and state.get(key) == "pending":
                state[key] = "staged"
                result.acquired.append(scenario.request_id(key))
        elif op == "accept":
            if state.get(step["key"]) == "staged":
                state[step["key"]] = "published"
        elif op == "cancel":
            state[step["key"]] = "cancelled"
        elif op == "failOpen" and state.get(step["key"]) == "pending":
            state[step["key"]] = "published"
            result.failed_open.add(scenario.request_id(step["key"]))
        elif op == "emit":
            response = step["response"]
            result.emits.append(str(response.get("id")) if isinstance(response, dict) else "")
    return result


def _rebind(value: Any, refs: dict[str, str]) -> Any:
    """`value` with every body ref that is an upload alias replaced by the receiver's ref."""
    if isinstance(value, dict):
        out = {k: _rebind(v, refs) for k, v in value.items()}
        body = out.get("body")
        if isinstance(body, dict) and isinstance(body.get("ref"), str) and body["ref"] in refs:
            out["body"] = {**body, "ref": refs[body["ref"]]}
        return out
    if isinstance(value, list):
        return [_rebind(v, refs) for v in value]
    return value


def _body_refs(message: Any) -> list[str]:
    items = (
        message.get("params", {}).get("event", {}).get("items", [])
        if isinstance(message, dict)
        else []
    )
    return [
        item["body"]["ref"]
        for item in items
        if isinstance(item, dict)
        and isinstance(item.get("body"), dict)
        and isinstance(item["body"].get("ref"), str)
    ]


def expected_observation(
    scenario: LifecycleScenario, step: dict[str, Any], refs: dict[str, str]
) -> dict[str, Any]:
    """The canonical `hooks/observe` an observe step calls for (from the expectation's state)."""
    request = scenario.requests[step["key"]]
    event = copy.deepcopy(request["params"]["event"])
    state = scenario.expected["states"].get(request["id"])
    if isinstance(state, dict) and "input" in state and isinstance(event.get("tool"), dict):
        event["tool"]["input"] = copy.deepcopy(state["input"])
    if "items" in step:
        event["items"] = copy.deepcopy(step["items"])
    event = _rebind(event, refs)
    message = {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": event},
    }
    return {"kind": "observed", "eventId": event["id"], "event": event, "message": message}


@dataclass
class _Refs:
    """What a row's uploads gave: each upload alias's receiver ref (from its step's 201),
    and where each receiver ref was first confirmed (the log position of its first 201
    among the row's upload receipts)."""

    aliases: dict[str, str]
    confirmed: dict[str, int]

    def unconfirmed(self, ref: str, position: int) -> bool:
        """Whether a body ref used at `position` had no 201 upload before it."""
        return ref not in self.confirmed or self.confirmed[ref] > position


def _upload_problems(
    scenario: LifecycleScenario, uploads: RowUploads
) -> tuple[list[Problem], dict[str, str]]:
    """Each upload step's own receipt (the one declaring its size and sha256, see
    attribute_uploads) with the status expected, a ref never given for two bodies, and
    each receipt of this row no step declares. Returns the problems and each alias's
    receiver ref."""
    problems: list[Problem] = []
    sid = scenario.id
    refs: dict[str, str] = {}
    shas: dict[str, str] = {}
    statuses = scenario.expected["uploadStatuses"]
    for number, (step, owned) in enumerate(uploads.steps):
        want = statuses[number] if number < len(statuses) else None
        step_named = (
            f"{sid}: upload {number + 1} ({step.alias}) declaring "
            f"{_declared(step.size, step.sha256)}, status {want}"
        )
        if owned is None:
            recorded = (
                "recorded in this row instead: "
                + ", ".join(_recorded(entry) for _, entry in uploads.extra)
                if uploads.extra
                else "no other upload receipt in this row"
            )
            problems.append(("UploadMismatch", f"{step_named}: no upload receipt; {recorded}"))
            continue
        entry = owned[1]
        if entry["status"] != want:
            problems.append(("UploadMismatch", f"{step_named}: recorded {_recorded(entry)}"))
        if entry["status"] == 201:
            ref = entry.get("ref")
            if not isinstance(ref, str) or not ref:
                problems.append(("UploadMismatch", f"{step_named}: a 201 without a ref"))
                continue
            actual_sha = hashlib.sha256(step.body).hexdigest()
            if ref in shas and shas[ref] != actual_sha:
                problems.append(("RefReused", f"ref {ref} was given for two different bodies"))
            shas[ref] = actual_sha
            refs.setdefault(step.alias, ref)
    for _, entry in uploads.extra:
        problems.append(
            (
                "UploadMismatch",
                f"{sid}: an upload receipt no upload step of the row declares: "
                f"recorded {_recorded(entry)}",
            )
        )
    return problems, refs


def _confirmed(uploads: RowUploads) -> dict[str, int]:
    """Each receiver ref's position of its first 201 among the row's upload receipts."""
    confirmed: dict[str, int] = {}
    for position, entry in uploads.entries():
        ref = entry.get("ref")
        if entry["status"] == 201 and isinstance(ref, str):
            confirmed.setdefault(ref, position)
    return confirmed


def _attempt_problems(
    scenario: LifecycleScenario, entries: Entries, plan: Walk, refs: _Refs
) -> list[Problem]:
    """Attempts: each request received and replied once per send, each reply after its
    receipt, and each request received as the scenario wrote it (its upload aliases
    bound to the receiver's refs), valid, its body refs used only after their 201."""
    problems: list[Problem] = []
    ids = {scenario.request_id(k) for k in scenario.requests}
    for rid in sorted(ids | set(plan.sends)):
        received, replied = entries.of("received", rid), entries.of("replied", rid)
        want = plan.sends.get(rid, 0)
        if len(received) != want or len(replied) != want:
            problems.append(
                (
                    "AttemptMismatch",
                    f"{rid}: sent {want} time(s), received {len(received)}, replied {len(replied)}",
                )
            )
        for number, (arrived, answered) in enumerate(zip(received, replied, strict=False)):
            if not arrived < answered:
                problems.append(("AttemptOrder", f"{rid}: reply {number + 1} before its receipt"))
        request = (
            _rebind(scenario.requests[_key(scenario, rid)], refs.aliases) if rid in ids else None
        )
        problems += _received_problems(rid, request, entries, received, refs)
    return problems


def _received_problems(
    rid: str, request: Any, entries: Entries, received: list[int], refs: _Refs
) -> list[Problem]:
    """Each request the server received as `rid`: valid, the same as `request` (None:
    no request of the row has that id), its body refs used only after their 201."""
    problems: list[Problem] = []
    for position in received:
        message = entries.all[position]["message"]
        issue = canonical().issue("intercept-request.schema.json", message)
        if issue is not None:  # an invalid message differs too: name the worse
            problems.append(("ReceivedInvalid", f"{rid}: {issue}"))
        elif request is not None and not strict_equal(message, request):
            found = first_difference(request, message)
            where = f" at {found[0]}" if found else ""
            problems.append(
                ("ReceivedMismatch", f"{rid}: the server received another request{where}")
            )
        for ref in _body_refs(message):
            if refs.unconfirmed(ref, position):
                problems.append(
                    ("UploadBeforeUse", f"{rid}: body ref {ref} sent before its 201 upload")
                )
    return problems


def _milestone_problems(scenario: LifecycleScenario, entries: Entries, plan: Walk) -> list[Problem]:
    """Milestones: the accepted and cancelled marks are the published and cancelled ids,
    the acquired marks the replies the steps take first, each after a reply; each
    accepted mark after its request was taken (acquired, or received when it failed
    open)."""
    problems: list[Problem] = []
    sid, expected = scenario.id, scenario.expected
    for kind, key in (("accepted", "published"), ("cancelled", "cancelled")):
        marked = Counter(entries.all[i]["id"] for i in entries.marks(sid, kind))
        if marked != Counter(expected[key]):
            problems.append(
                (
                    "MilestoneMismatch",
                    f"{kind} marks {sorted(marked.elements())}, {key} {sorted(expected[key])}",
                )
            )
    acquired = [entries.all[i]["id"] for i in entries.marks(sid, "acquired")]
    if acquired != plan.acquired:
        problems.append(
            ("AcquiredMismatch", f"acquired marks {acquired}, the steps take {plan.acquired}")
        )
    for position in entries.marks(sid, "acquired"):
        rid = entries.all[position]["id"]
        if not any(r < position for r in entries.of("replied", rid)):
            problems.append(("AcquiredOrder", f"{rid}: acquired before any reply"))
    for position in entries.marks(sid, "accepted"):
        rid = entries.all[position]["id"]
        before = entries.marks(sid, "acquired", rid)
        if rid in plan.failed_open:
            before += entries.of("received", rid)
        if not any(p < position for p in before):
            problems.append(("AcceptedOrder", f"{rid}: accepted before it was taken"))
    return problems


def _observation_problems(
    scenario: LifecycleScenario, entries: Entries, refs: _Refs
) -> list[Problem]:
    """Observations: exactly the notifications the steps call for, each valid, after its
    boundary settled, its body refs used only after their 201."""
    wanted = [
        expected_observation(scenario, step, refs.aliases)
        for step in scenario.steps
        if step["op"] == "observe"
    ]
    event_ids = {r["params"]["event"]["id"] for r in scenario.requests.values()}
    got_positions = [
        i
        for i in entries.naming_any(*(("eventId", event_id) for event_id in event_ids))
        if entries.all[i]["kind"] == "observed"
    ]
    problems = _observations_called_for(wanted, [entries.all[i] for i in got_positions])
    for position in got_positions:
        problems += _observation_order(scenario, entries, position, refs)
    return problems


def _observations_called_for(
    wanted: list[dict[str, Any]], got: list[dict[str, Any]]
) -> list[Problem]:
    """One ObservationMismatch, naming the first difference, unless the observed entries
    are the ones called for, in order."""
    if len(got) == len(wanted) and all(
        strict_equal(a, b) for a, b in zip(got, wanted, strict=False)
    ):
        return []
    detail = ""
    for a, b in zip(wanted, got, strict=False):
        found = first_difference(a, b)
        if found:
            detail = (
                f" (first difference at {found[0]}: expected {_short(found[1])}, "
                f"got {_short(found[2])})"
            )
            break
    return [
        (
            "ObservationMismatch",
            f"{len(wanted)} observations called for, {len(got)} received{detail}",
        )
    ]


def _observation_order(
    scenario: LifecycleScenario, entries: Entries, position: int, refs: _Refs
) -> list[Problem]:
    """The observation at `position`: valid, after its request's accepted or cancelled
    mark, its body refs used only after their 201."""
    problems: list[Problem] = []
    sid = scenario.id
    entry = entries.all[position]
    issue = canonical().issue("observe-notification.schema.json", entry["message"])
    if issue is not None:
        problems.append(("ReceivedInvalid", f"observation {entry['eventId']}: {issue}"))
    rid = _request_of_event(scenario, entry["eventId"])
    settled = entries.marks(sid, "accepted", rid) + entries.marks(sid, "cancelled", rid)
    if not any(p < position for p in settled):
        problems.append(
            ("ObservationOrder", f"{entry['eventId']}: observed before its boundary settled")
        )
    for ref in _body_refs(entry["message"]):
        if refs.unconfirmed(ref, position):
            problems.append(
                ("UploadBeforeUse", f"observation body ref {ref} before its 201 upload")
            )
    return problems


def verify_steps(
    scenario: LifecycleScenario,
    entries: Entries,
    uploads: RowUploads,
    emitted: list[tuple[int, dict[str, Any]]],
) -> list[Problem]:
    """Every ordering and payload rule of one step scenario, in this order: uploads,
    attempts, milestones, cancels, frames, observations."""
    plan = walk(scenario)
    problems, aliases = _upload_problems(scenario, uploads)
    refs = _Refs(aliases, _confirmed(uploads))
    problems += _attempt_problems(scenario, entries, plan, refs)
    problems += _milestone_problems(scenario, entries, plan)
    problems += _cancel_orders(scenario, entries)
    problems += _frame_orders(scenario, entries, plan, emitted)
    problems += _observation_problems(scenario, entries, refs)
    return problems


def _key(scenario: LifecycleScenario, rid: str) -> str:
    return str(next(k for k, r in scenario.requests.items() if r["id"] == rid))


def _request_of_event(scenario: LifecycleScenario, event_id: str) -> str:
    for request in scenario.requests.values():
        if request["params"]["event"]["id"] == event_id:
            return str(request["id"])
    return event_id


def _cancel_orders(scenario: LifecycleScenario, entries: Entries) -> list[Problem]:
    problems: list[Problem] = []
    sid = scenario.id
    seen_receive: set[str] = set()
    slots: dict[str, str] = {}
    for step in scenario.steps:
        if step["op"] == "send":
            slots[step["slot"]] = step["key"]
        elif step["op"] == "receive" and step["slot"] in slots:
            seen_receive.add(slots[step["slot"]])
        elif step["op"] == "cancel":
            rid = scenario.request_id(step["key"])
            received, replied = entries.of("received", rid), entries.of("replied", rid)
            cancelled = entries.marks(sid, "cancelled", rid)
            acquired = entries.marks(sid, "acquired", rid)
            if not cancelled or not received:
                continue  # counted by the milestone and attempt rules
            if not received[0] < cancelled[0]:
                problems.append(("CancelOrder", f"{rid}: cancelled before it was received"))
            if step["key"] in seen_receive:
                if replied and not replied[0] < cancelled[0]:
                    problems.append(
                        ("CancelOrder", f"{rid}: cancelled after receive, yet before the reply")
                    )
                if acquired and not acquired[0] < cancelled[0]:
                    problems.append(("CancelOrder", f"{rid}: cancelled before it was acquired"))
            elif replied and not cancelled[0] < replied[0]:
                problems.append(
                    ("CancelOrder", f"{rid}: cancelled before its reply, yet marked after")
                )
    return problems


def _frame_orders(
    scenario: LifecycleScenario,
    entries: Entries,
    plan: Walk,
    emitted: list[tuple[int, dict[str, Any]]],
) -> list[Problem]:
    """Stray frames (emit) and late replies (a cancelled request answered while the next waits)."""
    problems: list[Problem] = []
    sid = scenario.id
    ids = [e.get("id") for _, e in emitted]
    if ids != plan.emits:
        problems.append(("StrayFrame", f"emitted {ids}, the steps emit {plan.emits}"))
    discarded = [(i, entries.all[i]["id"]) for i in entries.marks(sid, "discarded")]
    if [d for _, d in discarded] != plan.emits:
        problems.append(
            ("StrayFrame", f"discarded {[d for _, d in discarded]}, emitted {plan.emits}")
        )
    steps = scenario.steps
    for number, step in enumerate(steps):
        if step["op"] != "emit":
            continue
        frame = emitted[len([s for s in steps[:number] if s["op"] == "emit"])] if emitted else None
        after = next((s for s in steps[number + 1 :] if s["op"] == "release"), None)
        if frame is None or after is None:
            continue
        live = scenario.request_id(after["key"])
        drop = next((i for i, d in discarded if d == frame[1].get("id") and i > frame[0]), None)
        received, replied = entries.of("received", live), entries.of("replied", live)
        order = [
            received[-1] if received else -1,
            frame[0],
            drop if drop is not None else -1,
            replied[-1] if replied else -1,
        ]
        if -1 in order or order != sorted(order):
            problems.append(
                ("StrayFrame", f"{live}: received, emitted, discarded and replied out of order")
            )
    # A cancelled request's late reply arrives while the next request waits.
    cancelled_keys: list[str] = []
    for number, step in enumerate(steps):
        if step["op"] == "cancel":
            cancelled_keys.append(step["key"])
        if step["op"] == "send" and cancelled_keys and step["key"] not in cancelled_keys:
            old = cancelled_keys[-1]
            releases = [s["key"] for s in steps[number:] if s["op"] == "release"]
            if (
                old in releases
                and step["key"] in releases
                and releases.index(old) < releases.index(step["key"])
            ):
                a, b = scenario.request_id(old), scenario.request_id(step["key"])
                got_b, rep_a, rep_b = (
                    entries.of("received", b),
                    entries.of("replied", a),
                    entries.of("replied", b),
                )
                if got_b and rep_a and rep_b and not got_b[0] < rep_a[-1] < rep_b[0]:
                    problems.append(
                        (
                            "LateReplyOrder",
                            f"{a} must be answered after {b} arrived, before {b} was",
                        )
                    )
    return problems


# ---------------------------------------------------------------- chains


def _matches(got: Any, want: Any) -> bool:
    if strict_equal(got, want):
        return True
    try:
        got_items = got["params"]["event"]["items"]
        want_items = want["params"]["event"].get("items")
    except (KeyError, TypeError):
        return False
    if want_items is None and got_items == []:
        # an event with no items, projected: an empty list is the same absence
        # ("Common lists may be empty for legitimately absent or omitted content",
        # spec/draft execution-payloads.md, 'Content and accounting')
        copied = copy.deepcopy(got)
        del copied["params"]["event"]["items"]
        return strict_equal(copied, want)
    if (
        want_items == []
        and isinstance(got_items, list)
        and all(
            isinstance(i, dict)
            and i.get("selection") == "omit"
            and "body" not in i
            and "gap" not in i
            for i in got_items
        )
    ):
        copied = copy.deepcopy(got)
        copied["params"]["event"]["items"] = []
        return strict_equal(copied, want)
    return False


@dataclass
class _Chain:
    """One chain row's receipts: its request's (`rid`) receipts and replies and its
    event's (`event_id`) observations, as log positions in order, and its marks."""

    sid: str
    rid: str
    event_id: str
    received: list[int]
    replied: list[int]
    observed: list[int]
    settled: list[int]  # chain-settled marks
    cancelled: list[int]
    blocked: list[int]  # observer-blocked marks

    @property
    def cause(self) -> int:
        """The position the boundary settled on: its cancel mark when interrupted, else
        its last call's receipt or reply (-1: none)."""
        last_call = max(self.received + self.replied, default=-1)
        return self.cancelled[-1] if self.cancelled else last_call


def _chain(scenario: LifecycleScenario, entries: Entries) -> _Chain:
    """The receipts of a chain row's one request `a` and of its event."""
    sid = scenario.id
    rid = scenario.request_id("a")
    event_id = scenario.requests["a"]["params"]["event"]["id"]
    blocked = entries.marks(sid, "observer-blocked")
    if not blocked:  # an upstream server records each held observer itself: {kind, id: event}
        blocked = [
            i
            for i in entries.naming("id", event_id)
            if entries.all[i]["kind"] == "observer-blocked" and "scenario" not in entries.all[i]
        ]
    return _Chain(
        sid,
        rid,
        event_id,
        received=entries.of("received", rid),
        replied=entries.of("replied", rid),
        observed=entries.of("observed", event_id),
        settled=entries.marks(sid, "chain-settled"),
        cancelled=entries.marks(sid, "cancelled"),
        blocked=blocked,
    )


def _chain_kinds(chain: _Chain, entries: Entries) -> list[Problem]:
    """No receipt of the row of a kind a chain never has."""
    mine = entries.naming_any(
        ("id", chain.rid), ("eventId", chain.event_id), ("scenario", chain.sid)
    )
    foreign = sorted({entries.all[i]["kind"] for i in mine} - set(CHAIN_KINDS))
    if foreign:
        return [("ChainReceipts", f"receipt kinds a chain never has: {', '.join(foreign)}")]
    return []


def _chain_calls(scenario: LifecycleScenario, chain: _Chain, entries: Entries) -> list[Problem]:
    """The calls: the proof's requests received in order (state carried forward,
    projection), each valid, each answered once after its receipt (a scripted timeout
    never) before the next is sent."""
    problems: list[Problem] = []
    received, replied = chain.received, chain.replied
    wanted = scenario.chain_proof["requests"]
    got = [entries.all[i]["message"] for i in received]
    if len(got) != len(wanted) or not all(
        _matches(g, w) for g, w in zip(got, wanted, strict=False)
    ):
        problems.append(
            (
                "ChainRequests",
                f"{len(wanted)} calls in the proof, {len(got)} received, "
                "or a call's request differs (state carried forward, projection)",
            )
        )
    for message in got:
        issue = canonical().issue("intercept-request.schema.json", message)
        if issue is not None:
            problems.append(("ReceivedInvalid", f"{chain.rid}: {issue}"))
    answered = [scenario.fault("a", n) != "timeout" for n in range(len(received))]
    pattern = [k for ok in answered for k in (("received", "replied") if ok else ("received",))]
    if len(replied) != sum(answered):
        problems.append(
            (
                "ChainCalls",
                f"{len(replied)} replies to {len(received)} calls: every call needs one reply "
                "after its receipt (a scripted timeout none)",
            )
        )
    elif [entries.all[i]["kind"] for i in sorted(received + replied)] != pattern:
        problems.append(("ChainCalls", "a call was sent before the previous one was answered"))
    return problems


def _chain_observations(
    scenario: LifecycleScenario, chain: _Chain, entries: Entries
) -> list[Problem]:
    """The observations: each one of the proof's notifications (matched in any order,
    each once), its entry's event its message's, valid; none of the proof missing."""
    problems: list[Problem] = []
    remaining = list(scenario.chain_proof["observations"])
    for entry in (entries.all[i] for i in chain.observed):
        match = next((w for w in remaining if _matches(entry["message"], w)), None)
        if match is None:
            problems.append(
                ("ChainObservations", f"an unexpected observation {_short(entry['message'])}")
            )
        else:
            remaining.remove(match)
        if not strict_equal(entry["event"], entry["message"].get("params", {}).get("event")):
            problems.append(("ChainObservations", "an observed entry's event is not its message's"))
        issue = canonical().issue("observe-notification.schema.json", entry["message"])
        if issue is not None:
            problems.append(("ReceivedInvalid", f"observation: {issue}"))
    if remaining:
        problems.append(
            ("ChainObservations", f"{len(remaining)} notifications of the proof never arrived")
        )
    return problems


def _chain_settlement(scenario: LifecycleScenario, chain: _Chain) -> list[Problem]:
    """The settlement: one chain-settled mark, no observation before the boundary
    settled; an interrupted chain cancelled once (received < cancelled <= settled <
    replied) and observing nothing, any other settled after its last call and never
    cancelled."""
    problems: list[Problem] = []
    received, replied, settled, cancelled = (
        chain.received,
        chain.replied,
        chain.settled,
        chain.cancelled,
    )
    if len(settled) != 1:
        problems.append(("ChainSettlement", f"{len(settled)} chain-settled marks, one is required"))
    if any(p < chain.cause for p in chain.observed):
        problems.append(("ChainSettlement", "an observation came before the boundary settled"))
    if (scenario.chain or {}).get("interrupt"):
        ok = (
            len(cancelled) == 1
            and received
            and replied
            and settled
            and received[0] < cancelled[0] <= settled[0] < replied[0]
        )
        if not ok:
            problems.append(
                ("ChainInterrupt", "an interrupt needs received < cancelled <= settled < replied")
            )
        if chain.observed or chain.blocked:
            problems.append(("ChainInterrupt", "an interrupted chain observes nothing"))
    else:
        if cancelled:
            problems.append(("ChainSettlement", "a cancel in a chain that is not interrupted"))
        last_call = max(received + replied, default=-1)
        if settled and not last_call < settled[0]:
            problems.append(("ChainSettlement", "settled before the last call was answered"))
    return problems


def _held_observers(scenario: LifecycleScenario, chain: _Chain) -> list[Problem]:
    """Held observers: where the chain holds them, one observer-blocked mark per
    notification of the proof, each after the boundary settled; elsewhere none."""
    if (scenario.chain or {}).get("holdObservers"):
        if (
            len(chain.blocked) != len(scenario.chain_proof["observations"])
            or any(b < chain.cause for b in chain.blocked)
            or not chain.settled
        ):
            return [
                ("HeldObservers", "each held observer needs one observer-blocked after settlement")
            ]
    elif chain.blocked:
        return [("HeldObservers", "observer-blocked marks where no observer is held")]
    return []


def verify_chain(scenario: LifecycleScenario, entries: Entries) -> list[Problem]:
    """Every rule of one chain row (one request `a`, its calls against the row's
    `chainProof`), in this order: receipt kinds, calls, observations, settlement,
    held observers."""
    chain = _chain(scenario, entries)
    problems = _chain_kinds(chain, entries)
    problems += _chain_calls(scenario, chain, entries)
    problems += _chain_observations(scenario, chain, entries)
    problems += _chain_settlement(scenario, chain)
    problems += _held_observers(scenario, chain)
    return problems


# ---------------------------------------------------------------- the set


def verify_set(
    set_name: str,
    scenarios: list[LifecycleScenario],
    *,
    report: Any,
    entries: Any,
    client_exit: int | None,
    language: str,
    blind: bool,
    stage: str,
    prior_errors: list[CombinationError],
) -> tuple[list[RowVerdict], list[CombinationError]]:
    """Judge every row of one set (one client run) into row verdicts and combination errors."""
    results, errors = check_step_report(
        report,
        schema="lifecycle-report.schema.json",
        language=language,
        ids={s.id for s in scenarios},
        client_exit=client_exit,
        stage=stage,
        prior=prior_errors,
    )
    good, entry_errors = (
        check_entries(entries, stage) if report is not None or entries is not None else ([], [])
    )
    errors += entry_errors
    log = Entries(good)
    # Uploads carry no scenario: each step owns the receipt that declares it.
    content_uploads = report.get("contentUploads") if isinstance(report, dict) else None
    uploads, unaccounted = attribute_uploads(scenarios, log, content_uploads)
    # Stray frames carry no scenario either: assign them in file order.
    emit_cursor = 0
    rows: list[RowVerdict] = []
    for scenario in scenarios:
        emits = sum(1 for s in scenario.steps if s["op"] == "emit")
        emitted = log.emitted[emit_cursor : emit_cursor + emits]
        emit_cursor += emits
        entry = results.get(scenario.id)
        row = RowVerdict(set_name, scenario.id, Status.FAILED, scenario.expected)
        rows.append(row)
        if not prejudge(row, entry, errors):
            continue
        assert entry is not None
        problems: list[Problem] = []
        found = first_difference(scenario.expected, entry.get("actual"))
        if found is not None:
            problems.append(
                (
                    "LifecycleResult",
                    f"{found[0]}: expected {_short(found[1])}, got {_short(found[2])}",
                )
            )
        problems += (
            verify_chain(scenario, log)
            if scenario.chain
            else verify_steps(scenario, log, uploads[scenario.id], emitted)
        )
        conclude(row, problems)
    if unaccounted:
        errors.append(
            CombinationError(
                stage,
                "UploadMismatch",
                f"{len(unaccounted)} upload receipt(s) that neither an upload step nor a "
                "contentUploads entry accounts for, outside every row with upload steps: "
                + ", ".join(f"entry {p}: {_recorded(e)}" for p, e in unaccounted[:3])
                + (" ..." if len(unaccounted) > 3 else ""),
            )
        )
    return rows, errors
