"""`python -m interop bench`: the matrix's speed, measured beside the physical floor.

Every figure comes from runs made by this command, in one sitting, on this
machine; ratios are taken between runs of the same sitting. The matrix runs as
a child process (`python -m interop matrix`, its reports in a scratch folder),
watched by a sampler (memory, processes, the time adapters were alive). Parts:

- `suites`: every suite over the grid in one run (`--jobs`), then each suite
  alone: total wall time, per suite and in all; time per combination and per
  row by client and by server language; harness overhead; peak memory; the
  processes started.
- `jobs`: the core suite with `--jobs 1` beside the core run with `--jobs`,
  `--samples` times each, alternately (the speed-up of parallel workers: the
  fastest of each side, every wall kept).
- `scaling`: the core suite with our core set doubled and quadrupled (rows
  replicated under fresh ids; the upstream vectors once), for the growth of wall
  time and the marginal cost of one more row by client language.
- `build`: a no-op build of the adapters (`python -m interop build` right after
  one: what every `nox -s matrix` pays before it runs).
- `startup`: process start-up cost per adapter (bench/startup.py).
- `floor`: as many bare loopback HTTP round trips, TLS handshakes and process
  starts as the suites run made (bench/floor.py).

The result is printed and written to `--output` (default reports/bench.json).
Nothing here asserts a time: a failed matrix run is reported (exit 1), a slow one
only measured.
"""

from __future__ import annotations

import copy
import json
import shutil
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.bench import floor
from interop.bench.sampler import Watched, watch
from interop.bench.startup import startup_costs
from interop.contract.manifest import Adapter
from interop.redact import Redactor
from interop.runtime.context import write_json
from interop.trust import Trust

PARTS = ("build", "suites", "jobs", "scaling", "startup", "floor")
CORE_SET = ROOT / "scenarios" / "core.json"
UPSTREAM_CORE = ROOT / "scenarios" / "upstream" / "scenarios.json"
JUDGED = ("passed", "failed", "known-failing", "flaky")


@dataclass
class BenchOptions:
    adapters: list[str]
    suites: list[str]
    jobs: int
    parts: tuple[str, ...]
    output: Path
    matrix_args: list[str] = field(default_factory=list)  # adapter dirs and roots, passed on
    samples: int = 2  # runs of each side of the jobs part


@dataclass
class MatrixRun:
    """One `python -m interop matrix` child: its watch, report and timings."""

    label: str
    watched: Watched
    report: dict[str, Any]
    timings: dict[str, Any]

    @property
    def passed(self) -> bool:
        return self.watched.returncode == 0

    def combinations(self) -> Iterable[tuple[dict[str, Any], float, int]]:
        """(combination entry, seconds, judged rows) of every combination that ran."""
        seconds = self.timings.get("combinations", {})
        for entry in self.report.get("combinations", []):
            key = f"{entry['suite']}/{entry['client']}--{entry['server']}--"
            key += f"{entry['transport']}--{entry['auth']}"
            rows = sum(entry["counts"].get(status, 0) for status in JUDGED)
            if key in seconds and rows:
                yield entry, seconds[key], rows

    def summary(self) -> dict[str, Any]:
        rows = sum(r for _, _, r in self.combinations())
        return {
            "wallSeconds": round(self.watched.wall, 2),
            "passed": self.passed,
            "combinations": sum(1 for _ in self.combinations()),
            "rows": rows,
            "harnessOverheadSeconds": round(self.watched.harness_overhead, 2),
            "peakMemoryMiB": round(self.watched.peak_rss / 2**20, 1),
            "processStarts": self.timings.get("processStarts", 0),
            "processesSeen": self.watched.processes_seen,
            "cpuSeconds": self.timings.get("cpuSeconds", {}),
        }


