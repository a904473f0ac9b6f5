"""Known failures: a checked-in list of failing rows that do not fail the run.

`known-failures.json` at the repository root (schema:
`schemas/report/known-failures.schema.json`) is

    {"version": 1, "entries": [{"pattern": "...", "reason": "...", "issue": "https://..."}]}

An entry about an SDK outside this repository (run with `--adapter-dir NAME=PATH`)
also names that adapter, `adapter: NAME` (its pattern must name it), and the rule
the SDK breaks, `spec`: a requirement id, or the spec file and section, with the
revision read (docs/external-sdks.md). Such an entry is never `unmatched` in a run
without that adapter; nor is a pattern whose suite the report does not have (the
run did not ask for that suite).

A pattern is matched against a row's path,
`suite/set/client->server/transport/auth/id` (`row_path`), as a whole: `*` is
any characters but `/`, `**` any characters including `/`, everything else is
literal.

Plain functions, for the command line to wire up:

- `load(path: Path) -> KnownFailures`: read and check the file; a problem
  raises `KnownFailuresError` naming the file, the entry index and the field
  (`reason` and `issue` are required non-empty strings, unknown keys and a
  repeated pattern are refused).
- `apply(document, known, *, complete: bool) -> tuple[dict, list[str]]`: a new
  report document (the one given is not changed) where every `failed` row a
  pattern matches is `known-failing` and carries `known: {pattern, reason,
  issue}` (the first entry that matches); a `failed` combination becomes
  `known-failing` when no row of it still fails and at least one is
  known-failing (with combination errors, only when the known rows stand for
  them: each error's set, named by its stage, has a known-failing row and none
  that passed; an error naming no set, the whole combination); the rows'
  `counts` and `summary` (with `summary.suites`) are recomputed. The list is the problems that fail
  the run, in entry order: `stale: PATTERN matches ROW, which passes; remove
  the entry` for each passing row a pattern matches, and, when `complete` (an
  uninterrupted, unsharded run, or a combined one), `unmatched: PATTERN matches
  no row of the report; remove the entry or fix its pattern` for a pattern that
  matches no row at all (a row that is unsupported, inapplicable or not run
  counts as matched, and is left as it is).
- `row_path(combination, set_name, row_id) -> str` and `compile_pattern`.

`known-failing` is neither a pass nor a failure: the run fails on the problems
above, not on the known rows.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file
from interop.results import STATUSES, Status, errors_covered, rows_of

VERSION = 1
ENTRY_KEYS = ("pattern", "reason", "issue")
EXTERNAL_KEYS = ("adapter", "spec")  # an entry about an SDK outside this repository


class KnownFailuresError(ValueError):
    """known-failures.json is unreadable or malformed (the message names file, entry, field)."""


def row_path(combination: dict[str, Any], set_name: str, row_id: str) -> str:
    """A row's path: `suite/set/client->server/transport/auth/id`."""
    return (
        f"{combination['suite']}/{set_name}/{combination['client']}->{combination['server']}/"
        f"{combination['transport']}/{combination['auth']}/{row_id}"
    )


_TOKENS = re.compile(r"(\*\*|\*|\{[^{}]*\})")


@dataclass(frozen=True)
class Glob:
    """A pattern matched without backtracking: the set of positions the path can have
    reached is carried across the pattern's tokens, so a match costs at most the
    tokens times the path's length, whatever the pattern (a regular expression of
    sixteen `.*` once took minutes to refuse one path). `*` is any characters but `/`,
    `**` any characters, `{a,b,...}` one of the literal alternatives; the rest is
    literal; the whole path."""

    tokens: tuple[tuple[str, tuple[str, ...]], ...]  # (kind, literal values)

    def fullmatch(self, text: str) -> str | None:
        """`text` when the pattern matches it whole, else None."""
        here = {0}
        for kind, values in self.tokens:
            if not here:
                return None
            if kind == "**":
                here = set(range(min(here), len(text) + 1))
            elif kind == "*":
                here = _within_segment(text, here)
            else:  # a literal, or one of the alternatives
                here = {p + len(v) for p in here for v in values if text.startswith(v, p)}
        return text if len(text) in here else None


