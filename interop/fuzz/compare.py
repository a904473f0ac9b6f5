"""Pairwise comparison of what clients derived for the same row, under strict JSON equality.

There is no oracle here: with three clients, two that agree are no more right
than the third. A row disagrees when any two clients differ in status or in
any key of `actual` (keys the protocol leaves undefined for the row are left
out); its class is the sorted set of keys that differ, so one misread rule
shows up as one class however many rows it touches.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

from interop.fuzz.generate import FuzzCase
from interop.jsonvalue import strict_equal

REJECTED = {"rejected": True}


@dataclass(frozen=True)
class Said:
    """What one client reported for one row."""

    status: str | None  # None: the client reported nothing for the row
    actual: Any = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.status == "completed":
            out["actual"] = self.actual
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class Disagreement:
    case: FuzzCase
    said: dict[str, Said]
    keys: tuple[str, ...]  # the class: which keys differ

    @property
    def label(self) -> str:
        return ", ".join(self.keys)


def said(entry: dict[str, Any] | None, ignore: tuple[str, ...]) -> Said:
    if entry is None:
        return Said(None)
    status = entry.get("status")
    error = entry.get("error") if isinstance(entry.get("error"), str) else None
    actual = entry.get("actual")
    if isinstance(actual, dict) and ignore:
        actual = {k: val for k, val in actual.items() if k not in ignore}
    return Said(status if isinstance(status, str) else None, actual, error)


def differing_keys(a: Said, b: Said) -> tuple[str, ...]:
    """Why two reports of one row differ; () when they agree."""
    if a.status != b.status:
        return ("status",)
    if a.status != "completed":
        return ()  # neither ran the row: counted apart, not a disagreement
    x, y = a.actual, b.actual
    if not isinstance(x, dict) or not isinstance(y, dict):
        return () if strict_equal(x, y) else ("actual",)
    if strict_equal(x, REJECTED) != strict_equal(y, REJECTED):
        return ("rejected",)
    return tuple(
        sorted(
            k
            for k in x.keys() | y.keys()
            if k not in x or k not in y or not strict_equal(x[k], y[k])
        )
    )


def compare(case: FuzzCase, entries: dict[str, dict[str, Any] | None]) -> Disagreement | None:
    """The row's disagreement over every pair of clients, or None when all agree."""
    views = {name: said(entry, case.ignore) for name, entry in sorted(entries.items())}
    keys: set[str] = set()
    for (_, a), (_, b) in combinations(views.items(), 2):
        keys.update(differing_keys(a, b))
    if not keys:
        return None
    return Disagreement(case, views, tuple(sorted(keys)))


def unrun(case: FuzzCase, entries: dict[str, dict[str, Any] | None]) -> dict[str, Said] | None:
    """The row when no client ran it (all failed or unsupported alike), else None."""
    views = {name: said(entry, case.ignore) for name, entry in sorted(entries.items())}
    if any(view.status == "completed" for view in views.values()):
        return None
    return views


def classes(disagreements: list[Disagreement]) -> dict[tuple[str, ...], list[Disagreement]]:
    """Disagreements grouped by the keys that differ, each group in row order."""
    grouped: dict[tuple[str, ...], list[Disagreement]] = {}
    for item in sorted(disagreements, key=lambda d: d.case.index):
        grouped.setdefault(item.keys, []).append(item)
    return dict(sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0])))