def _matrix(
    label: str, work: Path, options: BenchOptions, suites: list[str], extra: list[str]
) -> MatrixRun:
    folder = work / label
    folder.mkdir()
    output = folder / "report.json"
    command = [
        sys.executable,
        "-m",
        "interop",
        "matrix",
        "--suite",
        *suites,
        "--adapters",
        *options.adapters,
        "--output",
        str(output),
        "--quiet",
        *options.matrix_args,
        *extra,
    ]
    if "--jobs" not in extra:
        command += ["--jobs", str(options.jobs)]
    print(f"bench: {label}: {' '.join(command[1:])}", file=sys.stderr, flush=True)
    watched = watch(command, cwd=ROOT, log=folder / "matrix.log")
    report = json.loads(output.read_text(encoding="utf-8")) if output.exists() else {}
    timings_file = output.with_suffix(".timings.json")
    timings = json.loads(timings_file.read_text(encoding="utf-8")) if timings_file.exists() else {}
    run = MatrixRun(label, watched, report, timings)
    state = "passed" if run.passed else f"FAILED (exit {watched.returncode}; {folder}/matrix.log)"
    print(f"bench: {label}: {watched.wall:.1f} s, {state}", file=sys.stderr, flush=True)
    return run


def _noop_build(options: BenchOptions, work: Path) -> float:
    """Seconds of `python -m interop build` for the chosen adapters, run twice: the
    first makes sure everything is built, the second is the no-op that is timed."""
    command = [sys.executable, "-m", "interop", "build", "--adapters", *options.adapters]
    command += options.matrix_args
    log = work / "build.log"
    watch(command, cwd=ROOT, log=log)
    watched = watch(command, cwd=ROOT, log=log)
    if watched.returncode != 0:
        raise RuntimeError(f"`{' '.join(command[1:])}` failed: {log.read_text()[-2000:]}")
    return round(watched.wall, 2)


def _by_language(run: MatrixRun) -> dict[str, Any]:
    """Seconds per combination and milliseconds per row, by client and by server language."""
    out: dict[str, Any] = {}
    for role in ("client", "server"):
        seconds: dict[str, float] = defaultdict(float)
        rows: dict[str, int] = defaultdict(int)
        count: dict[str, int] = defaultdict(int)
        for entry, spent, judged in run.combinations():
            name = entry[role]
            seconds[name] += spent
            rows[name] += judged
            count[name] += 1
        out[role] = {
            name: {
                "combinations": count[name],
                "secondsPerCombination": round(seconds[name] / count[name], 3),
                "msPerRow": round(seconds[name] / rows[name] * 1000, 3),
            }
            for name in sorted(seconds)
        }
    return out


def _suite_totals(run: MatrixRun) -> dict[str, Any]:
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for entry, spent, judged in run.combinations():
        totals[entry["suite"]]["combinationSeconds"] += spent
        totals[entry["suite"]]["combinations"] += 1
        totals[entry["suite"]]["rows"] += judged
    return {
        suite: {k: round(v, 2) if isinstance(v, float) else v for k, v in values.items()}
        for suite, values in sorted(totals.items())
    }


def replicate(source: Path, times: int, target: Path) -> int:
    """`source`'s rows `times` over, copy k > 1 under fresh ids: every string equal
    to the row's id (the request's, the event's, the response's when it echoes
    it) gets the suffix `-rK`. Returns the number of rows written."""
    document = json.loads(source.read_text(encoding="utf-8"))
    rows = []
    for k in range(1, times + 1):
        for row in document["scenarios"]:
            rows.append(row if k == 1 else _renamed(copy.deepcopy(row), row["id"], f"-r{k}"))
    document["scenarios"] = rows
    target.write_text(json.dumps(document), encoding="utf-8")
    return len(rows)


def _renamed(value: Any, old: str, suffix: str) -> Any:
    if isinstance(value, str):
        return value + suffix if value == old else value
    if isinstance(value, list):
        return [_renamed(v, old, suffix) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, old, suffix) for k, v in value.items()}
    return value


