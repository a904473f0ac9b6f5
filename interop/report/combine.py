"""Combining the reports of a sharded run into the report the unsharded run would have written.

`combine(documents)` takes every shard's report (`--shard K/N`, each carrying
the `shard` object of `interop.shard.shard_meta`) and returns one document
that, serialised as `interop.report.write` does (`dumps_compact` plus a
newline), is byte for byte the unsharded run's report:

- the run facts (`reportVersion`, `suites`, `profile`, `adapters`, `sets` and
  any other key `build_document` takes from the run's meta) must be the same
  in every shard, and are kept;
- `combinations` are merged, each entry kept as written, sorted as
  `build_document` sorts them (suite, client, server, transport, auth);
- `summary` is recomputed from the merged combinations exactly as
  `build_document` counts it (see `summarise`);
- `incomplete` is true when any shard's is; `logDir` is the first document's;
  `shard` and each shard's own `coverage` are dropped (the caller computes the
  whole run's coverage from the combined report, as a run does).

Inputs that do not fit together raise `CombineError` naming the problem: a
document that is no shard report, differing run facts or shard counts, an
index twice, missing shards, a combination in two shards, combinations
outside the declared grid or missing from every shard, shards written with
and without `--full-report`, a shard whose summary does not match its own
combinations.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from interop.jsonvalue import dumps_compact, first_difference, shown
from interop.report.document import REPORT_VERSION
from interop.results import STATUSES, Status

# the keys build_document derives from the combinations (or write.py adds); all others are
# the run's facts, the same in every shard
_DERIVED = ("incomplete", "summary", "combinations", "logDir", "shard", "coverage")
_AXES = ("suite", "client", "server", "transport", "auth")
_SKIPPED = (str(Status.INAPPLICABLE), str(Status.NOT_RUN))


class CombineError(ValueError):
    """The shard reports do not fit together; the message names the problem."""


def render(document: dict[str, Any]) -> str:
    """The report's text as write.py writes it (compact JSON and a newline)."""
    return dumps_compact(document) + "\n"


def _counts(statuses: list[str]) -> dict[str, int]:
    counted = Counter(statuses)
    return {str(status): counted.get(str(status), 0) for status in STATUSES}


def combination_key(entry: dict[str, Any]) -> str:
    """A report's combination as `suite/client->server/transport/auth` (the grid's keys)."""
    return (
        f"{entry['suite']}/{entry['client']}->{entry['server']}/"
        f"{entry['transport']}/{entry['auth']}"
    )