def _within_segment(text: str, starts: set[int]) -> set[int]:
    """Every position reachable from one of `starts` without crossing a `/`: each
    character is visited once, however many starts share its segment."""
    reach: set[int] = set()
    for position in sorted(starts):
        if position in reach:
            continue  # an earlier start of this segment already went past it
        reach.add(position)
        while position < len(text) and text[position] != "/":
            position += 1
            reach.add(position)
    return reach


def compile_pattern(pattern: str) -> Glob:
    """The pattern as a `Glob` (`.fullmatch(path)`)."""
    tokens: list[tuple[str, tuple[str, ...]]] = []
    for token in _TOKENS.split(pattern):
        if token in ("*", "**"):
            tokens.append((token, ()))
        elif token.startswith("{") and token.endswith("}"):
            tokens.append(("{}", tuple(token[1:-1].split(","))))
        elif token:
            tokens.append(("literal", (token,)))
    return Glob(tuple(tokens))


@dataclass(frozen=True)
class KnownEntry:
    index: int
    pattern: str
    reason: str
    issue: str
    adapter: str | None = None  # an external SDK's adapter name (with `spec`)
    spec: str | None = None  # the rule it breaks: requirement id, or file and section

    def matches(self, path: str) -> bool:
        return compile_pattern(self.pattern).fullmatch(path) is not None

    def as_json(self) -> dict[str, str]:
        found = {"pattern": self.pattern, "reason": self.reason, "issue": self.issue}
        if self.adapter is not None and self.spec is not None:
            found.update(adapter=self.adapter, spec=self.spec)
        return found


@dataclass(frozen=True)
class KnownFailures:
    path: Path
    entries: tuple[KnownEntry, ...] = ()

    def match(self, path: str) -> KnownEntry | None:
        """The first entry whose pattern matches the row path."""
        return next((e for e in self.entries if e.matches(path)), None)


def parse(data: Any, origin: str) -> tuple[KnownEntry, ...]:
    """Check the parsed file; errors name `origin`, the entry index and the field."""

    def refuse(where: str, problem: str) -> KnownFailuresError:
        return KnownFailuresError(f"{origin}: {where}: {problem}")

    if not isinstance(data, dict):
        raise refuse("(top level)", "must be an object {version, entries}")
    extra = sorted(set(data) - {"version", "entries"})
    if extra:
        raise refuse(extra[0], "unknown key (only version and entries)")
    if "version" not in data:
        raise refuse("version", "missing (must be 1)")
    if data["version"] != VERSION or isinstance(data["version"], bool):
        raise refuse("version", f"must be {VERSION}, not {data['version']!r}")
    if "entries" not in data:
        raise refuse("entries", "missing (a list, possibly empty)")
    if not isinstance(data["entries"], list):
        raise refuse("entries", "must be a list")
    entries: list[KnownEntry] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(data["entries"]):
        where = f"entries[{index}]"
        if not isinstance(entry, dict):
            raise refuse(where, "must be an object {pattern, reason, issue}")
        extra = sorted(set(entry) - set(ENTRY_KEYS) - set(EXTERNAL_KEYS))
        if extra:
            raise refuse(
                f"{where}.{extra[0]}",
                "unknown key (only pattern, reason, issue, and adapter with spec)",
            )
        external = [k for k in EXTERNAL_KEYS if k in entry]
        if external and len(external) != len(EXTERNAL_KEYS):
            missing = next(k for k in EXTERNAL_KEYS if k not in entry)
            raise refuse(
                f"{where}.{missing}",
                "missing: an entry about an external SDK names both its adapter and the "
                "spec rule it breaks (requirement id, or spec file and section)",
            )
        for key in (*ENTRY_KEYS, *external):
            if key not in entry:
                raise refuse(f"{where}.{key}", "missing (a non-empty string)")
            value = entry[key]
            if not isinstance(value, str) or not value.strip():
                raise refuse(f"{where}.{key}", f"must be a non-empty string, not {value!r}")
        if external and not _names_adapter(entry["pattern"], entry["adapter"]):
            raise refuse(
                f"{where}.pattern",
                f"does not name the adapter {entry['adapter']!r} as client or server",
            )
        pattern = entry["pattern"]
        problem = _pattern_problem(pattern)
        if problem is not None:
            raise refuse(f"{where}.pattern", problem)
        if pattern in seen:
            raise refuse(f"{where}.pattern", f"repeats entries[{seen[pattern]}]")
        seen[pattern] = index
        entries.append(
            KnownEntry(
                index,
                pattern,
                entry["reason"],
                entry["issue"],
                entry.get("adapter"),
                entry.get("spec"),
            )
        )
    return tuple(entries)


