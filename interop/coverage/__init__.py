"""Coverage by requirement: which AHP requirements each adapter's passing rows exercise.

Three steps, each a plain function:

- `features(suite, row)`: the features one scenario row exercises, read from the
  row itself (its requests, responses, steps, chain, registration documents),
  never from its expectation, except where the kind of expectation is the
  feature (a core row that expects rejection carries `negative:<class>`, an
  auth row that expects a refusal `auth-server:refusal`). The vocabulary is
  closed: `VOCABULARY` lists every name `features` can return, and
  docs/coverage.md explains each family.
- `requirements.json` (beside this module, `load_requirements()`): the spec's
  canonical requirements pinned by their facts (id, level, profile, document,
  anchor, section, textSha256), each with our title and the features whose rows
  test it, then our own finer `IMX-` requirements, each naming what it refines;
  and the spec's conformance profiles (`load_profiles()`, judged per adapter and
  role by `interop.coverage.profiles`). `interop.coverage.speccheck` compares
  the table with a spec checkout (`python -m interop requirements --spec PATH`).
- `coverage(document, root)`: for a report document (reportVersion 3), every
  row of every combination mapped to its features (its row's features plus the
  combination's `transport:` and `auth:`), then per adapter and role each
  feature and requirement `passed`, `failed` or `untested`. `coverage_lines`
  renders it for a terminal.

Only `passed`, `failed` and `known-failing` rows count as exercised (a known
failure is charged like any failure: known-failures.json lets the run pass, it
does not make the record say the rule holds); `unsupported`, `inapplicable` and
`not-run` rows do not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.blame import placed, row_rules
from interop.coverage.profiles import profile_line, profile_verdicts
from interop.suites import DECLARATIONS
from interop.suites.features import SHARED_VOCABULARY, family

REQUIREMENTS_FILE = Path(__file__).with_name("requirements.json")

LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
# a canonical requirement's id, and one of ours (Interop Matrix) that refines one
CANONICAL_ID = re.compile(r"AHP-[A-Z]+-\d{3}")
OWN_ID = re.compile(r"IMX-[A-Z]+-\d{3}")
CANONICAL_FIELDS = frozenset(
    {"id", "level", "profile", "document", "anchor", "section", "textSha256", "title"}
    | {"features", "fixtures"}
)
OWN_FIELDS = frozenset({"id", "level", "title", "features", "refines", "source"})


def _vocabulary() -> frozenset[str]:
    """The shared families, a `suite:` name per suite and each suite's own families."""
    names = set(SHARED_VOCABULARY) | family("suite", tuple(DECLARATIONS))
    for declared in DECLARATIONS.values():
        for prefix, values in declared.feature_families.items():
            names |= family(prefix, values)
    return frozenset(names)


VOCABULARY: frozenset[str] = _vocabulary()


def features(suite: str, row: dict[str, Any]) -> set[str]:
    """The features `row` (a raw scenario-file row of `suite`) exercises, `suite:` included
    (its suite's `Declaration.features`). The combination's `transport:` and `auth:` are
    added by `coverage`, not here."""
    declared = DECLARATIONS.get(suite)
    if declared is None:
        return set()
    found = {f"suite:{suite}"}
    if declared.features is not None:
        found |= declared.features(row)
    return found & VOCABULARY


# ---------------------------------------------------------------------------------------
# The requirement table


