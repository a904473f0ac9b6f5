"""What changed between two reports (`reportVersion` 3): new failures, fixes, changed actuals.

Plain functions, for the command line to wire up:

- `diff(old: dict, new: dict) -> ReportDiff`: compare two report documents; a
  document that is not `reportVersion` 3 (or lacks `sets` or `combinations`)
  raises `DiffError` naming the report and the field.
- `ReportDiff.lines() -> list[str]`: the human text (`["no differences"]` for
  an empty diff); `ReportDiff.as_json() -> dict`: the same as JSON;
  `ReportDiff.regression`: whether the new report is worse; `ReportDiff.empty`.

A row is named by its path `suite/set/client->server/transport/auth/id`
(`interop.known.row_path`), a combination by `suite/client->server/transport/auth`.
A passed row is compared by its digest (computed from its `actual` in a
`--full-report`), a failing one by its `actual` and `error`. `failed` and
`known-failing` are failing; only `passed` passes.

Entries (each sorted by path):

- `newFailures`: rows `failed` now that were not failing (passed, another
  status, or absent);
- `fixes`: rows passing now that were failing;
- `changedActuals`: rows passing in both whose digest changed, and rows
  failing in both whose actual or error changed;
- `statusChanges`: every other change of a row's status (e.g. passed to
  unsupported, failed to known-failing);
- `rowsAdded`, `rowsRemoved`: rows in only one report (a row of an added or
  removed combination too);
- `combinationsAdded`, `combinationsRemoved`, `combinationsChanged` (status).

`regression` is true when a row that passed does not pass now (failed,
unsupported, not run, or missing, whether its combination is there or not),
when a row fails now that did not exist or was not failing, and when a
combination is `failed` now that was not failing (or did not exist): an error
such as a leaked process fails a combination whose rows all passed. A row or
combination `known-failing` in the new report is never a regression, and a
changed actual on a row still passing is reported, not a regression, and so is
a row (or combination) failing in both, `known-failing` in one and `failed` in
the other included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from interop.jsonvalue import dumps_compact
from interop.known import row_path
from interop.report.document import REPORT_VERSION
from interop.results import Status, digest, rows_of

FAILING = (Status.FAILED, Status.KNOWN_FAILING, Status.FLAKY)


class DiffError(ValueError):
    """A report cannot be compared (wrong version, a field missing)."""


@dataclass(frozen=True)
class RowChange:
    """One row's change: its status in each report (None: absent) and a detail."""

    path: str
    old: str | None
    new: str | None
    detail: str = ""

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "old": self.old, "new": self.new}
        if self.detail:
            data["detail"] = self.detail
        return data

    def line(self) -> str:
        statuses = f"{self.old or '(absent)'} -> {self.new or '(absent)'}"
        return f"  {self.path}: {statuses}" + (f": {self.detail}" if self.detail else "")


@dataclass(frozen=True)
class CombinationChange:
    path: str
    old: str | None
    new: str | None

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "old": self.old, "new": self.new}

    def line(self) -> str:
        if self.old is None:
            return f"  {self.path} ({self.new})"
        if self.new is None:
            return f"  {self.path} (was {self.old})"
        return f"  {self.path}: {self.old} -> {self.new}"


SECTIONS = (
    ("newFailures", "new failures"),
    ("fixes", "fixes"),
    ("changedActuals", "changed actuals"),
    ("statusChanges", "other row status changes"),
    ("rowsAdded", "rows added"),
    ("rowsRemoved", "rows removed"),
    ("combinationsAdded", "combinations added"),
    ("combinationsRemoved", "combinations removed"),
    ("combinationsChanged", "combinations whose status changed"),
)


