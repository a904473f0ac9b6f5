"""Runs one suite over the grid: trust, scheduling, progress, reports, cleanup."""

from __future__ import annotations

import hashlib
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop import ROOT, process
from interop.adapters import Adapter
from interop.grid import expand
from interop.issuer import Issuer
from interop.redact import Redactor
from interop.report import build_document, build_timings, write_reports
from interop.runtime import RunContext, Timeouts
from interop.scenarios import ScenarioSet
from interop.suites import SUITES
from interop.suites.base import Job, Outcome
from interop.trust import Trust
from interop.verify import CombinationError


class UsageError(ValueError):
    """The command line asks for something that cannot run."""


@dataclass
class MatrixOptions:
    suite: str
    clients: list[str]
    servers: list[str]
    transports: list[str]
    auth: list[str]
    sets: list[ScenarioSet]
    jobs: int
    timeouts: Timeouts
    output: Path
    profile: str
    quiet: bool = False
    server_reuse: bool = True


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return path.name


def _meta(options: MatrixOptions, adapters: dict[str, Adapter]) -> dict[str, Any]:
    return {
        "suite": options.suite,
        "profile": options.profile,
        "sets": [
            {
                "name": s.name,
                "file": _relative(s.path),
                "sha256": hashlib.sha256(s.path.read_bytes()).hexdigest(),
                "scenarios": len(s.scenarios),
            }
            for s in options.sets
        ],
        "adapters": {
            name: {"language": adapters[name].language, "blind": adapters[name].blind}
            for name in sorted(set(options.clients) | set(options.servers))
        },
    }


class Progress:
    def __init__(self, total: int, quiet: bool) -> None:
        self.total = total
        self.done = 0
        self.quiet = quiet
        self._lock = threading.Lock()

    def report(self, outcome: Outcome) -> None:
        with self._lock:
            self.done += 1
            if self.quiet:
                return
            passed = sum(r.status == "passed" for r in outcome.rows)
            line = (
                f"[{self.done:>3}/{self.total}] {outcome.suite} {outcome.combination.label()}: "
                f"{outcome.status} {passed}/{len(outcome.rows)} ({outcome.seconds:.1f}s)"
            )
            print(line, file=sys.stderr, flush=True)


def _job_failure(suite: str, job: Job, message: str) -> list[Outcome]:
    return [
        Outcome(suite, c, errors=[CombinationError("harness", "HarnessError", message)])
        for c in job.combinations
    ]