def _pattern_problem(pattern: str) -> str | None:
    """What is wrong with a pattern's shape, or None: six parts, or (with `**`, which
    spans several) at most six, none empty; no surrounding space; no run of three `*`."""
    if pattern != pattern.strip():
        return "has leading or trailing whitespace"
    parts = pattern.split("/")
    if (len(parts) > 6 if "**" in pattern else len(parts) != 6) or "" in parts:
        return (
            f"{pattern!r} is not suite/set/client->server/transport/auth/id "
            "(six parts; `**` spans several)"
        )
    if "***" in pattern:
        return (
            f"{pattern!r} has a run of three or more `*`: write `*` (within a part) "
            "or `**` (across parts)"
        )
    return None


def _names_adapter(pattern: str, adapter: str) -> bool:
    """Whether a pattern's `client->server` part names `adapter` on one side."""
    return any(adapter in part.split("->") for part in pattern.split("/") if "->" in part)


def load(path: Path) -> KnownFailures:
    """Read and check known-failures.json."""
    try:
        data = load_file(path)
    except JsonError as exc:
        raise KnownFailuresError(str(exc)) from None
    return KnownFailures(path, parse(data, str(path)))


def _counts(statuses: list[str]) -> dict[str, int]:
    counted = Counter(statuses)
    return {str(status): counted.get(str(status), 0) for status in STATUSES}


def combination_status(combination: dict[str, Any], rows: list[tuple[str, str]]) -> str:
    """A combination's status once its rows' (set, status) are as given (see the module
    docstring)."""
    status = str(combination["status"])
    if status not in (Status.FAILED, Status.KNOWN_FAILING, Status.FLAKY):
        return status
    statuses = [s for _, s in rows]
    if not statuses or Status.FAILED in statuses:
        return str(Status.FAILED)
    if Status.KNOWN_FAILING not in statuses and Status.FLAKY not in statuses:
        return str(Status.FAILED)
    stages = [str(e.get("stage", "")) for e in combination["errors"]]
    if stages and not errors_covered(stages, rows):
        return str(Status.FAILED)
    return str(Status.FLAKY if Status.FLAKY in statuses else Status.KNOWN_FAILING)