@dataclass
class ReportDiff:
    new_failures: list[RowChange] = field(default_factory=list)
    fixes: list[RowChange] = field(default_factory=list)
    changed_actuals: list[RowChange] = field(default_factory=list)
    status_changes: list[RowChange] = field(default_factory=list)
    rows_added: list[RowChange] = field(default_factory=list)
    rows_removed: list[RowChange] = field(default_factory=list)
    combinations_added: list[CombinationChange] = field(default_factory=list)
    combinations_removed: list[CombinationChange] = field(default_factory=list)
    combinations_changed: list[CombinationChange] = field(default_factory=list)
    regressions: list[str] = field(default_factory=list)  # each names a row or a combination
    notes: list[str] = field(default_factory=list)  # e.g. the new report is incomplete

    @property
    def regression(self) -> bool:
        return bool(self.regressions)

    def _sections(self) -> dict[str, list[RowChange] | list[CombinationChange]]:
        return {
            "newFailures": self.new_failures,
            "fixes": self.fixes,
            "changedActuals": self.changed_actuals,
            "statusChanges": self.status_changes,
            "rowsAdded": self.rows_added,
            "rowsRemoved": self.rows_removed,
            "combinationsAdded": self.combinations_added,
            "combinationsRemoved": self.combinations_removed,
            "combinationsChanged": self.combinations_changed,
        }

    @property
    def empty(self) -> bool:
        return not any(self._sections().values())

    def as_json(self) -> dict[str, Any]:
        return {
            "regression": self.regression,
            "regressions": list(self.regressions),
            **{k: [c.as_json() for c in v] for k, v in self._sections().items()},
            "notes": list(self.notes),
        }

    def lines(self) -> list[str]:
        lines = list(self.notes)
        if self.empty:
            return [*lines, "no differences"]
        sections = self._sections()
        # rows of a combination added or removed whole are summed up on one line
        whole = {
            "rowsAdded": {c.path for c in self.combinations_added},
            "rowsRemoved": {c.path for c in self.combinations_removed},
        }
        for key, title in SECTIONS:
            entries = sections[key]
            if not entries:
                continue
            lines.append(f"{title} ({len(entries)}):")
            summed: dict[str, int] = {}
            for entry in entries:
                parent = _combination_of(entry.path) if key in whole else ""
                if parent in whole.get(key, set()):
                    summed[parent] = summed.get(parent, 0) + 1
                else:
                    lines.append(entry.line())
            verb = "added" if key == "rowsAdded" else "removed"
            lines += [f"  {p}: {n} row(s), its combination {verb}" for p, n in summed.items()]
        if self.regressions:
            lines.append(f"regression: {len(self.regressions)}")
            lines += [f"  {r}" for r in self.regressions]
        else:
            lines.append("no regression")
        return lines


def _combination_of(path: str) -> str:
    """`suite/client->server/transport/auth` of a row path."""
    suite, _set, pair, transport, auth, *_ = path.split("/")
    return f"{suite}/{pair}/{transport}/{auth}"


def _combination_path(c: dict[str, Any]) -> str:
    return f"{c['suite']}/{c['client']}->{c['server']}/{c['transport']}/{c['auth']}"


def _check(document: Any, which: str) -> None:
    if not isinstance(document, dict):
        raise DiffError(f"{which} report: not a JSON object")
    version = document.get("reportVersion")
    if version != REPORT_VERSION or isinstance(version, bool):
        raise DiffError(
            f"{which} report: reportVersion is {version!r}, not {REPORT_VERSION} "
            "(only reportVersion 3 reports can be compared)"
        )
    for key in ("sets", "combinations"):
        if not isinstance(document.get(key), list):
            raise DiffError(f"{which} report: {key} is missing or not a list")


@dataclass(frozen=True)
class _Row:
    status: str
    digest: str | None
    actual: Any
    error: str | None
    expected: Any


def _rows(document: dict[str, Any]) -> dict[str, _Row]:
    rows: dict[str, _Row] = {}
    for c in document["combinations"]:
        for row in rows_of(document, c):
            status = row["status"]
            fingerprint = row.get("digest")
            if status == Status.PASSED and fingerprint is None and "actual" in row:
                fingerprint = digest(row["actual"])  # a --full-report keeps the actual whole
            rows[row_path(c, row["set"], row["id"])] = _Row(
                status, fingerprint, row.get("actual"), row.get("error"), row.get("expected")
            )
    return rows


