"""Shorthands the compaction rows share (envelopes only; no rule is applied here).

`context(rid, n)` is the before event's items: `n` messages with ids
`<rid>:m1` .. `<rid>:mn`. Each row writes its own `removed(...)` list, the
summary text of the synthetic compactor, the instructions every call
carries and the state carried forward, literally.
"""

from __future__ import annotations

from compaction_wire import (
    ABSENT,
    AFTER_CAPABILITIES,
    BEFORE_CAPABILITIES,
    JSON,
    after_event,
    before_event,
    intercept,
    message,
    observe,
)

LINES = (
    ("user", "Plan the move of the invoice ledger to the new cluster."),
    ("assistant", "The ledger moves in two maintenance slots on Tuesday and Thursday."),
    ("user", "Who signs off the second slot?"),
    ("assistant", "Priya signs off the second slot after the dry run."),
)


def context(rid: str, n: int = 2) -> list[JSON]:
    """The context to compact: the first `n` lines of a fixed conversation."""
    return [message(f"{rid}:m{i + 1}", role, body) for i, (role, body) in enumerate(LINES[:n])]


def ids(rid: str, *names: str) -> list[str]:
    return [f"{rid}:{name}" for name in names]


def bcall(rid: str, n: int, instructions: JSON, carried: JSON) -> JSON:
    """A before intercept request carrying `instructions` (ABSENT: none) and `carried`."""
    return intercept(before_event(rid, context(rid, n), instructions), BEFORE_CAPABILITIES, carried)


def acall(
    rid: str,
    summary: JSON,
    gone: list[JSON],
    execution: JSON,
    carried: JSON = ABSENT,
    capabilities: JSON = AFTER_CAPABILITIES,
) -> JSON:
    """An after intercept request (COMPACTION.md step 4) with the row's values."""
    return intercept(after_event(rid, summary, gone, execution), capabilities, carried)


def bseen(rid: str, n: int, instructions: JSON) -> JSON:
    """A hooks/observe of the settled before event."""
    return observe(before_event(rid, context(rid, n), instructions))


def aseen(rid: str, summary: JSON, gone: list[JSON], execution: JSON) -> JSON:
    """A hooks/observe of the settled after event."""
    return observe(after_event(rid, summary, gone, execution))
