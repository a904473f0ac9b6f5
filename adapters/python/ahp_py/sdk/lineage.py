"""Source-local lineage (docs/CATALOGUE.md, "Lineage"): what a receiver admits.

A ``LineageChecker`` keeps, for its life, the accepted events by identity
``(source, id)``. An edge is an event's ``parentEventId``, naming an event of
the same ``source`` only. ``admit`` judges one event that already passed the
schema, in order:

1. identity: a known ``(source, id)`` must have the same ``type``, the same
   ``parentEventId`` (both absent or equal) and, for task events, the same
   ``task.id``, for workspace events the same ``workspace.kind``: then it is a
   redelivery (accepted, nothing changes);
2. cycles: the parent is the event itself, or the chain of known parents from
   it reaches the event's id (also through events that named it as their
   parent before it arrived);
3. proposal and actual: an actual change whose known parent is a proposal
   keeps its kind and identity (task: ``task.id`` and ``task.operation``;
   workspace: ``workspace.kind``); checked both ways, so a proposal arriving
   after its children (a late parent) is checked against each known child;
4. no-op actual changes;
5. an unknown parent is accepted (checked when it arrives, by 3).

A rejection changes no state; an accepted event becomes known. Equality of
values is typed deep equality (``codec.json_equal``). No I/O, no contract.
"""

from __future__ import annotations

from typing import Any

from . import codec
from .record import record

TASK_BEFORE = "task.change.before"
TASK_AFTER = "task.change.after"
WORKSPACE_BEFORE = "workspace.change.before"
WORKSPACE_AFTER = "workspace.change.after"
FILE_CHANGED = "file.changed"
PROPOSALS = {TASK_BEFORE: "task", WORKSPACE_BEFORE: "workspace"}
ACTUALS = {TASK_AFTER: "task", WORKSPACE_AFTER: "workspace"}
TASK_EVENTS = frozenset({TASK_BEFORE, TASK_AFTER})
WORKSPACE_EVENTS = frozenset({WORKSPACE_BEFORE, WORKSPACE_AFTER})

# The rule that rejected an event (for diagnostics and tests).
IDENTITY = "identity"
CYCLE = "cycle"
PROPOSAL = "proposal"
NO_OP = "no-op"

_ABSENT = object()


@record
class Verdict:
    accepted: bool
    rule: str | None = None  # the failing rule when rejected
    reason: str = ""
    redelivery: bool = False

    @classmethod
    def reject(cls, rule: str, reason: str) -> Verdict:
        return cls(False, rule, reason)


ACCEPTED = Verdict(True)
REDELIVERED = Verdict(True, redelivery=True)


def _key(value: Any) -> str:
    """One part of an identity as a dictionary key (any JSON value, typed)."""
    return codec.dumps(value)


def _field(event: dict[str, Any], *path: str) -> Any:
    value: Any = event
    for name in path:
        if not isinstance(value, dict) or name not in value:
            return _ABSENT
        value = value[name]
    return value


def _same(left: Any, right: Any) -> bool:
    if left is _ABSENT or right is _ABSENT:
        return left is right
    return codec.json_equal(left, right)


def _parent(event: dict[str, Any]) -> Any:
    """``parentEventId``, or None when absent."""
    return event.get("parentEventId")


def _all_kept(change: Any, prior: Any) -> bool:
    """Every key of ``change`` is in ``prior`` with a strictly equal value."""
    if not isinstance(change, dict) or not isinstance(prior, dict):
        return False
    return all(
        key in prior and codec.json_equal(value, prior[key]) for key, value in change.items()
    )


def no_op(event: dict[str, Any]) -> str | None:
    """Why ``event`` is a no-op actual change (rule 4), else None."""
    kind = event.get("type")
    if kind == TASK_AFTER and _field(event, "task", "operation") == "update":
        change = _field(event, "task", "change")
        if isinstance(change, dict) and not change:
            return "an update task.change.after with an empty change"
        if _all_kept(change, _field(event, "task", "prior")):
            return "an update task.change.after whose change equals its prior"
    if kind == WORKSPACE_AFTER:
        prior = _field(event, "workspace", "prior")
        if prior is not _ABSENT and _all_kept(_field(event, "workspace", "change"), prior):
            return "a workspace.change.after whose change equals its prior"
    if kind == FILE_CHANGED:
        changes = event.get("changes")
        for index, change in enumerate(changes if isinstance(changes, list) else []):
            if not isinstance(change, dict) or change.get("operation") != "update":
                continue
            if (
                "before" in change
                and "after" in change
                and codec.json_equal(change["before"], change["after"])
            ):
                return f"file.changed changes[{index}] is an update with before equal to after"
    return None