def _marginal(base: MatrixRun, bigger: MatrixRun) -> dict[str, float]:
    """Milliseconds per extra row, by client language: the median over that client's
    combinations of (seconds_big - seconds_base) / (rows_big - rows_base)."""
    before = {_combo(e): (s, r) for e, s, r in base.combinations()}
    per_client: dict[str, list[float]] = defaultdict(list)
    for entry, seconds, rows in bigger.combinations():
        if _combo(entry) not in before:
            continue
        base_seconds, base_rows = before[_combo(entry)]
        if rows > base_rows:
            per_client[entry["client"]].append((seconds - base_seconds) / (rows - base_rows))
    return {
        name: round(statistics.median(values) * 1000, 3)
        for name, values in sorted(per_client.items())
    }


def _combo(entry: dict[str, Any]) -> str:
    return f"{entry['client']}--{entry['server']}--{entry['transport']}--{entry['auth']}"


def _floor(run: MatrixRun, work: Path) -> dict[str, Any]:
    http_rows = 0
    https = 0
    stdio = 0
    for entry, _, rows in run.combinations():
        if entry["transport"] == "http":
            http_rows += rows
            https += entry["auth"] != "none"
        else:
            stdio += 1
    starts = run.timings.get("processStarts", 0) + stdio  # a stdio client starts its server
    trust = Trust.create(Redactor(), parent=work)
    try:
        tls = floor.tls_handshakes(
            https,
            Path(trust.path("server.pem")),
            Path(trust.path("server-key.pem")),
            Path(trust.path("ca.pem")),
        )
    finally:
        trust.destroy()
    measured = [floor.http_round_trips(http_rows), tls, floor.process_starts(starts)]
    total = sum(f.seconds for f in measured)
    return {
        "basis": "one round trip per HTTP row, one handshake per HTTPS combination, one start "
        "per process the harness started and per stdio server a client started",
        **{f.kind: f.as_json() for f in measured},
        "totalSeconds": round(total, 3),
        "matrixWallOverFloor": round(run.watched.wall / total, 1) if total else None,
    }


@dataclass
class _Sitting:
    """One bench sitting: its options, its scratch folder, the figures so far (`result`)
    and every matrix run made, in the order the figures name them (the failed ones
    are kept and listed in that order)."""

    options: BenchOptions
    work: Path
    result: dict[str, Any]
    runs: list[MatrixRun] = field(default_factory=list)

    def matrix(self, label: str, suites: list[str], extra: list[str]) -> MatrixRun:
        """One matrix child of this sitting (not yet among `runs`)."""
        return _matrix(label, self.work, self.options, suites, extra)


def run_bench(options: BenchOptions, adapters: dict[str, Adapter]) -> int:
    """Run the parts asked for; print and write the figures; 1 when a matrix run failed."""
    work = Path(tempfile.mkdtemp(prefix="ahp-bench-"))
    sitting = _Sitting(
        options,
        work,
        {
            "adapters": {n: adapters[n].language for n in options.adapters},
            "jobs": options.jobs,
            "suites": options.suites,
            "parts": list(options.parts),
        },
    )
    try:
        _measure(sitting, adapters)
    finally:
        failed = _keep_failed(sitting)
        shutil.rmtree(work, ignore_errors=True)
    return _write_figures(sitting, failed)


def _measure(sitting: _Sitting, adapters: dict[str, Adapter]) -> None:
    """Each part asked for, in the order of PARTS, its figures into `sitting.result`:
    the core run serves both the jobs and the scaling part; the floor is measured for
    the all-suites run, else the core run."""
    options, work, result = sitting.options, sitting.work, sitting.result
    if "build" in options.parts:
        result["noopBuildSeconds"] = _noop_build(options, work)
    every = _suites_part(sitting) if "suites" in options.parts else None
    core: MatrixRun | None = None
    if "jobs" in options.parts or "scaling" in options.parts:
        core = sitting.matrix("core", ["core"], [])
        sitting.runs.append(core)
        result["core"] = core.summary()
    if "jobs" in options.parts and core is not None:
        _jobs_part(sitting, core)
    if "scaling" in options.parts and core is not None:
        _scaling_part(sitting, core)
    if "startup" in options.parts:
        result["startup"] = startup_costs(
            {n: adapters[n] for n in options.adapters}, work / "startup-logs"
        )
    if "floor" in options.parts:
        basis = every or core
        if basis is not None:
            result["floor"] = _floor(basis, work)


