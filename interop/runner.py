"""Runs suites over the grid: applicability, scheduling, progress, reports, cleanup.

The runner knows no suite's rules: each suite says which combinations apply,
how they group into jobs and how a job runs. The jobs of every suite of the
run share one pool of workers, longest first, and one report. Every terminating signal (Ctrl-C,
SIGTERM, SIGHUP) stops every adapter process, deletes the run's trust
material and still writes a report, marked incomplete, in which what never
ran is `not-run`.
"""

from __future__ import annotations

import hashlib
import math
import resource
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop import ROOT, shard
from interop.contract.manifest import Adapter
from interop.coverage import coverage, coverage_lines
from interop.globs import exact
from interop.grid import Combination, expand
from interop.known import KnownFailures, row_path
from interop.known import apply as apply_known
from interop.report import build_document, build_timings, bundles, slow, write_reports
from interop.report.terminal import failure_summary
from interop.report.write import ReportPaths
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime import interrupts
from interop.runtime.context import RunContext, Timeouts, run_context
from interop.schema import judged_by
from interop.select import (
    SelectedFiles,
    Selection,
    restore_origin,
    row_tags,
    trim_description,
    trim_outcome,
)
from interop.suites import DECLARATIONS, SUITES
from interop.suites.base import Job, ScenarioSets, Suite

NOT_JUDGED = (Status.INAPPLICABLE, Status.NOT_RUN)  # a row the progress line counts apart
HEARTBEAT = 30.0  # seconds between "still running" lines while nothing finishes


class UsageError(ValueError):
    """The command line asks for something that cannot run."""


@dataclass(frozen=True)
class SuiteRun:
    """One suite of the run with its loaded scenario sets and the row selection
    (`--scenario`, `--tag`; see interop/select.py)."""

    name: str
    sets: ScenarioSets
    selection: Selection = field(default_factory=Selection)
    tags: dict[str, list[str]] = field(default_factory=dict)
    files: SelectedFiles | None = None
    paths: tuple[Path, ...] = ()  # the scenario files it was loaded from (their originals)

    def describe(self) -> list[dict[str, Any]]:
        described = [{**d, "suite": self.name} for d in self.sets.describe()]
        if not self.selection.active:
            return described
        return [
            restore_origin(trim_description(d, self.selection, self.tags), self.files)
            for d in described
        ]

    def row_count(self) -> int:
        if not self.selection.active:
            return self.sets.row_count()
        return sum(len(d["rows"]) for d in self.describe())

    def trim(self, outcome: Outcome) -> None:
        if self.selection.active:
            trim_outcome(outcome, self.selection, self.tags)


@dataclass
class MatrixOptions:
    suites: list[SuiteRun]
    clients: list[str]
    servers: list[str]
    transports: list[str]
    auth: list[str]
    jobs: int
    timeouts: Timeouts
    output: Path
    profile: str
    quiet: bool = False
    server_reuse: bool = True
    full_report: bool = False
    selection: Selection = field(default_factory=Selection)
    shard: tuple[int, int] | None = None  # (K, N) of --shard K/N
    repeat: int = 1  # --repeat N: each combination N times, rows that changed are flaky
    # --recheck N: a combination with an unexpected failed row runs again N times with
    # only those rows; a row that passes then is flaky (never a pass)
    recheck: int = 1
    known: KnownFailures | None = None  # known-failures.json (interop/known.py)
    # every suite, adapter, transport and auth mode, no selection: a known-failures
    # pattern that matches nothing is then an error
    whole_grid: bool = False
    spec: Path | None = None  # --spec: a checkout of the spec, whose schemas v1 adapters get


def _meta(options: MatrixOptions, adapters: dict[str, Adapter]) -> dict[str, Any]:
    spec = spec_schemas(options.spec) if options.spec is not None else None
    return {
        "suites": [run.name for run in options.suites],
        "profile": options.profile,
        **({"selection": options.selection.as_json()} if options.selection.active else {}),
        "revision": _revision(),
        **({"specSchemas": schemas_digest(spec)} if spec is not None else {}),
        "adapters": {
            name: {
                "language": adapters[name].language,
                "blind": adapters[name].blind,
                "contract": "ours" if adapters[name].blind else "v1",
                "schemas": "spec" if spec is not None and not adapters[name].blind else "ours",
                **({"version": adapters[name].version} if adapters[name].version else {}),
            }
            for name in sorted(set(options.clients) | set(options.servers))
        },
    }