@contextmanager
def run_context(
    *, logs: Path, auth: list[str], profile: str, timeouts: Timeouts, server_reuse: bool = True
) -> Iterator[RunContext]:
    """One run's shared state: temp dir, trust, issuer, process registry, signals.

    SIGTERM and SIGHUP are turned into KeyboardInterrupt for the duration, so
    every way a run can be stopped kills the adapters and deletes the trust
    material. Everything this opens is closed on the way out.
    """
    process.become_subreaper()
    redactor = Redactor()
    registry = process.Registry()
    redactor.add_path(str(ROOT), "<repo>")
    logs.mkdir(parents=True, exist_ok=True)
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    for sig in previous:
        signal.signal(sig, signal.default_int_handler)
    try:
        with ExitStack() as stack:
            work = Path(tempfile.mkdtemp(prefix="ahp-run-"))
            redactor.add_path(str(work), "<run>")
            stack.callback(shutil.rmtree, work, True)
            trust = Trust.create(redactor, parent=work)
            stack.callback(trust.destroy)
            stack.callback(registry.kill_all)
            if "oauth" in auth:
                stack.enter_context(Issuer(trust, profile))
            yield RunContext(
                work=work,
                logs=logs,
                trust=trust,
                redactor=redactor,
                registry=registry,
                profile=profile,
                timeouts=timeouts,
                server_reuse=server_reuse,
            )
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_matrix(options: MatrixOptions, adapters: dict[str, Adapter]) -> int:
    for name in (*options.clients, *options.servers):
        adapter = adapters[name]
        if options.profile not in adapter.profiles:
            raise UsageError(
                f"adapter {name!r} does not support the {options.profile!r} trust profile "
                f"(it declares {', '.join(adapter.profiles)}); try --profile compat"
            )
    suite = SUITES[options.suite]()
    combinations = expand(options.clients, options.servers, options.transports, options.auth)
    started = time.monotonic()
    outcomes: list[Outcome] = [
        Outcome(options.suite, c, inapplicable_rows=sum(len(s.scenarios) for s in options.sets))
        for c in combinations
        if not c.applicable
    ]
    jobs = suite.plan(combinations, adapters)
    progress = Progress(sum(len(j.combinations) for j in jobs), options.quiet)
    logs = options.output.parent / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    interrupted = False
    with run_context(
        logs=logs,
        auth=options.auth,
        profile=options.profile,
        timeouts=options.timeouts,
        server_reuse=options.server_reuse,
    ) as ctx:
        executor = ThreadPoolExecutor(max_workers=max(1, options.jobs), thread_name_prefix="job")
        pending: dict[Future[list[Outcome]], Job] = {
            executor.submit(suite.run, job, ctx, options.sets, adapters): job for job in jobs
        }
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    job = pending.pop(future)
                    try:
                        results = future.result()
                    except Exception as exc:
                        results = _job_failure(options.suite, job, f"{type(exc).__name__}: {exc}")
                    for outcome in results:
                        progress.report(outcome)
                    outcomes.extend(results)
        except KeyboardInterrupt:
            interrupted = True
            ctx.cancelled.set()
            print("\ninterrupted: stopping every adapter process", file=sys.stderr, flush=True)
            ctx.registry.kill_all()
            executor.shutdown(wait=True, cancel_futures=True)
            for future, job in pending.items():
                if future.done() and not future.cancelled() and future.exception() is None:
                    outcomes.extend(future.result())
                else:
                    outcomes.extend(
                        _job_failure(options.suite, job, "interrupted before it finished")
                    )
        finally:
            executor.shutdown(wait=True, cancel_futures=True)
    redactor = ctx.redactor
    document = build_document(outcomes, _meta(options, adapters))
    timings = build_timings(outcomes, time.monotonic() - started)
    written = write_reports(options.output, document, timings, redactor)
    _print_summary(document, written, time.monotonic() - started, options.quiet)
    if interrupted:
        return 130
    failed = document["summary"]["combinations"]["failed"]
    return 1 if failed else 0


def _print_summary(
    document: dict[str, Any], written: list[Path], seconds: float, quiet: bool
) -> None:
    combos = document["summary"]["combinations"]
    rows = document["summary"]["scenarios"]
    out = sys.stderr
    for combination in document["combinations"]:
        if combination["status"] != "failed":
            continue
        print(
            f"FAILED {combination['suite']} {combination['client']} -> {combination['server']} "
            f"[{combination['transport']}/{combination['auth']}]",
            file=out,
        )
        for error in combination["errors"][:3]:
            print(f"  {error['stage']}: {error['class']}: {error['message']}", file=out)
        failing = [r for r in combination["results"] if r["status"] == "failed"]
        if not combination["errors"]:
            for row in failing[:5]:
                print(f"  {row['set']}/{row['id']}: {row.get('error')}", file=out)
            if len(failing) > 5:
                print(f"  ... and {len(failing) - 5} more rows", file=out)

    def fmt(counts: dict[str, int]) -> str:
        return ", ".join(f"{v} {k}" for k, v in counts.items())

    print(f"combinations: {fmt(combos)}", file=out)
    print(f"scenario rows: {fmt(rows)}", file=out)
    if not quiet:
        print(
            f"report: {written[0]} (+ .xml, .html, timings.json, logs/) in {seconds:.1f}s", file=out
        )