def _suites_part(sitting: _Sitting) -> MatrixRun:
    """Every suite in one run (its summary, by language, per suite's totals), then each
    suite alone; the all-suites run."""
    options, result = sitting.options, sitting.result
    every = sitting.matrix("all-suites", options.suites, [])
    sitting.runs.append(every)
    result["all"] = every.summary()
    result["byLanguage"] = _by_language(every)
    result["suiteTotals"] = _suite_totals(every)
    alone = {}
    for suite in options.suites:
        run = sitting.matrix(f"suite-{suite}", [suite], [])
        sitting.runs.append(run)
        alone[suite] = run.summary()
    result["perSuite"] = alone
    return every


def _jobs_part(sitting: _Sitting, core: MatrixRun) -> None:
    """The core suite with --jobs (the core run first) and with --jobs 1, `--samples`
    times each: the speed-up is the ratio of the fastest of each, every wall kept."""
    options, result = sitting.options, sitting.result
    # alternately, so that a slower stretch of a shared machine reaches both sides
    parallel, serial_runs = [core], []
    for sample in range(1, options.samples + 1):
        suffix = "" if sample == 1 else f"-{sample}"
        if sample > 1:
            parallel.append(sitting.matrix(f"core{suffix}", ["core"], []))
        serial_runs.append(sitting.matrix(f"core-jobs-1{suffix}", ["core"], ["--jobs", "1"]))
    sitting.runs += parallel[1:] + serial_runs
    fastest = min(parallel, key=lambda r: r.watched.wall)
    serial = min(serial_runs, key=lambda r: r.watched.wall)
    result["coreJobs1"] = serial.summary()
    result["jobsWalls"] = {
        "jobs": [round(r.watched.wall, 2) for r in parallel],
        "jobs1": [round(r.watched.wall, 2) for r in serial_runs],
    }
    result["jobsSpeedup"] = round(serial.watched.wall / fastest.watched.wall, 2)


def _scaling_part(sitting: _Sitting, core: MatrixRun) -> None:
    """The core suite with our core set doubled and quadrupled (the upstream vectors
    once): wall growth over the core run and the marginal cost of a row by client."""
    growth: dict[str, Any] = {}
    for times in (2, 4):
        copied = sitting.work / f"core-x{times}.json"
        count = replicate(CORE_SET, times, copied)
        bigger = sitting.matrix(
            f"core-x{times}", ["core"], ["--scenarios", str(copied), str(UPSTREAM_CORE)]
        )
        sitting.runs.append(bigger)
        growth[f"x{times}"] = {
            "coreRows": count,
            **bigger.summary(),
            "wallGrowth": round(bigger.watched.wall / core.watched.wall, 2),
            "marginalMsPerRowByClient": _marginal(core, bigger),
        }
    sitting.result["scaling"] = growth


def _keep_failed(sitting: _Sitting) -> list[MatrixRun]:
    """The failed matrix runs, their logs (matrix.log, and the report's logs folder: the
    harness's traceback, per-process logs) copied to bench-failed/ beside the output."""
    failed = [r for r in sitting.runs if not r.passed]
    if failed:
        kept = sitting.options.output.parent / "bench-failed"
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True, exist_ok=True)
        for run in failed:
            folder = sitting.work / run.label
            shutil.copy(folder / "matrix.log", kept / f"{run.label}.log")
            logs = folder / "report-logs"  # the harness's traceback, per-process logs
            if logs.is_dir():
                shutil.copytree(logs, kept / f"{run.label}-logs")
    return failed