def apply(
    document: dict[str, Any], known: KnownFailures, *, complete: bool
) -> tuple[dict[str, Any], list[str]]:
    """The document with known failures marked, and the problems that fail the run."""
    out = copy.deepcopy(document)
    matched: dict[int, bool] = {e.index: False for e in known.entries}
    stale: dict[int, list[str]] = {e.index: [] for e in known.entries}
    compiled = [(e, compile_pattern(e.pattern)) for e in known.entries]
    listed: list[tuple[str, str]] = []
    for combination in out["combinations"]:
        for set_name, result in combination["results"].items():
            for row in result["rows"]:
                path = row_path(combination, set_name, row["id"])
                if row["status"] != Status.FAILED:
                    continue
                entry = next((e for e, rx in compiled if rx.fullmatch(path)), None)
                if entry is not None:
                    row["status"] = str(Status.KNOWN_FAILING)
                    row["known"] = entry.as_json()
        statuses: list[str] = []
        by_set: list[tuple[str, str]] = []
        for row in rows_of(out, combination):
            path = row_path(combination, row["set"], row["id"])
            statuses.append(row["status"])
            by_set.append((row["set"], row["status"]))
            for entry, rx in compiled:
                if rx.fullmatch(path):
                    matched[entry.index] = True
                    if row["status"] == Status.PASSED:
                        stale[entry.index].append(path)
        combination["counts"] = _counts(statuses)
        combination["status"] = combination_status(combination, by_set)
        listed.extend((combination["suite"], s) for s in statuses)
    _recount(out, listed)
    problems: list[str] = []
    present = set(document.get("adapters", {}))
    suites = set(document.get("suites", []))
    for entry in known.entries:
        problems += [
            f"stale: {entry.pattern} matches {path}, which passes; remove the entry"
            for path in stale[entry.index]
        ]
        suite = entry.pattern.split("/", 1)[0]
        absent = (entry.adapter is not None and entry.adapter not in present) or (
            "*" not in suite and bool(suites) and suite not in suites
        )
        if complete and not matched[entry.index] and not absent:
            problems.append(
                f"unmatched: {entry.pattern} matches no row of the report; "
                "remove the entry or fix its pattern"
            )
    return out, problems


def _recount(document: dict[str, Any], listed: list[tuple[str, str]]) -> None:
    """Recompute `summary` (rowsNotJudged is kept: known failures never change it)."""
    combinations = document["combinations"]
    summary = document.setdefault("summary", {})
    summary["combinations"] = _counts([c["status"] for c in combinations])
    summary["rows"] = _counts([status for _, status in listed])
    not_judged = summary.get("rowsNotJudged", {})
    summary["rowsNotJudged"] = {k: not_judged.get(k, 0) for k in _counts([])}
    old = summary.get("suites", {})
    names = list(dict.fromkeys([*old, *(c["suite"] for c in combinations)]))
    summary["suites"] = {
        name: {
            "combinations": _counts([c["status"] for c in combinations if c["suite"] == name]),
            "rows": _counts([status for suite, status in listed if suite == name]),
            "rowsNotJudged": {
                k: old.get(name, {}).get("rowsNotJudged", {}).get(k, 0) for k in _counts([])
            },
        }
        for name in names
    }


def unmatchable(
    known: KnownFailures, suites: tuple[str, ...], sets: dict[str, set[str]],
    transports: tuple[str, ...], auths: tuple[str, ...],
) -> list[str]:  # fmt: skip
    """Entries whose pattern can match no row of the suites it names, whatever ran: a
    segment in the wrong place (a path copied in another order), a set the suite does
    not have, a transport or auth mode that does not exist. `sets`: each suite's set
    names (a suite absent is not judged). Patterns with `**` are left alone."""
    problems: list[str] = []
    for entry in known.entries:
        if "**" in entry.pattern:
            continue
        suite, set_name, pair, transport, auth, _ = entry.pattern.split("/")
        said = None
        named = [s for s in sets if compile_pattern(suite).fullmatch(s)]
        if not named and not any(compile_pattern(suite).fullmatch(s) for s in suites):
            said = f"{suite!r} is no suite"
        elif named and not any(
            compile_pattern(set_name).fullmatch(n) for s in named for n in sets[s]
        ):
            have = sorted(n for s in named for n in sets[s])
            said = f"{set_name!r} is no set of {', '.join(named)} (its sets: {', '.join(have)})"
        elif "->" not in pair and "*" not in pair and "{" not in pair:
            said = f"{pair!r} is not client->server"
        elif not any(compile_pattern(transport).fullmatch(t) for t in transports):
            said = f"{transport!r} is no transport ({', '.join(transports)})"
        elif not any(compile_pattern(auth).fullmatch(a) for a in auths):
            said = f"{auth!r} is no auth mode ({', '.join(auths)})"
        if said is not None:
            problems.append(
                f"{entry.pattern}: can match no row: {said}; a row path is "
                "suite/set/client->server/transport/auth/id, the order JUnit names use"
            )
    return problems