def proposal_mismatch(proposal: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """Why ``actual`` does not carry out ``proposal`` (rule 3), else None; both
    must be a proposal and an actual change (anything else is free)."""
    proposed, done = PROPOSALS.get(proposal.get("type", "")), ACTUALS.get(actual.get("type", ""))
    if proposed is None or done is None:
        return None
    if proposed != done:
        return f"a {actual.get('type')} under a {proposal.get('type')} is the wrong kind"
    if done == "task":
        for name in ("id", "operation"):
            if not _same(_field(proposal, "task", name), _field(actual, "task", name)):
                return f"the actual change does not keep the proposal's task.{name}"
        return None
    if not _same(_field(proposal, "workspace", "kind"), _field(actual, "workspace", "kind")):
        return "the actual change does not keep the proposal's workspace.kind"
    return None


class LineageChecker:
    """The accepted events of one receiver, by ``(source, id)``."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], dict[str, Any]] = {}
        # (source, parent id) -> ids of known events naming that parent, in order
        self._children: dict[tuple[str, str], list[str]] = {}

    def known(self, source: Any, ident: Any) -> dict[str, Any] | None:
        """The accepted event with this identity, if any (a copy)."""
        event = self._known.get((_key(source), _key(ident)))
        return None if event is None else dict(codec.clone(event))

    def __len__(self) -> int:
        return len(self._known)

    def judge(self, event: dict[str, Any]) -> Verdict:
        """The verdict on ``event`` (schema-valid), changing nothing."""
        source, ident = _key(event.get("source")), _key(event.get("id"))
        known = self._known.get((source, ident))
        if known is not None:
            return self._identity(known, event)
        cycle = self._cycle(source, event)
        if cycle:
            return Verdict.reject(CYCLE, cycle)
        mismatch = self._proposal(source, ident, event)
        if mismatch:
            return Verdict.reject(PROPOSAL, mismatch)
        reason = no_op(event)
        if reason:
            return Verdict.reject(NO_OP, reason)
        return ACCEPTED

    def admit(self, event: dict[str, Any]) -> Verdict:
        """Judge ``event``; when accepted (not a redelivery) it becomes known."""
        verdict = self.judge(event)
        if verdict.accepted and not verdict.redelivery:
            source, ident = _key(event.get("source")), _key(event.get("id"))
            self._known[(source, ident)] = codec.clone(event)
            parent = _parent(event)
            if parent is not None:
                self._children.setdefault((source, _key(parent)), []).append(ident)
        return verdict

    def _identity(self, known: dict[str, Any], event: dict[str, Any]) -> Verdict:
        if not _same(known.get("type", _ABSENT), event.get("type", _ABSENT)):
            return Verdict.reject(IDENTITY, "a known (source, id) with another type")
        if not _same(known.get("parentEventId", _ABSENT), event.get("parentEventId", _ABSENT)):
            return Verdict.reject(IDENTITY, "a known (source, id) with another parentEventId")
        kind = event.get("type")
        if kind in TASK_EVENTS and not _same(
            _field(known, "task", "id"), _field(event, "task", "id")
        ):
            return Verdict.reject(IDENTITY, "a known (source, id) with another task.id")
        if kind in WORKSPACE_EVENTS and not _same(
            _field(known, "workspace", "kind"), _field(event, "workspace", "kind")
        ):
            return Verdict.reject(IDENTITY, "a known (source, id) with another workspace.kind")
        return REDELIVERED

    def _cycle(self, source: str, event: dict[str, Any]) -> str | None:
        ident = _key(event.get("id"))
        parent = _parent(event)
        seen: set[str] = set()
        while parent is not None:
            step = _key(parent)
            if step == ident:
                if not seen:
                    return "the event names itself as its parent"
                return "the chain of known parents reaches the event itself"
            if step in seen:
                return None  # a loop among known events that does not reach this one
            seen.add(step)
            known = self._known.get((source, step))
            if known is None:
                return None
            parent = _parent(known)
        return None

    def _proposal(self, source: str, ident: str, event: dict[str, Any]) -> str | None:
        parent = _parent(event)
        if parent is not None:
            known = self._known.get((source, _key(parent)))
            if known is not None:
                mismatch = proposal_mismatch(known, event)
                if mismatch:
                    return mismatch
        if event.get("type") in PROPOSALS:
            for child in self._children.get((source, ident), []):
                mismatch = proposal_mismatch(event, self._known[(source, child)])
                if mismatch:
                    return f"a known child {codec.loads(child)!r}: {mismatch}"
        return None