def _write_figures(sitting: _Sitting, failed: list[MatrixRun]) -> int:
    """Write the figures to --output and print them (and the failed runs); 1 when a
    matrix run failed."""
    options, result = sitting.options, sitting.result
    result["failedRuns"] = [r.label for r in failed]
    options.output.parent.mkdir(parents=True, exist_ok=True)
    write_json(options.output, result)
    print(render(result))
    print(f"bench: written to {options.output}", file=sys.stderr)
    if failed:
        print(
            f"bench: {len(failed)} matrix run(s) failed: {', '.join(r.label for r in failed)}; "
            f"their logs are in {options.output.parent / 'bench-failed'}",
            file=sys.stderr,
        )
    return 1 if failed else 0


def render(result: dict[str, Any]) -> str:
    """The figures as plain lines, in the order the issue lists them."""
    lines: list[str] = []
    if "noopBuildSeconds" in result:
        lines.append(f"no-op build: {result['noopBuildSeconds']} s")
    if "all" in result:
        a = result["all"]
        lines.append(
            f"all suites: {a['wallSeconds']} s wall, {a['combinations']} combinations, "
            f"{a['rows']} rows, harness overhead {a['harnessOverheadSeconds']} s, "
            f"peak memory {a['peakMemoryMiB']} MiB, {a['processStarts']} processes started"
        )
        for suite, s in result.get("perSuite", {}).items():
            lines.append(
                f"  {suite}: {s['wallSeconds']} s wall alone, {s['combinations']} combinations, "
                f"{s['rows']} rows, peak {s['peakMemoryMiB']} MiB"
            )
        cpu = a.get("cpuSeconds", {})
        if cpu:
            spent = "; ".join(
                f"{name} " + ", ".join(f"{role} {v} s" for role, v in roles.items())
                for name, roles in cpu.get("adapters", {}).items()
            )
            lines.append(f"  CPU: harness {cpu.get('harness')} s; {spent}")
        for role, table in result["byLanguage"].items():
            for name, v in table.items():
                lines.append(
                    f"  by {role} {name}: {v['secondsPerCombination']} s per combination, "
                    f"{v['msPerRow']} ms per row ({v['combinations']} combinations)"
                )
    if "core" in result:
        c = result["core"]
        lines.append(f"core: {c['wallSeconds']} s wall, {c['combinations']} combinations")
    if "jobsSpeedup" in result:
        walls = result.get("jobsWalls", {})
        fastest = min(walls.get("jobs", [result["core"]["wallSeconds"]]))
        seen = "; ".join(
            f"{side}: {', '.join(f'{w} s' for w in values)}" for side, values in walls.items()
        )
        lines.append(
            f"--jobs {result['jobs']} over --jobs 1: x{result['jobsSpeedup']} "
            f"({result['coreJobs1']['wallSeconds']} s -> {fastest} s, the fastest of each"
            + (f"; {seen})" if seen else ")")
        )
    for name, g in result.get("scaling", {}).items():
        margins = ", ".join(f"{k} {v} ms" for k, v in g["marginalMsPerRowByClient"].items())
        lines.append(
            f"core set {name} ({g['coreRows']} rows): {g['wallSeconds']} s wall, "
            f"growth x{g['wallGrowth']}; marginal per row: {margins}"
        )
    for name, s in result.get("startup", {}).items():
        if "error" in s:
            lines.append(f"start-up {name}: failed: {s['error']}")
        else:
            lines.append(f"start-up {name}: server {s['serverMs']} ms, client {s['clientMs']} ms")
    if "floor" in result:
        f = result["floor"]
        parts = ", ".join(
            f"{kind} {f[kind]['count']} in {f[kind]['seconds']} s"
            for kind in ("httpRoundTrips", "tlsHandshakes", "processStarts")
        )
        lines.append(
            f"floor: {parts}; {f['totalSeconds']} s in all, matrix x{f['matrixWallOverFloor']}"
        )
    return "\n".join(lines)