def load_requirements(path: Path = REQUIREMENTS_FILE) -> list[dict[str, Any]]:
    """The checked-in table, sorted by id. A canonical entry (`AHP-...`) has exactly
    CANONICAL_FIELDS; one of ours (`IMX-...`) has OWN_FIELDS, and its `refines` names
    a canonical id of the table or `{document, section}` of the spec. ValueError
    otherwise (a duplicate id, a level not in LEVELS, a feature not in VOCABULARY)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    table = data["requirements"]
    canonical = {e.get("id") for e in table if CANONICAL_ID.fullmatch(str(e.get("id")))}
    seen: set[str] = set()
    for entry in table:
        rid = str(entry.get("id"))
        if rid in seen:
            raise ValueError(f"{path}: {rid}: listed twice")
        seen.add(rid)
        if CANONICAL_ID.fullmatch(rid):
            fields = CANONICAL_FIELDS
        elif OWN_ID.fullmatch(rid):
            fields = OWN_FIELDS
            refines = entry.get("refines")
            section = isinstance(refines, dict) and set(refines) == {"document", "section"}
            if not (
                (isinstance(refines, str) and refines in canonical)
                or (section and str(refines["document"]).startswith("spec/"))
            ):
                raise ValueError(f"{path}: {rid}: refines {refines!r}: no canonical id or section")
        else:
            raise ValueError(f"{path}: {rid}: neither an AHP- nor an IMX- id")
        if set(entry) != fields:
            raise ValueError(f"{path}: {rid}: fields {sorted(entry)}, expected {sorted(fields)}")
        if entry["level"] not in LEVELS:
            raise ValueError(f"{path}: {rid}: level {entry['level']!r}")
        unknown = sorted(set(entry["features"]) - VOCABULARY)
        if unknown:
            raise ValueError(f"{path}: {rid}: unknown features {', '.join(unknown)}")
    return sorted(table, key=lambda e: e["id"])


def load_profiles(path: Path = REQUIREMENTS_FILE) -> list[dict[str, Any]]:
    """The spec's conformance profiles pinned beside the table, sorted by id:
    `{id, path, sha256, roles, requirements}` (roles `harness`/`backend`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return sorted(data.get("profiles", []), key=lambda p: str(p["id"]))


def _requirement_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """What the coverage result says of one requirement: its facts and ours, sorted."""
    keys = ("anchor", "document", "id", "level", "profile", "refines", "section", "textSha256")
    summary = {k: entry[k] for k in (*keys, "title") if k in entry}
    summary["features"] = sorted(entry["features"])
    return dict(sorted(summary.items()))


# ---------------------------------------------------------------------------------------
# Coverage of a report

# a known failure is still a failure of the side its rules judge: listed in
# known-failures.json so that the run passes, never so that the record does
_EXERCISED = ("passed", "failed", "known-failing")
_ROLES = ("client", "server")


def _file_rows(path: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = data.get("scenarios") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ValueError("no `scenarios` list")
    return {str(r["id"]): r for r in rows if isinstance(r, dict) and "id" in r}


def _set_rows(
    suite: str, entry: dict[str, Any], root: Path, notes: list[str]
) -> dict[str, dict[str, Any]]:
    """The raw rows of one report set, by id. A set built in code (its `file` a Python
    module: the auth suite) has its rows in the report (id and expectation); a row the
    file does not hold falls back to the report's, with a note."""
    name = f"{suite}/{entry['name']}"
    listed = {str(r["id"]): dict(r) for r in entry.get("rows", [])}
    path = root / str(entry.get("file", ""))
    if str(entry.get("file", "")).endswith(".py"):
        if not path.is_file():
            notes.append(f"{name}: {entry.get('file')} is missing; its rows are skipped")
            return {}
        return listed
    if not path.is_file():
        notes.append(f"{name}: {entry.get('file')} is missing; its rows are skipped")
        return {}
    try:
        derived = DECLARATIONS[suite].derived_rows if suite in DECLARATIONS else None
        rows = derived(path) if derived is not None else _file_rows(path)
    except (ValueError, KeyError, OSError) as problem:
        notes.append(f"{name}: {entry.get('file')} unreadable ({problem}); its rows are skipped")
        return {}
    missing = sorted(set(listed) - set(rows))
    if missing:
        notes.append(
            f"{name}: {len(missing)} rows not in {entry.get('file')} (e.g. {missing[0]}); "
            "their features come from the report's row only"
        )
    return {row_id: rows.get(row_id, listed[row_id]) for row_id in listed}


def _row_statuses(
    combination: dict[str, Any], set_ids: dict[str, list[str]]
) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(set name, row id, status, the report's row or {}) for every row of one combination."""
    for set_name, result in sorted(combination.get("results", {}).items()):
        whole = {row["id"]: row for row in result.get("rows", [])}
        ids = set_ids.get(set_name, [])
        digests = result.get("digests", [])
        for index, row_id in enumerate(ids):
            if row_id in whole:
                yield set_name, row_id, str(whole[row_id].get("status")), whole[row_id]
            elif index < len(digests) and digests[index] is not None:
                yield set_name, row_id, "passed", {}
        for row_id in sorted(set(whole) - set(ids)):
            yield set_name, row_id, str(whole[row_id].get("status")), whole[row_id]


def _verdict(statuses: set[str]) -> str:
    """For a feature, the statuses of its exercising rows; for a requirement, its
    features' verdicts: failed if any failed, else undetermined if a failure could be
    charged to no side, else passed if any passed, else untested."""
    for status in ("failed", "undetermined", "passed"):
        if status in statuses:
            return status
    return "untested"


def _failing_with_every_client(
    document: dict[str, Any], set_ids: dict[str, dict[str, list[str]]]
) -> set[tuple[str, ...]]:
    """The rows that failed (or failed as known) with every client, at least two, that
    ran them against one server in one transport and mode: (suite, set, row, server,
    transport, auth). There the server is the common factor, and its record cannot
    blame a client (docs/blame.md)."""
    ran: dict[tuple[str, ...], dict[str, bool]] = {}
    for combination in document.get("combinations", []):
        suite = str(combination["suite"])
        for set_name, row_id, status, _ in _row_statuses(combination, set_ids.get(suite, {})):
            if status not in _EXERCISED:
                continue
            place: tuple[str, ...] = (suite, set_name, row_id, str(combination["server"]))
            place += (str(combination["transport"]), str(combination["auth"]))
            ran.setdefault(place, {})[str(combination["client"])] = status != "passed"
    return {p for p, clients in ran.items() if len(clients) >= 2 and all(clients.values())}


@dataclass(frozen=True)
class _Basis:
    """What a report's rows are judged against: each set's rows' features ((suite, set
    name) -> row id -> features), each suite's sets' row ids in file order, each
    requirement's features, and the rows that failed with every client against one
    server (`_failing_with_every_client`: there the server is the common factor)."""

    row_features: dict[tuple[str, str], dict[str, set[str]]]
    set_ids: dict[str, dict[str, list[str]]]
    requirement_features: dict[str, set[str]]
    server_wide: set[tuple[str, ...]]


@dataclass
class _Judged:
    """What coverage gathers over a report's rows, per (adapter, role): each feature's
    statuses of the exercising rows (`seen`), the requirements a failed row's rules
    charge to a side, failed or undetermined (`charged`; failed stays failed), and the
    failed rows charged on no protocol requirement (`contract`); with every charge
    (docs/blame.md) and every adapter and feature named."""

    adapters: set[str]
    features: set[str]
    seen: dict[tuple[str, str], dict[str, set[str]]] = field(default_factory=dict)
    charged: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    contract: dict[tuple[str, str], int] = field(default_factory=dict)
    charges: list[dict[str, Any]] = field(default_factory=list)

    def count(self, key: tuple[str, str], features: set[str], status: str) -> None:
        """Each of `features` exercised by a row with `status` for (adapter, role)."""
        bucket = self.seen.setdefault(key, {})
        for name in features:
            bucket.setdefault(name, set()).add(status)


@dataclass(frozen=True)
class _FailedRow:
    """A failed (or known-failing) row of one combination, as its charges need it: its
    place, the report's row and the combination's errors (the rules' evidence), its
    features, the adapter on each side, and whether it failed with every client."""

    combination: dict[str, Any]
    set_name: str
    row_id: str
    row: dict[str, Any]
    status: str
    errors: list[Any]
    names: set[str]
    sides: dict[str, str]
    server_wide: bool


def coverage(document: dict[str, Any], root: Path) -> dict[str, Any]:
    """Per adapter and role, each feature and requirement `passed`, `failed` or `untested`
    over the rows of `document` (a report, reportVersion 3); `root` is the repository
    root the sets' `file`s are relative to. Deterministic: sorted keys and lists."""
    table = load_requirements()
    notes: list[str] = []
    row_features, set_ids = _sets_features(document, root, notes)
    basis = _Basis(
        row_features,
        set_ids,
        {entry["id"]: set(entry["features"]) for entry in table},
        _failing_with_every_client(document, set_ids),
    )
    judged = _Judged(
        adapters={str(a) for a in _adapter_names(document)},
        features={f for entry in table for f in entry["features"]},
    )
    for combination in document.get("combinations", []):
        _judge_combination(basis, judged, combination)
    for row_set in row_features.values():
        for names in row_set.values():
            judged.features |= names
    by_adapter = _by_adapter(judged, table)
    result: dict[str, Any] = {
        "byAdapter": by_adapter,
        "charges": [
            dict(sorted(c.items()))
            for c in sorted(
                judged.charges,
                key=lambda c: (c["suite"], c["combination"], c["set"], c["row"], c["rule"]),
            )
        ],
        "features": sorted(judged.features),
    }
    if notes:
        result["notes"] = sorted(notes)
    result["profiles"] = profile_verdicts(by_adapter, load_profiles())
    result["requirements"] = [_requirement_summary(e) for e in table]
    return result


def _sets_features(
    document: dict[str, Any], root: Path, notes: list[str]
) -> tuple[dict[tuple[str, str], dict[str, set[str]]], dict[str, dict[str, list[str]]]]:
    """Each report set's rows' features ((suite, set name) -> row id -> features) and each
    suite's sets' row ids in the report's order; what cannot be read goes to `notes`."""
    row_features: dict[tuple[str, str], dict[str, set[str]]] = {}
    set_ids: dict[str, dict[str, list[str]]] = {}
    for entry in document.get("sets", []):
        suite = str(entry["suite"])
        rows = _set_rows(suite, entry, root, notes)
        row_features[(suite, entry["name"])] = {
            row_id: features(suite, row) for row_id, row in rows.items()
        }
        set_ids.setdefault(suite, {})[entry["name"]] = [str(r["id"]) for r in entry.get("rows", [])]
    return row_features, set_ids


def _judge_combination(basis: _Basis, judged: _Judged, combination: dict[str, Any]) -> None:
    """Every row of one combination whose features are known: its features (plus the
    combination's transport and auth) named; an exercised row counts as passed for
    each side none of its failure's rules charges, a failed one charges its rules'
    sides (`_charge`)."""
    suite = str(combination["suite"])
    client, server = str(combination["client"]), str(combination["server"])
    judged.adapters.update((client, server))
    sides = {"client": client, "server": server}
    extra = {f"transport:{combination['transport']}", f"auth:{combination['auth']}"}
    errors = list(combination.get("errors", []))
    transport, auth = str(combination["transport"]), str(combination["auth"])
    for set_name, row_id, status, row in _row_statuses(combination, basis.set_ids.get(suite, {})):
        known = basis.row_features.get((suite, set_name), {})
        if row_id not in known:
            continue
        names = (known[row_id] | extra) & VOCABULARY
        judged.features |= names
        if status not in _EXERCISED:
            continue
        credited = dict(sides)  # the sides this row counts as passed for
        if status in ("failed", "known-failing"):
            place: tuple[str, ...] = (suite, set_name, row_id, server, transport, auth)
            failed = _FailedRow(
                combination,
                set_name,
                row_id,
                row,
                status,
                errors,
                names,
                sides,
                place in basis.server_wide,
            )
            for role in _charge(basis, judged, failed):
                credited.pop(role, None)
        for role, adapter in credited.items():
            judged.count((adapter, role), names, "passed")


def _charge(basis: _Basis, judged: _Judged, failed: _FailedRow) -> list[str]:
    """Charge a failed row by each rule that judged it (docs/blame.md): to the side
    the rule judges (`failed`), or to both when it cannot tell (`undetermined`), on
    its requirements the row exercises (`*`: all of them); a failure on none is a
    contract failure. Every charge is recorded; the roles charged are returned."""
    exercised = {r for r, fs in basis.requirement_features.items() if fs & failed.names}
    roles: list[str] = []
    for found in row_rules(failed.row, failed.errors):
        rule = placed(found, failed.row, failed.sides, failed.server_wide)
        wanted = exercised if rule.requirements == ("*",) else set(rule.requirements)
        reqs = sorted(wanted & exercised)
        charged_roles = {"client": ["client"], "server": ["server"]}.get(rule.judges, [])
        if rule.judges == "either":
            charged_roles = ["client", "server"]
        verdict = "undetermined" if rule.judges == "either" else "failed"
        touched = failed.names & {f for r in reqs for f in basis.requirement_features[r]}
        for role in charged_roles:
            roles.append(role)
            key = (failed.sides[role], role)
            for req in reqs:
                if judged.charged.setdefault(key, {}).get(req) != "failed":
                    judged.charged[key][req] = verdict
            judged.count(key, touched, verdict)
            if not reqs and verdict == "failed":
                judged.contract[key] = judged.contract.get(key, 0) + 1
        judged.charges.append(
            {
                "combination": _where(failed.combination),
                "suite": str(failed.combination["suite"]),
                "set": failed.set_name,
                "row": failed.row_id,
                "rule": rule.name,
                "judges": rule.judges,
                "adapters": sorted({failed.sides[r] for r in charged_roles}),
                "requirements": reqs,
                "basis": rule.basis,
                "known": failed.status == "known-failing",
            }
        )
    return roles


def _by_adapter(judged: _Judged, table: list[dict[str, Any]]) -> dict[str, Any]:
    """Per adapter (sorted) and role: each feature's verdict, each requirement's (failed
    or undetermined only where a rule charged it; else passed or untested by its
    features: a failed feature may belong to another rule), and the contract failures."""
    by_adapter: dict[str, Any] = {}
    for adapter in sorted(judged.adapters):
        by_adapter[adapter] = {}
        for role in _ROLES:
            bucket = judged.seen.get((adapter, role), {})
            against = judged.charged.get((adapter, role), {})
            feature_status = {name: _verdict(bucket.get(name, set())) for name in judged.features}
            # a requirement fails only where a rule charged it; its features give
            # passed or untested (a failed feature may belong to another rule)
            requirement_status = {
                entry["id"]: against.get(entry["id"])
                or _verdict({feature_status[f] for f in entry["features"]} & {"passed"})
                for entry in table
            }
            by_adapter[adapter][role] = {
                "contractFailures": judged.contract.get((adapter, role), 0),
                "features": dict(sorted(feature_status.items())),
                "requirements": dict(sorted(requirement_status.items())),
            }
    return by_adapter


def _where(combination: dict[str, Any]) -> str:
    """A charge's `combination`: `client->server/transport/auth`."""
    return (
        f"{combination['client']}->{combination['server']}/{combination['transport']}/"
        f"{combination['auth']}"
    )


def charges_of(
    document: dict[str, Any], combination: dict[str, Any], set_name: str, row_id: Any
) -> list[dict[str, Any]]:
    """What the report's coverage charged one row of one combination with."""
    coverage = document.get("coverage")
    charges = coverage.get("charges") if isinstance(coverage, dict) else None
    place = (combination["suite"], _where(combination), set_name, row_id)
    return [
        c
        for c in (charges if isinstance(charges, list) else [])
        if isinstance(c, dict)
        and (c.get("suite"), c.get("combination"), c.get("set"), c.get("row")) == place
    ]


def _adapter_names(document: dict[str, Any]) -> list[str]:
    """The adapters a report names (`adapters` may be a list of names or of objects)."""
    adapters = document.get("adapters")
    names: list[str] = []
    if isinstance(adapters, dict):
        names = [str(k) for k in adapters]
    elif isinstance(adapters, list):
        for item in adapters:
            if isinstance(item, str):
                names.append(item)
            elif isinstance(item, dict) and isinstance(item.get("name"), str):
                names.append(item["name"])
    return names


# ---------------------------------------------------------------------------------------
# Terminal rendering


def coverage_lines(result: dict[str, Any]) -> list[str]:
    """Per adapter and role: requirements passed/failed/untested, the failed MUST
    requirements on a line of their own, then the failed SHOULD/MAY ones."""
    levels = {r["id"]: r["level"] for r in result.get("requirements", [])}
    lines: list[str] = []
    for adapter, roles in sorted(result.get("byAdapter", {}).items()):
        for role in _ROLES:
            statuses = roles.get(role, {}).get("requirements", {})
            counts = {s: sum(1 for v in statuses.values() if v == s) for s in _STATES}
            if counts["untested"] == len(statuses):  # a role the run never gave it
                continue
            lines.append(
                f"coverage {adapter} as {role}: {counts['passed']} passed, "
                f"{counts['failed']} failed, {counts['undetermined']} undetermined, "
                f"{counts['untested']} untested of {len(statuses)} requirements"
            )
            profiles = profile_line(result.get("profiles", {}), statuses, adapter, role)
            if profiles:
                lines.append(profiles)
            failed = sorted(i for i, v in statuses.items() if v == "failed")
            must = [i for i in failed if levels.get(i, "").startswith("MUST")]
            other = [f"{i} ({levels.get(i, '?')})" for i in failed if i not in must]
            if must:
                lines.append(f"  MUST failed: {', '.join(must)}")
            if other:
                lines.append(f"  SHOULD/MAY failed: {', '.join(other)}")
            unplaced = sorted(i for i, v in statuses.items() if v == "undetermined")
            if unplaced:
                lines.append(
                    f"  undetermined (a failure the evidence cannot place on client or server): "
                    f"{', '.join(unplaced)}"
                )
            contract = roles.get(role, {}).get("contractFailures", 0)
            if contract:
                lines.append(
                    f"  contract failures (rows failed on no protocol requirement): {contract}"
                )
            untested = sorted(i for i, v in statuses.items() if v == "untested")
            if untested:
                lines.append(f"  untested: {', '.join(untested)}")
    for note in result.get("notes", []):
        lines.append(f"coverage note: {note}")
    return lines


_STATES = ("passed", "failed", "undetermined", "untested")