def spec_schemas(spec: Path) -> Path:
    """The canonical schemas of a spec checkout (`--spec PATH`): PATH/schema/draft."""
    folder = spec / "schema" / "draft"
    if not any(folder.glob("*.schema.json")):
        raise UsageError(
            f"--spec {spec}: no {folder}/*.schema.json; give a checkout of the spec "
            "repository (agenthooksprotocol/agent-hooks-protocol)"
        )
    return folder.resolve()


def schemas_digest(folder: Path) -> str:
    """`sha256:` of the schema files' names and bytes, in name order (the report names
    the schemas a run handed out without a path)."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.json")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def _revision() -> str:
    """The project's git revision (`unknown` outside a checkout), with `+dirty`
    when the working tree has changes: a report says what it was made from."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return "unknown"
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    dirty = "+dirty" if status.returncode == 0 and status.stdout.strip() else ""
    return head.stdout.strip() + dirty


class Progress:
    """On a terminal, a progress bar (counts, failures, elapsed time and ETA) with a line
    per combination that did not pass; otherwise one line per finished combination, as
    it finishes, and a heartbeat while none does."""

    def __init__(self, total: int, quiet: bool, tty: bool | None = None) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.quiet = quiet
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._started = self._last
        self.finished: list[Outcome] = []  # every outcome reported so far, in order
        self.closed = False
        self._bar: Any = None
        if not quiet and (sys.stderr.isatty() if tty is None else tty):
            self._start_bar()

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import (
            Progress as Bar,
        )

        self._bar = Bar(
            TextColumn("combinations"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._bar.add_task("matrix", total=self.total, failed=0)
        self._bar.start()

    def stop(self) -> None:
        """Take the bar off the terminal (idempotent)."""
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None

    def close(self) -> list[Outcome]:
        """Stop accepting outcomes; those reported until now."""
        self.stop()
        with self._lock:
            self.closed = True
            return list(self.finished)

    def report(self, outcome: Outcome) -> None:
        with self._lock:
            if self.closed:
                return  # finished after the interrupt: an artefact of the kill, not a result
            self.finished.append(outcome)
            self.done += 1
            self._last = time.monotonic()
            if self.quiet:
                return
            passed = sum(r.status == Status.PASSED for r in outcome.rows)
            judged = [r for r in outcome.rows if r.status not in NOT_JUDGED]
            aside = len(outcome.rows) - len(judged)  # inapplicable, not run: never judged
            detail = f"{passed}/{len(judged)}" if outcome.rows else outcome.not_run or ""
            if aside:
                detail += f" (+{aside} not judged)"
            line = (
                f"[{self.done:>3}/{self.total}] {outcome.suite} {outcome.combination.label()}: "
                f"{outcome.status} {detail} ({outcome.seconds:.1f}s)"
            )
            if outcome.status == Status.FAILED:
                self.failed += 1
            if self._bar is None:
                print(line, file=sys.stderr, flush=True)
                return
            if outcome.status != Status.PASSED:
                self._bar.console.print(line, markup=False, highlight=False)
            self._bar.update(self._task, completed=self.done, failed=self.failed)

    def heartbeat(self) -> None:
        with self._lock:
            now = time.monotonic()
            if self._bar is not None:
                return  # the bar shows the elapsed time itself
            if self.quiet or now - self._last < HEARTBEAT or self.done >= self.total:
                return
            self._last = now
            print(
                f"[{self.done:>3}/{self.total}] still running ({now - self._started:.0f}s so far)",
                file=sys.stderr,
                flush=True,
            )


def _lacking(suite: str, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
    """Why the combination cannot run: an adapter whose manifest leaves out this suite
    (`extensions.suites`), its role in it (`extensions.roles`) or the combination's
    auth mode (`extensions.auth`); None when both can run it. (A
    contract v1 adapter's non-core adapters, upstream's elicitation and compaction-wire,
    are found and driven by those suites themselves.)"""
    reasons: list[str] = []
    for role, name in (("client", combination.client), ("server", combination.server)):
        reason = adapters[name].lacks(suite, role, combination.transport, combination.auth)
        if reason is not None and reason not in reasons:
            reasons.append(reason)
    return "; ".join(reasons) or None


def _unsupported(run: SuiteRun, combination: Combination, reason: str) -> Outcome:
    """Every row of the suite unsupported, with the reason: never run, never a pass."""
    outcome = Outcome(run.name, combination)
    outcome.rows = [
        RowVerdict(described["name"], row_id, Status.UNSUPPORTED, expected, error=reason)
        for described in run.describe()
        for row_id, expected in described["rows"]
    ]
    return outcome


def merge_repeats(repeats: list[list[Outcome]]) -> list[Outcome]:
    """One outcome per combination from N repetitions (`--repeat N`). A row whose status
    was not the same every time is `flaky` (never a pass): it keeps its first non-passing
    verdict's error and lists every repetition's status in `diagnostics.repeats`.
    Combination errors of every repetition are kept (once each)."""
    if len(repeats) == 1:
        return repeats[0]
    by_key: dict[tuple[str, Combination], list[Outcome]] = {}
    for ran in repeats:
        for outcome in ran:
            by_key.setdefault((outcome.suite, outcome.combination), []).append(outcome)
    merged: list[Outcome] = []
    for tries in by_key.values():
        first = tries[0]
        outcome = Outcome(first.suite, first.combination, not_run=first.not_run)
        outcome.skipped_rows = first.skipped_rows
        outcome.seconds = sum(t.seconds for t in tries)
        for attempt in tries:
            for error in attempt.errors:
                if error not in outcome.errors:
                    outcome.errors.append(error)
        verdicts: dict[tuple[str, str], list[RowVerdict]] = {}
        for attempt in tries:
            for row in attempt.rows:
                verdicts.setdefault((row.set, row.id), []).append(row)
        for rows in verdicts.values():
            statuses = [str(r.status) for r in rows] + ["missing"] * (len(tries) - len(rows))
            if len(set(statuses)) == 1:
                outcome.rows.append(rows[0])
                continue
            chosen = next((r for r in rows if r.status != Status.PASSED), rows[0])
            if chosen.status == Status.PASSED:  # passed whenever it ran, missing otherwise
                chosen.error = "no verdict in some repetitions"
            chosen.diagnostics["repeats"] = statuses
            chosen.error = f"flaky ({', '.join(statuses)}): {chosen.error or chosen.status}"
            chosen.status = Status.FLAKY
            outcome.rows.append(chosen)
        merged.append(outcome)
    return merged


def _restricted(run: SuiteRun, ids: list[str]) -> SuiteRun | None:
    """The suite run with only the rows `ids`: file rows from trimmed copies of its
    files (its other suites' own rows are trimmed from the outcome); None when its
    files are not known."""
    selection = Selection(scenarios=tuple(exact(i) for i in ids))
    suite = SUITES[run.name]()
    if not DECLARATIONS[run.name].file_rows:
        return SuiteRun(run.name, run.sets, selection, run.tags, None, run.paths)
    if not run.paths:
        return None
    files = SelectedFiles()
    used = files.select(list(run.paths), selection)
    if not used:
        files.close()
        return None
    return SuiteRun(
        run.name, suite.load_sets(used), selection, row_tags(list(run.paths)), files, run.paths
    )


def _recheck(session: Session, outcomes: list[Outcome]) -> bool:
    """Run every combination with an unexpected failed row again, alone and with only
    those rows, `options.recheck` times: a row that passes in any of them is flaky
    (failed, then passed: never a pass), one that fails every time stays failed with
    each re-run's verdict in `diagnostics.recheck`. Rows known-failures.json expects
    to fail are not re-run. True when interrupted."""
    options, ctx, adapters = session.options, session.ctx, session.adapters
    runs = {run.name: run for run in options.suites}
    targets: list[Planned] = []
    made: list[SuiteRun] = []
    failing: dict[tuple[str, Combination], list[RowVerdict]] = {}
    for outcome in outcomes:
        failed = [r for r in outcome.rows if r.status == Status.FAILED]
        failed = [r for r in failed if not _expected(options, outcome, r)]
        run = runs.get(outcome.suite)
        if not failed or run is None:
            continue
        sub = _restricted(run, sorted({r.id for r in failed}))
        if sub is None:
            continue
        made.append(sub)
        suite: Suite[Any] = SUITES[outcome.suite]()
        failing[(outcome.suite, outcome.combination)] = failed
        targets += [Planned(suite, sub, job) for job in suite.plan([outcome.combination], adapters)]
    ctx.capture = True  # the re-runs go through recording relays: wire evidence
    try:
        for _ in range(options.recheck):
            if not targets:
                break
            ran: list[Outcome] = []
            quiet = Progress(sum(len(p.job.combinations) for p in targets), quiet=True)
            if _run_jobs(session, targets, quiet, ran):
                return True
            for again in ran:
                runs[again.suite].trim(again)
                _absorb(again, failing.get((again.suite, again.combination), []), session.paths)
            still = {
                k for k, rows in failing.items() if any(r.status == Status.FAILED for r in rows)
            }
            targets = [p for p in targets if (p.run.name, p.job.combinations[0]) in still]
        return False
    finally:
        ctx.capture = False
        for sub in made:
            if sub.files is not None:
                sub.files.close()


def _absorb(again: Outcome, rows: list[RowVerdict], paths: ReportPaths) -> None:
    """Note one re-run's verdicts on the failed rows it re-ran: each gets the re-run's
    capture and its verdict in `diagnostics.recheck`; a row that passed now is flaky,
    one that failed again takes the classes (and the record against the capture) the
    re-run's rules judged on its capture."""
    verdicts = {(r.set, r.id): r for r in again.rows}
    for row in rows:
        found = bundles.capture_of(paths.logs / again.combination.key, row.set)
        if found is not None:  # the re-run's recording relays
            row.diagnostics["capture"] = str(found.relative_to(paths.logs.parent))
        now = verdicts.get((row.set, row.id))
        said = str(now.status) if now is not None else "missing"
        if now is not None and now.error:
            said += f": {now.error}"
        row.diagnostics.setdefault("recheck", []).append(said)
        if now is not None and now.status == Status.PASSED:
            row.status = Status.FLAKY
            row.error = f"flaky: failed ({row.error}), then passed when run again alone"
        elif now is not None and now.diagnostics.get("classes"):
            # the re-run's rules, judged on its capture, place the failure
            row.diagnostics["classes"] = now.diagnostics["classes"]
            if "wire" in now.diagnostics:  # the record against the capture
                row.diagnostics["wire"] = now.diagnostics["wire"]


def _expected(options: MatrixOptions, outcome: Outcome, row: RowVerdict) -> bool:
    """Whether known-failures.json lists the row (it is expected to fail)."""
    if options.known is None:
        return False
    c = outcome.combination
    fields = {"suite": outcome.suite, "client": c.client, "server": c.server}
    fields |= {"transport": c.transport, "auth": c.auth}
    return options.known.match(row_path(fields, row.set, row.id)) is not None


def _job_failure(suite: str, job: Job, message: str) -> list[Outcome]:
    return [
        Outcome(suite, c, errors=[CombinationError("harness", "HarnessError", message)])
        for c in job.combinations
    ]


def check_output(output: Path) -> ReportPaths:
    """The report's files, or a UsageError when the folder cannot hold them."""
    paths = ReportPaths.for_output(output)
    for parent in output.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"--output {output}: {parent} is a file, not a folder")
            break
    if output.is_dir():
        raise UsageError(
            f"--output {output} is a folder: name the report file, e.g. {output}/report.json"
        )
    for path in (paths.json, paths.xml, paths.html, paths.timings):
        _replaceable(output, path)
    try:  # before the run, not after it: a report that cannot be written loses the run
        output.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=output.parent, prefix=".ahp-write-check-"):
            pass
    except OSError as exc:
        raise UsageError(
            f"--output {output}: cannot write in {output.parent} ({exc.strerror or exc}); "
            "name a report file in a folder you can write"
        ) from None
    return paths


def _replaceable(output: Path, path: Path) -> None:
    """A report file may replace only a regular file, and the JSON report only a report
    of this harness: never a device, a FIFO, a socket, a link or someone's own file
    (as root, `--output /dev/null` once replaced the device with a file)."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"--output {output}: {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
        raise UsageError(f"--output {output}: {path} exists and is {kind}; name a new report file")
    if path == output and not _a_report(path):
        raise UsageError(
            f"--output {output}: {path} exists and is not a report of this harness; "
            "name a new report file or move it away"
        )


def _a_report(path: Path) -> bool:
    """Whether the file reads as a report this harness wrote (its `reportVersion`)."""
    try:
        text = path.read_bytes()
    except OSError:
        return False
    return not text or (text.lstrip().startswith(b"{") and b'"reportVersion":' in text)


@dataclass(frozen=True)
class Session:
    """What every job of one matrix run shares, from its first job to its last recheck:
    the options, the adapters, the run's context (trust, processes, cancellation) and
    report paths, the schedule (`timeline`: each job's suite, combinations, cost, share,
    start and end, in the order they started) and when the run began (`started`,
    monotonic seconds, from which the schedule's starts and ends count)."""

    options: MatrixOptions
    adapters: dict[str, Adapter]
    ctx: RunContext
    paths: ReportPaths
    started: float
    timeline: list[dict[str, Any]] = field(default_factory=list)


def run_matrix(options: MatrixOptions, adapters: dict[str, Adapter]) -> int:
    """Run the suites of `options` over their grid and write the reports. Everything the
    options refuse is refused before any adapter starts; the report is written however
    the run ends (marked incomplete when interrupted). Returns 130 when interrupted, 1
    on a failed or flaky combination, a known-failures problem or (unsharded) no
    applicable combination run, else 0."""
    _check_profiles(options, adapters)
    _check_spec(options, adapters)
    paths = check_output(options.output)
    meta = _meta(options, adapters)  # before the jobs: the revision is the one that ran
    outcomes, planned = _plan(options, adapters)
    planned, outcomes, shard_record = _shard_part(options, planned, outcomes)
    progress = Progress(
        options.repeat * sum(len(p.job.combinations) for p in planned), options.quiet
    )
    started = time.monotonic()
    paths.prepare_logs()
    with interrupts.handled():
        with run_context(
            logs=paths.logs,
            auth=options.auth,
            profile=options.profile,
            timeouts=options.timeouts,
            server_reuse=options.server_reuse,
            spec_schemas=spec_schemas(options.spec) if options.spec is not None else None,
        ) as ctx:
            session = Session(options, adapters, ctx, paths, started)
            try:
                interrupted = _run_all(session, planned, progress, outcomes)
            finally:
                progress.stop()
            interrupts.hold()  # from here on a signal waits until the report is written
        document, known_problems = _document(session, outcomes, meta, shard_record, interrupted)
        _write(session, document, outcomes, known_problems)
        late = interrupts.arrived() and not interrupted
    if late:
        print("a signal came after every result was in: the report is complete", file=sys.stderr)
    return _exit_code(options, document, interrupted, known_problems)


def _check_profiles(options: MatrixOptions, adapters: dict[str, Adapter]) -> None:
    """Refuse (UsageError) an adapter of the run whose manifest does not declare the
    run's trust profile."""
    for name in dict.fromkeys([*options.clients, *options.servers]):
        adapter = adapters[name]
        if options.profile not in adapter.profiles:
            hint = "" if options.profile == "compat" else "; try --profile compat"
            raise UsageError(
                f"adapter {name!r} does not support the {options.profile!r} trust profile "
                f"(its manifest declares {', '.join(adapter.profiles)}){hint}"
            )


def _check_spec(options: MatrixOptions, adapters: dict[str, Adapter]) -> None:
    """Refuse a `--spec` without schemas before anything starts; without `--spec`, warn
    that the contract v1 adapters of the run get this project's schemas."""
    if options.spec is not None:
        spec_schemas(options.spec)  # refused before anything starts
        return
    v1 = sorted(n for n in {*options.clients, *options.servers} if not adapters[n].blind)
    if v1:
        print(
            f"warning: no --spec: the contract v1 adapter(s) {', '.join(v1)} get this "
            "project's schemas (schemas/draft, also as AHP_SCHEMA_DIR), which differ from "
            "the spec's in places (content references, elicitation items, definition "
            "names): an SDK built for the spec may reject valid traffic, or accept what "
            "the spec refuses. Pass --spec PATH (a checkout of agent-hooks-protocol) to "
            "hand them the spec's own schemas, as upstream drivers do.",
            file=sys.stderr,
        )


def _plan(
    options: MatrixOptions, adapters: dict[str, Adapter]
) -> tuple[list[Outcome], list[Planned]]:
    """Every suite over the grid: the outcomes decided without running (inapplicable,
    with the suite's reason; unsupported, where a manifest leaves the suite, role or
    auth mode out), and the jobs of the applicable combinations as each suite plans
    them, longest first across suites (a stable sort keeps each suite's own order on
    ties)."""
    combinations = expand(options.clients, options.servers, options.transports, options.auth)
    outcomes: list[Outcome] = []
    planned: list[Planned] = []
    for run in options.suites:
        suite: Suite[Any] = SUITES[run.name]()
        rows = run.row_count()
        applicable: list[Combination] = []
        for combination in combinations:
            reason = suite.applicability(combination, adapters)
            lacking = _lacking(run.name, combination, adapters)
            if reason is not None:
                outcomes.append(
                    Outcome(run.name, combination, inapplicable=reason, skipped_rows=rows)
                )
            elif lacking is not None:
                outcomes.append(_unsupported(run, combination, lacking))
            else:
                applicable.append(combination)
        planned += [Planned(suite, run, job) for job in suite.plan(applicable, adapters)]
    # longest first across suites (a stable sort keeps each suite's own order on ties)
    planned.sort(key=lambda p: -p.job.cost)
    return outcomes, planned


def _shard_part(
    options: MatrixOptions, planned: list[Planned], outcomes: list[Outcome]
) -> tuple[list[Planned], list[Outcome], dict[str, Any] | None]:
    """With `--shard K/N`, this shard's part of the grid (interop/shard.py): its jobs,
    its outcomes decided without running, and the report's `shard` record; without,
    all of them and no record."""
    if options.shard is None:
        return planned, outcomes, None
    index, count = options.shard
    jobs = [
        ([shard.grid_key(p.run.name, c) for c in p.job.combinations], p.job.cost) for p in planned
    ]
    inapplicable = [shard.grid_key(o.suite, o.combination) for o in outcomes]
    mine = shard.shard_plan(jobs, inapplicable, index, count)
    grid = [key for keys, _ in jobs for key in keys] + inapplicable
    shard_record = shard.shard_meta(index, count, grid)
    planned = [p for p in planned if shard.grid_key(p.run.name, p.job.combinations[0]) in mine]
    outcomes = [o for o in outcomes if shard.grid_key(o.suite, o.combination) in mine]
    return planned, outcomes, shard_record


def _run_all(
    session: Session, planned: list[Planned], progress: Progress, outcomes: list[Outcome]
) -> bool:
    """Run the planned jobs `--repeat` times (merged by `merge_repeats`), then recheck
    the unexpected failures (`--recheck`), appending the outcomes to `outcomes`; True
    when interrupted (what ran until then is kept, the rest never starts)."""
    repeats: list[list[Outcome]] = []
    interrupted = False
    for _ in range(session.options.repeat):
        ran: list[Outcome] = []
        interrupted = _run_jobs(session, planned, progress, ran)
        repeats.append(ran)
        if interrupted:
            break
    outcomes += merge_repeats(repeats)
    if not interrupted and session.options.recheck:
        interrupted = _recheck(session, outcomes)
    return interrupted


def _document(
    session: Session,
    outcomes: list[Outcome],
    meta: dict[str, Any],
    shard_record: dict[str, Any] | None,
    interrupted: bool,
) -> tuple[dict[str, Any], list[str]]:
    """The report document: the outcomes, each trimmed to its suite's selected rows, with
    the shard's record, known-failures.json applied (its patterns that match nothing
    are problems only when the run covered the whole grid, unsharded and complete) and
    the coverage; with those known-failures problems."""
    options = session.options
    runs = {run.name: run for run in options.suites}
    for outcome in outcomes:
        runs[outcome.suite].trim(outcome)
    document = build_document(
        outcomes,
        meta,
        [d for run in options.suites for d in run.describe()],
        incomplete=interrupted,
        full=options.full_report,
    )
    if shard_record is not None:
        document["shard"] = shard_record
    known_problems: list[str] = []
    if options.known is not None:
        complete = options.whole_grid and options.shard is None and not interrupted
        document, known_problems = apply_known(document, options.known, complete=complete)
    document["coverage"] = coverage(document, ROOT)
    return document, known_problems


def _write(
    session: Session, document: dict[str, Any], outcomes: list[Outcome], known_problems: list[str]
) -> None:
    """Write the report files (the JSON, JUnit, HTML and timings, redacted) and the repro
    bundles, then print the summary, the bundles left out, the coverage, the slow
    sides (a warning, never a verdict) and the known-failures problems."""
    options, ctx, paths = session.options, session.ctx, session.paths
    chosen, unbundled = bundles.assign(document, paths.logs)
    timings = build_timings(
        outcomes,
        time.monotonic() - session.started,
        ctx.registry.started,
        session.timeline,
        _cpu(ctx.registry.cpu),
    )
    timings.update(slow.slow_sides(outcomes))
    written = write_reports(paths, document, timings, ctx.redactor)
    bundles.write(document, chosen, paths.logs, session.adapters, options.spec, ctx.redactor)
    _print_summary(document, written, time.monotonic() - session.started, options.quiet, paths)
    if unbundled and not options.quiet:
        print(
            f"{unbundled} failed rows got no repro bundle (at most {bundles.LIMIT} per run)",
            file=sys.stderr,
        )
    if not options.quiet:
        for line in coverage_lines(document["coverage"]):
            print(line, file=sys.stderr)
    for line in slow.warning_lines(timings["slowSides"]):  # a warning, never a verdict
        print(line, file=sys.stderr)
    origin = options.known.path.name if options.known is not None else ""
    for problem in known_problems:
        print(f"known failures ({origin}): {problem}", file=sys.stderr)


def _exit_code(
    options: MatrixOptions, document: dict[str, Any], interrupted: bool, known_problems: list[str]
) -> int:
    """130 when interrupted; 1 on a failed or flaky combination or a known-failures
    problem, or when an unsharded run tested nothing (no combination passed, was
    unsupported or failed as known); else 0."""
    if interrupted:
        return 130
    counts = document["summary"]["combinations"]
    if counts[Status.FAILED] or counts.get(Status.FLAKY) or known_problems:
        return 1
    if options.shard is None and not any(
        counts[s] for s in (Status.PASSED, Status.UNSUPPORTED, Status.KNOWN_FAILING)
    ):
        print("error: no applicable combination ran: nothing was tested", file=sys.stderr)
        return 1
    return 0


def _cpu(adapters: dict[str, dict[str, float]]) -> dict[str, Any]:
    """CPU seconds so far: the harness's own (every thread), and each adapter's by role
    as its processes exited."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "harness": round(usage.ru_utime + usage.ru_stime, 2),
        "adapters": {
            name: {role: round(seconds, 2) for role, seconds in sorted(roles.items())}
            for name, roles in sorted(adapters.items())
        },
    }


@dataclass(frozen=True)
class Planned:
    """One job of one suite, as scheduled."""

    suite: Suite[Any]
    run: SuiteRun
    job: Job


class Slots:
    """`--jobs` CPU slots, handed out in the jobs' order (longest first): a job waits
    until its suite's share (`Declaration.cpu_share`) is free and every job planned before
    it has started, so a computing job is never overtaken by lighter ones."""

    def __init__(self, total: float) -> None:
        self._free = total
        self._next = 0  # the ticket whose turn it is
        self._open = False
        self._turn = threading.Condition()

    def take(self, ticket: int, share: float) -> None:
        with self._turn:
            while not self._open and (ticket != self._next or self._free < share - 1e-9):
                self._turn.wait()
            self._free -= share
            self._next = max(self._next, ticket + 1)
            self._turn.notify_all()

    def give(self, share: float) -> None:
        with self._turn:
            self._free += share
            self._turn.notify_all()

    def open(self) -> None:
        """The run was interrupted: every waiting job starts at once (and, seeing the
        run cancelled, reports its combinations not run), some never to be started."""
        with self._turn:
            self._open = True
            self._turn.notify_all()


def _share(suite: str, jobs: int) -> float:
    return min(max(DECLARATIONS[suite].cpu_share, 0.05), float(jobs))


def _run_jobs(
    session: Session, planned: list[Planned], progress: Progress, outcomes: list[Outcome]
) -> bool:
    """Run every job; True when interrupted. Outcomes are appended as jobs finish, and
    each job's start and end (seconds since `session.started`) to `session.timeline`,
    in the order they started."""
    options = session.options
    shares = [_share(item.run.name, options.jobs) for item in planned]
    workers = max(1, math.ceil(options.jobs / min(shares, default=1.0)))
    jobs = _Pass(
        session,
        planned,
        progress,
        outcomes,
        Slots(options.jobs),
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="job"),
    )
    try:
        pending = {
            jobs.executor.submit(jobs.held, ticket, item, share): item
            for ticket, (item, share) in enumerate(zip(planned, shares, strict=True))
        }
        jobs.collect(pending)
        return False
    except KeyboardInterrupt:
        jobs.interrupted()
        return True
    finally:
        jobs.slots.open()  # a job whose turn never comes (cancelled) holds no one up
        jobs.executor.shutdown(wait=True, cancel_futures=True)


@dataclass
class _Pass:
    """One pass of `_run_jobs` over its planned jobs: the CPU slots they take in turn,
    the worker threads that run them, the progress they report to and the outcomes
    collected (appended as jobs finish)."""

    session: Session
    planned: list[Planned]
    progress: Progress
    outcomes: list[Outcome]
    slots: Slots
    executor: ThreadPoolExecutor

    def held(self, ticket: int, item: Planned, share: float) -> list[Outcome]:
        """Run one job once its slots are free and its turn has come, its start and end
        in the timeline; a contract v1 adapter's wire is judged by the spec's schemas."""
        session, ctx = self.session, self.session.ctx
        self.slots.take(ticket, share)
        entry = {
            "suite": item.run.name,
            "combinations": [c.key for c in item.job.combinations],
            "cost": item.job.cost,
            "share": share,
            "start": round(time.monotonic() - session.started, 3),
        }
        session.timeline.append(entry)
        names = {n for c in item.job.combinations for n in (c.client, c.server)}
        v1 = ctx.spec_schemas is not None and any(not session.adapters[n].blind for n in names)
        try:
            # a contract v1 adapter's wire is judged by the spec's schemas, as upstream's
            with judged_by(ctx.spec_schemas if v1 else None):
                return item.suite.run(
                    item.job, ctx, item.run.sets, session.adapters, self.progress.report
                )
        finally:
            entry["end"] = round(time.monotonic() - session.started, 3)
            self.slots.give(share)

    def collect(self, pending: dict[Future[list[Outcome]], Planned]) -> None:
        """Wait for every job, with a heartbeat while none finishes; a job that raised
        fails each of its combinations as HarnessError, its traceback in harness.log."""
        paths = self.session.paths
        while pending:
            done, _ = wait(pending, timeout=HEARTBEAT / 3, return_when=FIRST_COMPLETED)
            self.progress.heartbeat()
            for future in done:
                item = pending.pop(future)
                try:
                    self.outcomes.extend(future.result())
                except Exception as exc:
                    paths.harness_log(traceback.format_exc())
                    failed = _job_failure(
                        item.run.name,
                        item.job,
                        f"{type(exc).__name__}: {exc} (traceback in {paths.logs.name}/harness.log)",
                    )
                    for outcome in failed:
                        self.progress.report(outcome)
                    self.outcomes.extend(failed)

    def interrupted(self) -> None:
        """Stop at a signal: nothing may interrupt the cleanup or the report from here.
        Every adapter process is killed and every waiting job let go (each, seeing the
        run cancelled, reports its combinations not run); the outcomes reported until
        then are kept, and every combination without one is `not-run`."""
        ctx = self.session.ctx
        interrupts.hold()  # nothing may interrupt the cleanup or the report
        ctx.cancelled.set()
        self.slots.open()
        finished = self.progress.close()
        print("\ninterrupted: stopping every adapter process", file=sys.stderr, flush=True)
        ctx.registry.kill_all()
        self.executor.shutdown(wait=True, cancel_futures=True)
        known = {(o.suite, o.combination) for o in self.outcomes}
        self.outcomes.extend(o for o in finished if (o.suite, o.combination) not in known)
        known |= {(o.suite, o.combination) for o in finished}
        for item in self.planned:
            for combination in item.job.combinations:
                if (item.run.name, combination) not in known:
                    self.outcomes.append(
                        Outcome(
                            item.run.name,
                            combination,
                            not_run="the run was interrupted before this combination finished",
                            skipped_rows=item.run.row_count(),
                        )
                    )


def _print_summary(
    document: dict[str, Any], written: list[Path], seconds: float, quiet: bool, paths: ReportPaths
) -> None:
    out = sys.stderr
    for line in failure_summary(document, paths.json.parent):
        print(line, file=out)
    combos = document["summary"]["combinations"]
    rows = document["summary"]["rows"]

    def fmt(counts: dict[str, int]) -> str:
        return ", ".join(f"{v} {k}" for k, v in counts.items())

    def brief(counts: dict[str, int]) -> str:
        return ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "none"

    suites = document["summary"]["suites"]
    if len(suites) > 1:
        for name, counts in suites.items():
            print(
                f"{name}: combinations {brief(counts['combinations'])}; "
                f"rows {brief(counts['rows'])}",
                file=out,
            )
    print(f"combinations: {fmt(combos)}", file=out)
    print(f"scenario rows: {fmt(rows)}", file=out)
    skipped = {k: v for k, v in document["summary"]["rowsNotJudged"].items() if v}
    if skipped:
        print(f"rows not judged: {fmt(skipped)}", file=out)
    if document["incomplete"]:
        print("the run was interrupted: the report is marked incomplete", file=out)
    if not quiet:
        others = ", ".join(p.name for p in written[1:])
        print(f"report: {written[0]} (+ {others}) in {seconds:.1f}s", file=out)