def _order(entry: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (entry["suite"], entry["client"], entry["server"], entry["transport"], entry["auth"])


def summarise(
    suites: Sequence[str], sets: Sequence[dict[str, Any]], combinations: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The `summary` build_document writes for these combinations, from the report alone.

    A combination's listed rows are its non-null digests (passed) and its
    whole rows; an `inapplicable` or `not-run` combination with a `reason`
    (the runner's and the suites' outcomes that never ran, whose
    `skipped_rows` is their suite's row count) adds its suite's set rows to
    `rowsNotJudged`, one that is so by its rows adds nothing.
    """
    set_rows = Counter[str]()
    for scenario_set in sets:
        set_rows[scenario_set["suite"]] += len(scenario_set["rows"])
    listed: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    for entry in combinations:
        suite = entry["suite"]
        for result in entry["results"].values():
            passed = sum(digest is not None for digest in result["digests"])
            listed.extend([(suite, str(Status.PASSED))] * passed)
            listed.extend((suite, row["status"]) for row in result["rows"])
        if entry["status"] in _SKIPPED and "reason" in entry:
            skipped.extend([(suite, entry["status"])] * set_rows[suite])
    names = list(dict.fromkeys([*suites, *(c["suite"] for c in combinations)]))
    return {
        "combinations": _counts([c["status"] for c in combinations]),
        "rows": _counts([status for _, status in listed]),
        "rowsNotJudged": _counts([status for _, status in skipped]),
        "suites": {
            name: {
                "combinations": _counts([c["status"] for c in combinations if c["suite"] == name]),
                "rows": _counts([status for suite, status in listed if suite == name]),
                "rowsNotJudged": _counts([status for suite, status in skipped if suite == name]),
            }
            for name in names
        },
    }


def _shard(position: int, document: Any) -> tuple[int, int, list[str]]:
    """(index, count, grid) of a shard report, or why it is none."""
    where = f"document {position}"
    if not isinstance(document, dict) or "combinations" not in document:
        raise CombineError(f"{where} is not a report")
    record = document.get("shard")
    if record is None:
        raise CombineError(f"{where} is not a shard report: it has no `shard` (run with --shard)")
    if not isinstance(record, dict) or set(record) != {"index", "count", "grid"}:
        raise CombineError(f"{where} is not a shard report: `shard` is not {{index, count, grid}}")
    _entries(where, document)
    index, count, grid = record["index"], record["count"], record["grid"]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (index, count)):
        raise CombineError(f"{where} is not a shard report: shard index and count are not numbers")
    if count < 1 or not 1 <= index <= count:
        raise CombineError(f"{where}: shard {index}/{count} is out of range (1 <= K <= N)")
    if not isinstance(grid, list) or not all(isinstance(key, str) for key in grid):
        raise CombineError(f"{where} is not a shard report: its shard grid is not a list of keys")
    if grid != sorted(set(grid)):
        raise CombineError(f"{where}: its shard grid is not sorted or names a combination twice")
    return index, count, grid


def _entries(where: str, document: dict[str, Any]) -> None:
    """Refuse a document whose combinations are not a report's."""
    entries = document["combinations"]
    if not isinstance(entries, list):
        raise CombineError(f"{where} is not a report: its combinations are not a list")
    for entry in entries:
        ok = (
            isinstance(entry, dict)
            and all(isinstance(entry.get(k), str) for k in (*_AXES, "status"))
            and isinstance(entry.get("results"), dict)
            and all(
                isinstance(r, dict)
                and isinstance(r.get("digests"), list)
                and isinstance(r.get("rows"), list)
                and all(isinstance(row, dict) and "status" in row for row in r["rows"])
                for r in entry["results"].values()
            )
        )
        if not ok:
            raise CombineError(f"{where} is not a report: a combination is malformed")


def _describe_difference(key: str, left: Any, right: Any) -> str:
    """What differs in one run fact, as precisely as the fact allows."""
    if (
        key == "adapters"
        and isinstance(left, dict)
        and isinstance(right, dict)
        and set(left) != set(right)
    ):
        return f"adapters {sorted(left)} against {sorted(right)}"
    if key == "sets" and isinstance(left, list) and isinstance(right, list):
        mine, theirs = _named_sets(left), _named_sets(right)
        if list(mine) != list(theirs):
            return f"sets {list(mine)} against {list(theirs)}"
        for name, ours in mine.items():
            for field in dict.fromkeys([*ours, *theirs[name]]):
                found = first_difference(ours.get(field), theirs[name].get(field), field)
                if found is not None:
                    return f"set {name}: {found[0]} {_short(found[1])} against {_short(found[2])}"
    found = first_difference(left, right, key)
    if found is None:
        return key
    return f"{found[0]} {_short(found[1])} against {_short(found[2])}"


def _named_sets(sets: list[Any]) -> dict[str, dict[str, Any]]:
    return {f"{s.get('suite')}/{s.get('name')}": s for s in sets if isinstance(s, dict)}


def _short(value: Any) -> str:
    return shown(value, 80)


def _some(keys: Sequence[str], limit: int = 5) -> str:
    listed = ", ".join(keys[:limit])
    return listed + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


def _passed_whole(document: dict[str, Any]) -> bool | None:
    """True when written with --full-report, False when without, None when it cannot tell."""
    for entry in document["combinations"]:
        for result in entry["results"].values():
            if any(digest is not None for digest in result["digests"]):
                return False
            if any(row["status"] == Status.PASSED for row in result["rows"]):
                return True
    return None


@dataclass(frozen=True)
class _Shards:
    """The shard reports being combined, in the order given, each with its shard record
    (index, count, grid) as `_shard` read it."""

    documents: Sequence[dict[str, Any]]
    records: list[tuple[int, int, list[str]]]

    def label(self, position: int) -> str:
        """`shard K/N` of the document at `position` (0-based), as messages name it."""
        index, total, _ = self.records[position]
        return f"shard {index}/{total}"


def combine(documents: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The report the unsharded run would have written, from every shard's report."""
    if not documents:
        raise CombineError("no shard reports to combine")
    shards = _Shards(documents, [_shard(position, d) for position, d in enumerate(documents, 1)])
    first = documents[0]
    _check_versions(shards)
    _check_indexes(shards)
    facts = [key for key in dict.fromkeys(k for d in documents for k in d) if key not in _DERIVED]
    _check_facts(shards, facts)
    _check_owners(shards)
    _check_full(shards)
    suites = first.get("suites", [])
    sets = first.get("sets", [])
    _check_summaries(shards, suites, sets)
    incomplete = [d.get("incomplete") for d in documents]
    if not all(isinstance(flag, bool) for flag in incomplete):
        raise CombineError("a shard's `incomplete` is not true or false")

    combinations = sorted(
        (copy.deepcopy(entry) for d in documents for entry in d["combinations"]), key=_order
    )
    combined: dict[str, Any] = {key: copy.deepcopy(first[key]) for key in facts}
    combined["incomplete"] = any(incomplete)
    combined["summary"] = summarise(suites, sets, combinations)
    combined["combinations"] = combinations
    if "logDir" in first:
        combined["logDir"] = first["logDir"]
    return combined


def _check_versions(shards: _Shards) -> None:
    """Every shard has one reportVersion, the one this harness writes."""
    documents = shards.documents
    versions = {d.get("reportVersion") for d in documents}
    if len(versions) > 1:
        each = ", ".join(
            f"shard {k}/{n}: {d.get('reportVersion')!r}"
            for (k, n, _), d in zip(shards.records, documents, strict=True)
        )
        raise CombineError(f"the shards have different reportVersions ({each})")
    if documents[0].get("reportVersion") != REPORT_VERSION:
        raise CombineError(
            f"reportVersion {documents[0].get('reportVersion')!r}: this harness combines "
            f"reportVersion {REPORT_VERSION} only"
        )


def _check_indexes(shards: _Shards) -> None:
    """The shards are of one count N, and each of 1..N is given exactly once."""
    counts = sorted({n for _, n, _ in shards.records})
    if len(counts) > 1:
        raise CombineError(
            f"the shards come from different shard counts ({', '.join(map(str, counts))}): "
            "every shard of one run has the same N"
        )
    count = counts[0]
    where: dict[int, int] = {}
    for position, (index, _, _) in enumerate(shards.records, 1):
        if index in where:
            raise CombineError(
                f"shard {index}/{count} is given twice (documents {where[index]} and {position})"
            )
        where[index] = position
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in where]
    if missing:
        raise CombineError(f"shards missing: {', '.join(missing)} (every shard of N is needed)")


def _check_facts(shards: _Shards, facts: list[str]) -> None:
    """Every shard has the first's run facts (`facts`, each present in all or none) and
    declares its grid."""
    first, records = shards.documents[0], shards.records
    for position, document in enumerate(shards.documents[1:], 1):
        for key in facts:
            if key not in first or key not in document:
                has, lacks = (0, position) if key in first else (position, 0)
                raise CombineError(f"{shards.label(has)} has {key}, {shards.label(lacks)} has none")
            if first_difference(first[key], document[key]) is not None:
                detail = _describe_difference(key, first[key], document[key])
                raise CombineError(
                    f"{shards.label(position)} differs from {shards.label(0)} in its {key}: "
                    f"{detail}"
                )
        if records[position][2] != records[0][2]:
            mine, theirs = set(records[0][2]), set(records[position][2])
            only = sorted(theirs - mine) or sorted(mine - theirs)
            raise CombineError(
                f"{shards.label(position)} declares another grid than {shards.label(0)} "
                f"({len(theirs)} combinations against {len(mine)}; e.g. {_some(only, 3)})"
            )


def _check_owners(shards: _Shards) -> None:
    """Each combination of the declared grid is in exactly one shard, and no shard has
    one outside it."""
    owner: dict[str, int] = {}
    grid = set(shards.records[0][2])
    for position, document in enumerate(shards.documents):
        for entry in document["combinations"]:
            key = combination_key(entry)
            if key in owner:
                other = "twice" if owner[key] == position else f"and in {shards.label(owner[key])}"
                raise CombineError(
                    f"the combination {key} is in {shards.label(position)} {other}: shards overlap"
                )
            owner[key] = position
            if key not in grid:
                raise CombineError(
                    f"{shards.label(position)} has the combination {key}, which is not in the "
                    "declared grid"
                )
    absent = sorted(grid - set(owner))
    if absent:
        raise CombineError(
            f"{len(absent)} combinations of the declared grid are in no shard: {_some(absent)}"
        )


def _check_full(shards: _Shards) -> None:
    """No shard was written with --full-report while another was written without."""
    full = {position: _passed_whole(d) for position, d in enumerate(shards.documents)}
    if True in full.values() and False in full.values():
        whole = next(p for p, f in full.items() if f)
        digests = next(p for p, f in full.items() if f is False)
        raise CombineError(
            f"{shards.label(whole)} was written with --full-report, {shards.label(digests)} without"
        )


def _check_summaries(shards: _Shards, suites: Any, sets: Any) -> None:
    """Each shard's summary is the one its own combinations give (`summarise`)."""
    for position, document in enumerate(shards.documents):
        found = first_difference(
            document.get("summary"), summarise(suites, sets, document["combinations"]), "summary"
        )
        if found is not None:
            raise CombineError(
                f"{shards.label(position)}: its summary does not match its combinations "
                f"({found[0]}: {found[1]!r}, counted {found[2]!r})"
            )
