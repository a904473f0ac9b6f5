"""What the terminal says about failures: root causes first, identical failures once.

Combination-level errors come first (they fail every row of their
combination); row failures that read the same in several combinations are
printed once, with the combinations listed, so one misread rule is one line
however many cells it reaches. Known failures (`known-failing`, listed in
known-failures.json) follow, one line per entry with its reason and issue.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from interop.coverage import charges_of
from interop.report.bundles import command_of
from interop.results import rows_of

SHOWN = 8  # distinct failures printed per kind before "... and N more"


def _label(c: dict[str, Any]) -> str:
    return f"{c['client']} -> {c['server']} [{c['transport']}/{c['auth']}]"


def _places(labels: list[str]) -> str:
    if len(labels) <= 3:
        return ", ".join(labels)
    return f"{', '.join(labels[:3])} and {len(labels) - 3} more"


def rerun_command(
    document: dict[str, Any],
    combination: dict[str, Any],
    row: dict[str, Any],
    folder: Path | None = None,
) -> str:
    """The command that re-runs only `row` on only `combination`: its repro bundle's
    (interop/report/bundles.py: runs from any shell, into the bundle), or for a row
    without one the matrix options that select it."""
    bundled = command_of(row, folder)
    if bundled is not None:
        return bundled
    parts = ["python -m interop matrix", f"--suite {combination['suite']}"]
    for described in document.get("sets", []):
        same = described["suite"] == combination["suite"] and described["name"] == row["set"]
        file = str(described.get("file", ""))
        if same and file.endswith(".json"):
            # a file outside the repository is named by its file name only (the report
            # holds no paths): the reader supplies the folder
            parts.append(f"--scenarios {file if '/' in file else f'<path of {file}>'}")
    parts += [
        f"--scenario '{row['id']}'",
        f"--clients {combination['client']}",
        f"--servers {combination['server']}",
        f"--transports {combination['transport']}",
        f"--auth {combination['auth']}",
    ]
    if document.get("profile") not in (None, "strict"):
        parts.append(f"--profile {document['profile']}")
    return " ".join(parts)


def failure_summary(document: dict[str, Any], folder: Path | None = None) -> list[str]:
    """The distinct failures, root causes first, each with where it happened and the
    command that re-runs one (its bundle's, absolute under `folder`, the report's)."""
    failed = [c for c in document["combinations"] if c["status"] == "failed"]
    lines: list[str] = []
    errors: dict[tuple[str, str], list[str]] = defaultdict(list)
    for c in failed:
        for error in c["errors"]:
            errors[(error["class"], error["message"])].append(_label(c))
    for (kind, message), labels in list(errors.items())[:SHOWN]:
        lines.append(f"FAILED {kind}: {message}")
        lines.append(f"  in {len(labels)} combination(s): {_places(labels)}")
    if len(errors) > SHOWN:
        lines.append(f"  ... and {len(errors) - SHOWN} more distinct combination errors")
    rows: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    first: dict[str, str] = {}  # per distinct failure: the command re-running one instance
    judged: dict[str, str] = {}  # per distinct failure: whom its rules charged, and what
    for c in failed:
        if c["errors"]:
            continue  # every row failed because of the error above
        for row in rows_of(document, c):
            if row["status"] == "failed":
                error = row.get("error") or "failed"
                rows[error][f"{row['set']}/{row['id']}"].add(_label(c))
                first.setdefault(error, rerun_command(document, c, row, folder))
                judged.setdefault(error, _charged(document, c, row))
    for error, where in list(rows.items())[:SHOWN]:
        ids = sorted(where)
        labels = sorted({label for found in where.values() for label in found})
        shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more rows" if len(ids) > 3 else "")
        lines.append(f"FAILED {shown}: {error}")
        lines.append(f"  in {len(labels)} combination(s): {_places(labels)}")
        if judged[error]:
            lines.append(f"  {judged[error]}")
        lines.append(f"  re-run one: {first[error]}")
    if len(rows) > SHOWN:
        lines.append(f"  ... and {len(rows) - SHOWN} more distinct row failures (see the report)")
    return lines + _flaky_summary(document) + _known_summary(document)


def judging(side: Any, who: str) -> str:
    """`judges the client (NAME)`; `either` places it on neither side: undetermined."""
    named = f" ({who})" if who else ""
    if side == "either":
        return f"leaves it undetermined, client or server{named}"
    return f"judges the {side}{named}"


def _charged(document: dict[str, Any], c: dict[str, Any], row: dict[str, Any]) -> str:
    """`rule R judges the client (NAME): REQ, ...` for a row, from coverage's charges."""
    said = []
    for charge in charges_of(document, c, row["set"], row["id"]):
        who = ", ".join(charge.get("adapters") or [])
        reqs = ", ".join(charge.get("requirements") or []) or "a contract duty"
        said.append(f"rule {charge.get('rule')} {judging(charge.get('judges'), who)}: {reqs}")
    return "; ".join(said)


def _flaky_summary(document: dict[str, Any]) -> list[str]:
    """One line per flaky row: it failed, then passed when run again (never a pass)."""
    lines: list[str] = []
    for c in document["combinations"]:
        for row in rows_of(document, c):
            if row["status"] == "flaky":
                lines.append(f"FLAKY {_label(c)} {row['set']}/{row['id']}: {row.get('error', '')}")
    if len(lines) > SHOWN:
        lines = [*lines[:SHOWN], f"  ... and {len(lines) - SHOWN} more flaky rows"]
    return lines


def _known_summary(document: dict[str, Any]) -> list[str]:
    """One line per known-failures.json entry that matched: rows, combinations, reason."""
    found: dict[tuple[str, str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for c in document["combinations"]:
        for row in rows_of(document, c):
            if row["status"] == "known-failing":
                known = row.get("known") or {}
                entry = (known.get("pattern", "?"), known.get("reason", ""), known.get("issue", ""))
                found[entry][_label(c)].add(f"{row['set']}/{row['id']}")
    lines: list[str] = []
    for (pattern, reason, issue), where in list(found.items())[:SHOWN]:
        count = sum(len(ids) for ids in where.values())
        lines.append(f"KNOWN {pattern}: {reason} ({issue})")
        lines.append(f"  {count} row(s) in {len(where)} combination(s): {_places(sorted(where))}")
    if len(found) > SHOWN:
        lines.append(f"  ... and {len(found) - SHOWN} more known-failure entries")
    return lines
