"""`python -m interop fuzz`: generate, run every client, compare, minimise, write.

Output (under `--output`, default `reports/fuzz/`): `summary.json` (the seed,
the options, every class with its rows; deterministic for a seed), one
scenario file per class under `disagreements/` holding the minimised row and
what each client said about it, and the adapters' redacted logs under `logs/`.
A rerun deletes only the files the previous summary lists as its own.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.contract.manifest import Adapter
from interop.fuzz.compare import Disagreement, Said, classes, compare, unrun
from interop.fuzz.execute import ClientRows, Executor
from interop.fuzz.generate import BOUNDARIES, FuzzCase, generate, undefined_keys
from interop.fuzz.shrink import effects_of, minimise, rename
from interop.jsonvalue import JsonError, dumps_canonical, load_file
from interop.results import CombinationError
from interop.runtime.context import Timeouts, run_context
from interop.schema import SchemaSet

SUMMARY = "summary.json"


@dataclass
class FuzzOptions:
    seed: int
    count: int
    boundaries: tuple[str, ...]
    clients: list[str]
    server: str
    transport: str
    auth: str
    output: Path
    batch_size: int
    jobs: int
    timeouts: Timeouts
    profile: str
    minimise: bool = True
    quiet: bool = False
    replay: list[FuzzCase] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)


@dataclass
class Findings:
    compared: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    unrun: dict[str, dict[str, Said]] = field(default_factory=dict)
    not_compared: list[str] = field(default_factory=list)
    errors: dict[str, list[CombinationError]] = field(default_factory=dict)


def find(cases: list[FuzzCase], results: dict[str, ClientRows]) -> Findings:
    """Compare every row that every client reported; keep the rest apart, by reason."""
    findings = Findings(errors={n: r.errors for n, r in results.items() if r.errors})
    for case in cases:
        entries = {name: rows.entries.get(case.id) for name, rows in results.items()}
        if any(entry is None for entry in entries.values()):
            findings.not_compared.append(case.id)
            continue
        findings.compared += 1
        nobody = unrun(case, entries)
        if nobody is not None:
            findings.unrun[case.id] = nobody
            continue
        disagreement = compare(case, entries)
        if disagreement is not None:
            findings.disagreements.append(disagreement)
    return findings


def coverage(cases: list[FuzzCase], results: dict[str, ClientRows]) -> dict[str, Any]:
    """How much of the space the rows reached, per boundary: rows accepted by every
    client, rows rejected by every client, and how often each outcome key appeared."""
    table: dict[str, dict[str, Any]] = {}
    for case in cases:
        row = table.setdefault(case.boundary, {"rows": 0, "accepted": 0, "rejected": 0, "keys": {}})
        row["rows"] += 1
        actuals = [r.entries.get(case.id, {}).get("actual") for r in results.values()]
        if all(a == {"rejected": True} for a in actuals):
            row["rejected"] += 1
        elif all(isinstance(a, dict) and "rejected" not in a for a in actuals):
            row["accepted"] += 1
            first = actuals[0]
            assert isinstance(first, dict)
            for key in ("result", "flow", "injections", "continuationInstructions"):
                if key in first:
                    row["keys"][key] = row["keys"].get(key, 0) + 1
            if first.get("decision") in ("ask", "deny"):
                name = f"decision:{first['decision']}"
                row["keys"][name] = row["keys"].get(name, 0) + 1
    return {
        b: {**row, "keys": dict(sorted(row["keys"].items()))} for b, row in sorted(table.items())
    }


def _slug(keys: tuple[str, ...]) -> str:
    return "-".join(keys).replace("/", "_")


def _clean_previous(output: Path) -> None:
    """Delete what the previous run in this folder wrote, and nothing else."""
    try:
        previous = load_file(output / SUMMARY)
    except JsonError:
        return
    files = previous.get("files", []) if isinstance(previous, dict) else []
    for name in files:
        if isinstance(name, str) and not name.startswith(("/", "..")) and ".." not in name:
            (output / name).unlink(missing_ok=True)


def _disagreement_file(
    options: FuzzOptions, number: int, rows: list[Disagreement], shrunk: Disagreement
) -> dict[str, Any]:
    first = rows[0]
    scenario = {**rename(shrunk.case.scenario, first.case.id), "tags": ["fuzz", *first.keys]}
    return {
        "version": 1,
        "fuzz": {
            "class": list(first.keys),
            "seed": options.seed,
            "row": first.case.index,
            "original": first.case.id,
            "boundary": first.case.boundary,
            "rows": [d.case.id for d in rows],
            "said": {name: view.as_json() for name, view in shrunk.said.items()},
            "note": "no expectation: settle the rule, then write one by hand (docs/fuzzing.md)",
        },
        "scenarios": [scenario],
    }


def _write(
    options: FuzzOptions,
    findings: Findings,
    shrunk: dict[str, Disagreement],
    reached: dict[str, Any],
) -> dict[str, Any]:
    output = options.output
    (output / "disagreements").mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    summary_classes = []
    for number, (keys, rows) in enumerate(classes(findings.disagreements).items(), start=1):
        representative = shrunk.get(rows[0].case.id, rows[0])
        name = f"disagreements/{number:02d}-{_slug(keys)}.json"
        (output / name).write_text(
            dumps_canonical(_disagreement_file(options, number, rows, representative)),
            encoding="utf-8",
        )
        files.append(name)
        boundaries: dict[str, int] = {}
        for row in rows:
            boundaries[row.case.boundary] = boundaries.get(row.case.boundary, 0) + 1
        summary_classes.append(
            {
                "keys": list(keys),
                "rows": [d.case.id for d in rows],
                "boundaries": dict(sorted(boundaries.items())),
                "file": name,
                "minimisedEffects": len(effects_of(representative.case.scenario["response"]) or []),
            }
        )
    logs = sorted(str(p.relative_to(output)) for p in (output / "logs").rglob("*") if p.is_file())
    summary = {
        "seed": options.seed,
        "count": len(options.replay) or options.count,
        "boundaries": list(options.boundaries),
        "clients": options.clients,
        "server": options.server,
        "transport": options.transport,
        "auth": options.auth,
        "compared": findings.compared,
        "disagreeing": len(findings.disagreements),
        "classes": summary_classes,
        "coverage": reached,
        "unrun": {i: {n: s.as_json() for n, s in v.items()} for i, v in findings.unrun.items()},
        "notCompared": findings.not_compared,
        "clientErrors": {
            name: [e.as_json() for e in errors] for name, errors in sorted(findings.errors.items())
        },
        "files": [*files, *logs, SUMMARY],
    }
    (output / SUMMARY).write_text(dumps_canonical(summary), encoding="utf-8")
    return summary


def _rerun_command(options: FuzzOptions) -> str:
    if options.argv and "--seed" in options.argv:
        return "python -m interop fuzz " + shlex.join(options.argv)
    return "python -m interop fuzz " + shlex.join([*options.argv, "--seed", str(options.seed)])


def _print_findings(
    findings: Findings, summary: dict[str, Any], shrunk: dict[str, Disagreement], output: Path
) -> None:
    out = sys.stderr
    for name, errors in sorted(findings.errors.items()):
        print(f"CLIENT ERRORS {name}:", file=out)
        for error in errors[:5]:
            print(f"  {error.stage}: {error.error_class}: {error.message}", file=out)
    if findings.unrun:
        print(f"{len(findings.unrun)} rows no client could run (a generator bug), e.g.:", file=out)
        for row_id, views in list(findings.unrun.items())[:3]:
            reasons = "; ".join(
                f"{n}: {v.status} {v.error or ''}".strip() for n, v in views.items()
            )
            print(f"  {row_id}: {reasons}", file=out)
    by_keys = classes(findings.disagreements)
    for number, (keys, rows) in enumerate(by_keys.items(), start=1):
        entry = summary["classes"][number - 1]
        places = ", ".join(f"{b} {n}" for b, n in entry["boundaries"].items())
        print(f"class {number}: {', '.join(keys)} differ ({len(rows)} rows: {places})", file=out)
        example = shrunk.get(rows[0].case.id, rows[0])
        for name, view in example.said.items():
            shown = view.actual if view.status == "completed" else f"{view.status}: {view.error}"
            if isinstance(shown, dict) and "rejected" not in keys and "status" not in keys:
                shown = {k: shown.get(k, "<absent>") for k in keys}
            text = json.dumps(shown, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            print(f"  {name}: {text if len(text) <= 300 else text[:297] + '...'}", file=out)
        print(f"  minimised row: {output / entry['file']}", file=out)


def run_fuzz(options: FuzzOptions, adapters: dict[str, Adapter]) -> int:
    started = time.monotonic()
    cases = options.replay or generate(options.seed, options.count, options.boundaries)
    what = f"{len(cases)} replayed rows" if options.replay else f"{len(cases)} rows"
    print(
        f"fuzz: seed {options.seed}, {what} over {len(options.boundaries)} boundaries; "
        f"clients {', '.join(options.clients)}; server {options.server} over "
        f"{options.transport}/{options.auth}",
        file=sys.stderr,
    )
    print(f"  re-run: {_rerun_command(options)}", file=sys.stderr, flush=True)
    options.output.mkdir(parents=True, exist_ok=True)
    _clean_previous(options.output)
    shrunk: dict[str, Disagreement] = {}
    with run_context(
        logs=options.output / "logs",
        auth=[options.auth],
        profile=options.profile,
        timeouts=options.timeouts,
    ) as ctx:
        executor = Executor(
            ctx,
            adapters,
            options.clients,
            options.server,
            options.transport,
            options.auth,
            options.batch_size,
            options.jobs,
        )
        try:
            results = executor.run(cases, "fuzz")
            findings = find(cases, results)
            reached = coverage(cases, results)
            if not options.quiet:
                for name, rows in sorted(results.items()):
                    print(
                        f"  {name}: {len(rows.entries)} rows in {rows.seconds:.1f}s",
                        file=sys.stderr,
                    )
            by_keys = classes(findings.disagreements)
            if options.minimise and by_keys and not findings.errors:
                targets = [rows[0] for rows in by_keys.values()]
                if not options.quiet:
                    print(f"  minimising {len(targets)} classes", file=sys.stderr, flush=True)
                schema = SchemaSet(ROOT / "schemas" / "draft")
                shrunk = minimise(targets, executor.run, schema)
        except KeyboardInterrupt:
            ctx.cancelled.set()
            print("\ninterrupted: stopping every adapter process", file=sys.stderr, flush=True)
            ctx.registry.kill_all()
            executor.close()
            return 130
        for error in executor.close():
            findings.errors.setdefault("servers", []).append(error)
    summary = _write(options, findings, shrunk, reached)
    _print_findings(findings, summary, shrunk, options.output)
    seconds = time.monotonic() - started
    print(
        f"compared {findings.compared} of {len(cases)} rows: {len(findings.disagreements)} "
        f"disagree in {len(summary['classes'])} classes; {len(findings.unrun)} unrun; "
        f"{len(findings.not_compared)} not compared ({seconds:.1f}s; seed {options.seed}; "
        f"{options.output / SUMMARY})",
        file=sys.stderr,
    )
    bad = findings.disagreements or findings.unrun or findings.not_compared or findings.errors
    return 1 if bad else 0


def load_replay(paths: list[Path]) -> list[FuzzCase]:
    """Rows from scenario files (fuzz output or any core set), answers ignored."""
    cases: list[FuzzCase] = []
    seen: set[str] = set()
    for path in paths:
        try:
            document = load_file(path)
        except JsonError as exc:
            raise ValueError(str(exc)) from None
        scenarios = document.get("scenarios") if isinstance(document, dict) else None
        if not isinstance(scenarios, list):
            raise ValueError(f"{path}: not a scenario file (no 'scenarios' array)")
        for index, raw in enumerate(scenarios):
            if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
                raise ValueError(f"{path}: scenarios[{index}] has no string id")
            if raw["id"] in seen:
                raise ValueError(f"{path}: scenario id {raw['id']!r} appears twice in the replay")
            seen.add(raw["id"])
            request = raw.get("request")
            event = request.get("params", {}).get("event", {}) if isinstance(request, dict) else {}
            boundary = event.get("type") if isinstance(event, dict) else None
            if boundary not in BOUNDARIES:
                raise ValueError(
                    f"{path}: scenario {raw['id']!r}: event type {boundary!r} is not a core "
                    f"boundary ({', '.join(BOUNDARIES)})"
                )
            scenario = {"id": raw["id"], "request": request, "response": raw.get("response")}
            ignore = undefined_keys(boundary, event)
            cases.append(FuzzCase(len(cases), boundary, scenario, ignore))
    return cases