def _short(value: Any, limit: int = 120) -> str:
    text = dumps_compact(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff(old: dict[str, Any], new: dict[str, Any]) -> ReportDiff:
    """Compare two report documents (see the module docstring)."""
    _check(old, "old")
    _check(new, "new")
    result = ReportDiff()
    if new.get("incomplete"):
        result.notes.append("note: the new report is incomplete: rows it never ran show as removed")
    if old.get("incomplete"):
        result.notes.append("note: the old report is incomplete")
    if old.get("profile") != new.get("profile"):
        result.notes.append(f"note: profile {old.get('profile')!r} -> {new.get('profile')!r}")
    before, after = _rows(old), _rows(new)
    for path in sorted(before.keys() | after.keys()):
        was, now = before.get(path), after.get(path)
        _row(result, path, was, now)
    combos_before = {_combination_path(c): c for c in old["combinations"]}
    combos_after = {_combination_path(c): c for c in new["combinations"]}
    for path in sorted(combos_before.keys() | combos_after.keys()):
        a, b = combos_before.get(path), combos_after.get(path)
        was_status = None if a is None else str(a["status"])
        now_status = None if b is None else str(b["status"])
        change = CombinationChange(path, was_status, now_status)
        if a is None:
            result.combinations_added.append(change)
        elif b is None:
            result.combinations_removed.append(change)
        elif was_status != now_status:
            result.combinations_changed.append(change)
        if now_status == Status.FAILED and was_status not in FAILING:
            errors = sorted({e["class"] for e in b["errors"]}) if b else []
            why = f" ({', '.join(errors)})" if errors else ""
            result.regressions.append(
                f"{path}: combination {was_status or '(absent)'} -> failed{why}"
            )
    return result


def _row(result: ReportDiff, path: str, was: _Row | None, now: _Row | None) -> None:
    old_status = None if was is None else was.status
    new_status = None if now is None else now.status
    detail = ""
    if now is not None and now.status in FAILING:
        detail = now.error or ""
    if was is not None and now is not None and was.expected != now.expected:
        detail = f"{detail}; its expected changed" if detail else "its expected changed"
    change = RowChange(path, old_status, new_status, detail)
    if was is None:
        result.rows_added.append(change)
    elif now is None:
        result.rows_removed.append(RowChange(path, old_status, None))
    if now is not None and now.status == Status.FAILED and old_status not in FAILING:
        result.new_failures.append(change)
    elif was is not None and now is not None:
        if was.status in FAILING and now.status == Status.PASSED:
            result.fixes.append(change)
        elif was.status == now.status == Status.PASSED:
            if was.digest != now.digest:
                result.changed_actuals.append(
                    RowChange(path, old_status, new_status, f"digest {was.digest} -> {now.digest}")
                )
        elif was.status in FAILING and now.status in FAILING:
            if (was.actual, was.error) != (now.actual, now.error):
                text = f"actual {_short(was.actual)} -> {_short(now.actual)}"
                if was.error != now.error:
                    text += f"; error {was.error!r} -> {now.error!r}"
                result.changed_actuals.append(RowChange(path, old_status, new_status, text))
            if was.status != now.status:
                result.status_changes.append(change)
        elif was.status != now.status:
            result.status_changes.append(change)
    # regressions
    if now is not None and now.status == Status.KNOWN_FAILING:
        return
    if was is not None and was.status == Status.PASSED and new_status != Status.PASSED:
        result.regressions.append(f"{path}: passed -> {new_status or '(absent)'}")
    elif now is not None and now.status == Status.FAILED and old_status not in FAILING:
        result.regressions.append(f"{path}: {old_status or '(absent)'} -> failed")
