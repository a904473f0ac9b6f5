"""One run of a step-driven client against a fresh server: what the suites past core share.

Over HTTP the harness starts the suite's server (`lifecycleServer`) and hands
the client its endpoint and control endpoint; over stdio the client starts
the server itself and reports the receipts it read from it. The caller judges
the run, may probe the running server, then stops it with `stop_server`.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime.capture import Relays
from interop.runtime.client import ClientRun, run_client, stdio_server
from interop.runtime.context import RunContext
from interop.runtime.receipts import stdio_frames
from interop.runtime.server import Server, ServerStartError
from interop.suites.base import Job
from interop.suites.wire import Contradiction, mark_rows, read_against_wire, stdio_contradictions

# The upload listener's credential, and a stranger's (refused), handed to clients by name.
UPLOAD_TOKEN_ENV = "AHP_INTEROP_UPLOAD_TOKEN"
UNAUTHORIZED_TOKEN_ENV = "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN"
Ready = Callable[[Server, Relays], "Path | None"]


@dataclass(frozen=True)
class UploadCredentials:
    """A set's upload token and a stranger's, made for the run and redacted from its
    output; `env` hands both to the client, `block()` is its config's upload block."""

    token: str
    stranger: str

    @property
    def env(self) -> dict[str, str]:
        return {UPLOAD_TOKEN_ENV: self.token, UNAUTHORIZED_TOKEN_ENV: self.stranger}

    def block(self) -> dict[str, Any]:
        """A fresh upload block (its `endpoint` is set once the server is up)."""
        return {
            "auth": {"type": "bearer", "tokenEnv": UPLOAD_TOKEN_ENV},
            "timeoutMs": 5000,
            "maxBytes": 1048576,
        }


def upload_credentials(ctx: RunContext) -> UploadCredentials:
    made = UploadCredentials(secrets.token_urlsafe(24), secrets.token_urlsafe(24))
    for secret in (made.token, made.stranger):
        ctx.redactor.add(secret)
    return made


@dataclass
class StepRun:
    run: ClientRun | None
    entries: Any
    errors: list[CombinationError] = field(default_factory=list)
    server: Server | None = None  # still running (HTTP): the caller stops it
    contradictions: list[Contradiction] = field(default_factory=list)  # a recheck's wire

    @property
    def report(self) -> Any:
        return self.run.report if self.run is not None else None

    def mark(self, rows: list[RowVerdict], transport: str) -> None:
        """A recheck's contradictions of the record by the wire, on the failed rows they
        concern (interop/suites/wire.py)."""
        mark_rows(rows, self.contradictions, transport=transport)

    def exit_code(self, blind: bool) -> int | None:
        """The client's exit status when it is judged (blind clients), else None."""
        return self.run.exit_code if self.run is not None and blind else None


@dataclass(frozen=True)
class StepSet:
    """One set's step run, as `run_step_client` was asked for it."""

    suite: str
    set_name: str
    server_file: Path
    client_file: Path
    extra: dict[str, Any]
    client_schema: str
    receipts_schema: str
    server_extra: dict[str, Any]
    env: dict[str, str] | None
    upload: dict[str, Any] | None
    request_ids: set[str] | None
    ready: Ready | None

    @property
    def stage(self) -> str:
        return f"client[{self.set_name}]"


def run_step_client(
    ctx: RunContext,
    combination: Combination,
    adapters: dict[str, Adapter],
    *,
    suite: str,
    set_name: str,
    server_file: Path,
    client_file: Path,
    extra: dict[str, Any],
    client_schema: str,
    receipts_schema: str,
    server_extra: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    upload: dict[str, Any] | None = None,
    request_ids: set[str] | None = None,
    ready: Ready | None = None,
) -> StepRun:
    """`upload`, when given, is the client config's upload block: over HTTP its
    `endpoint` is set from the server's readiness (a server without one fails to
    start); over stdio the client reads it from the readiness itself. `request_ids`
    are the ids the rows send (a recheck holds the record of those to the wire).
    `ready(server, relays)`, over HTTP, runs once the server is up and before the
    client starts: it may add to `extra` and return another client file."""
    spec = StepSet(
        suite, set_name, server_file, client_file, extra, client_schema, receipts_schema,
        {**(server_extra or {}), "suite": suite}, env, upload, request_ids, ready,
    )  # fmt: skip
    step = StepRun(run=None, entries=None)
    if combination.transport == "http":
        if not _http_run(ctx, combination, adapters, spec, step):
            return step  # the server never came up: no client ran
    else:
        _stdio_run(ctx, combination, adapters, spec, step)
    assert step.run is not None
    ctx.keep_log(step.run.log, f"{combination.key}/client-{set_name}.log")
    step.errors = step.run.errors + step.errors
    return step


def _started(
    ctx: RunContext, combination: Combination, adapter: Adapter, spec: StepSet, step: StepRun
) -> Server | None:
    """The set's HTTP server, started (kept in `step.server` to be stopped by the
    caller); None, with the error in `step.errors`, when it did not come up whole."""
    server = Server(
        ctx,
        adapter,
        "http",
        combination.auth,
        spec.server_file,
        command_key="lifecycleServer",
        extra=spec.server_extra,
    )
    step.server = server
    try:
        server.start()
    except ServerStartError as exc:
        step.errors.append(CombinationError("server-start", exc.error_class, str(exc)))
        return None
    if spec.upload is not None and server.upload_endpoint is None:
        message = f"a {spec.suite} server's readiness needs uploadEndpoint"
        step.errors.append(CombinationError("server-start", "ReadinessMalformed", message))
        return None
    return server


def _http_run(
    ctx: RunContext,
    combination: Combination,
    adapters: dict[str, Adapter],
    spec: StepSet,
    step: StepRun,
) -> bool:
    """The client against the server over HTTP, through the recording relays; the
    server's record read (and, on a recheck, held to the wire). False when the server
    never came up."""
    server = _started(ctx, combination, adapters[combination.server], spec, step)
    if server is None:
        return False
    upload = spec.upload
    relays = Relays(
        ctx,
        combination.auth,
        server.endpoint,
        server.control,
        server.upload_endpoint if upload is not None else None,
        upload_token(upload, spec.env),
    )
    if upload is not None:
        upload["endpoint"] = relays.upload
    client_file = spec.client_file
    if spec.ready is not None:
        client_file = spec.ready(server, relays) or client_file
    try:
        step.run = run_client(
            ctx,
            adapters[combination.client],
            stage=spec.stage,
            scenario_file=client_file,
            transport="http",
            auth=combination.auth,
            endpoint=relays.endpoint,
            command_key="lifecycleClient",
            extra={**spec.extra, "controlEndpoint": relays.control},
            env=spec.env,
            schema=spec.client_schema,
        )
    finally:
        step.entries, receipt_errors, step.contradictions = read_against_wire(
            ctx,
            relays,
            lambda: server.entries(spec.receipts_schema),
            combination.key,
            spec.set_name,
            spec.request_ids,
        )
    if receipt_errors and server.exit_description() is not None:
        receipt_errors = [
            CombinationError("server", "ServerExit", f"the server {server.exit_description()}")
        ]
    step.errors += receipt_errors
    return True


def _stdio_run(
    ctx: RunContext,
    combination: Combination,
    adapters: dict[str, Adapter],
    spec: StepSet,
    step: StepRun,
) -> None:
    """The client starting the server itself over stdio: the record is what the client
    reports it read (on a recheck, held to the lines the relay saw)."""
    keys, wire_log = stdio_server(
        ctx,
        adapters[combination.server],
        spec.server_file,
        command_key="lifecycleServer",
        extra=spec.server_extra,
    )
    step.run = run_client(
        ctx,
        adapters[combination.client],
        stage=spec.stage,
        scenario_file=spec.client_file,
        transport="stdio",
        auth="none",
        stdio_server=keys,
        command_key="lifecycleClient",
        extra=spec.extra,
        env=spec.env,
        schema=spec.client_schema,
    )
    step.entries = reported_entries(step.run.report)
    if ctx.capture:
        frames = keep_stdio_frames(ctx, combination.key, spec.set_name, wire_log)
        step.contradictions = stdio_contradictions(step.entries, frames)


def upload_token(upload: dict[str, Any] | None, env: dict[str, str] | None) -> str | None:
    """The upload listener's own token: the variable the client config's upload block names."""
    auth = (upload or {}).get("auth") or {}
    return (env or {}).get(str(auth.get("tokenEnv")))


def keep_stdio_frames(ctx: RunContext, key: str, set_name: str, wire_log: Path) -> list[Any]:
    """A stdio recheck's lines both ways, kept as `<key>/capture-<set>.json`."""
    frames = stdio_frames(wire_log)
    path = wire_log.with_name("frames.json")
    path.write_text(json.dumps(frames, indent=1))
    ctx.keep_log(path, f"{key}/capture-{set_name}.json")
    return frames


class Stoppable(Protocol):
    """A set's server: ours (`Server`) or a contract v1 receiver (`v1fixture.Fixture`)."""

    log: Path
    leaks: list[str]

    def stop(self) -> None: ...


def reported_entries(report: Any) -> Any:
    """The receipt entries a client reports over stdio (it read them from the server
    it started), or None."""
    receipts = report.get("receipts") if isinstance(report, dict) else None
    return receipts.get("entries") if isinstance(receipts, dict) else None


def stop_server(
    ctx: RunContext, outcome: Outcome, combination: Combination, step: StepRun, set_name: str
) -> None:
    """Stop the run's HTTP server, keep its log, and name any process it left behind."""
    if step.server is not None:
        stop_and_keep(ctx, outcome, combination, step.server, set_name)


def stop_and_keep(
    ctx: RunContext, outcome: Outcome, combination: Combination, server: Stoppable, set_name: str
) -> None:
    """Stop a set's server, keep its log, and name any process it left behind."""
    server.stop()
    ctx.keep_log(server.log, f"{combination.key}/server-{set_name}.log")
    if server.leaks:
        outcome.errors.append(
            CombinationError(
                "server-stop",
                "ProcessLeak",
                f"left running by the server: {len(server.leaks)} process(es)",
            )
        )


STDIO_AUTH = "stdio relies on process trust: it runs with auth none only"
# the step engine's commands, by upstream's names
STEP_COMMANDS = ("lifecycleClient", "lifecycleServer")


def stdio_auth_none(combination: Combination) -> str | None:
    """The applicability of every step suite: stdio runs with auth none only."""
    if combination.transport == "stdio" and combination.auth != "none":
        return STDIO_AUTH
    return None


def one_job_each(combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
    """A job per combination, costliest first (client and server weights)."""
    jobs = [Job([c], adapters[c.client].weight + adapters[c.server].weight) for c in combinations]
    return sorted(jobs, key=lambda job: -job.cost)


def unprobed(
    combination: Combination,
    missing: list[str],
    probed: bool,
    skipped: Callable[[Status, str], list[RowVerdict]],
    *,
    over_http: str,
    never: str,
) -> list[RowVerdict]:
    """A step suite's receiver-probe rows when its probes did not run (`skipped(status,
    reason)` makes them): unsupported for the missing commands, inapplicable over stdio
    (`over_http`), not run when no set left a server to probe (`never`); [] when they ran."""
    if missing:
        return skipped(Status.UNSUPPORTED, "; ".join(missing))
    if combination.transport != "http":
        return skipped(Status.INAPPLICABLE, over_http)
    if not probed:
        return skipped(Status.NOT_RUN, never)
    return []


def row_set(scenario_set: Any, row_id: str) -> str:
    """The set a row belongs to: its own set's name in a merged run (`MergeableSet`)."""
    origin = getattr(scenario_set, "origin", None)
    return str(origin(row_id)) if origin is not None else str(scenario_set.name)


def run_sets(
    suite: str,
    job: Job,
    ctx: RunContext,
    sets: Iterable[Any],
    adapters: dict[str, Adapter],
    run_set: Callable[[Outcome, Combination, Any], None],
    done: Callable[[Outcome], None] | None = None,
    *,
    by_convention: Callable[[Adapter], bool] = lambda _adapter: False,
    finish: Callable[[Outcome, list[str]], None] | None = None,
) -> list[Outcome]:
    """One combination's run of a step suite: `run_set(outcome, combination, set)` per
    scenario set (a merged run's rows each under their own set); every row unsupported
    when an adapter lacks the step commands (unless the suite runs that adapter
    `by_convention`, e.g. a contract v1 SDK's own non-core adapter); an interrupt stops
    before the next set. `finish(outcome, missing)` ends the combination's run (e.g.
    its receiver probes' rows), told which commands were missing."""
    combination = job.combinations[0]
    outcome = Outcome(suite, combination)
    started = time.monotonic()
    missing = [
        f"{name} has no {key!r} command"
        for name, key in zip((combination.client, combination.server), STEP_COMMANDS, strict=True)
        if adapters[name].command(key) is None and not by_convention(adapters[name])
    ]
    for scenario_set in sets:
        if missing:
            outcome.rows += [
                RowVerdict(
                    row_set(scenario_set, s.id),
                    s.id,
                    Status.UNSUPPORTED,
                    s.expected,
                    error="; ".join(missing),
                )
                for s in scenario_set.scenarios
            ]
            continue
        if ctx.cancelled.is_set():
            outcome.errors.append(CombinationError("run", "Cancelled", "the run was interrupted"))
            break
        run_set(outcome, combination, scenario_set)
    if finish is not None:
        finish(outcome, missing)
    outcome.seconds = time.monotonic() - started
    if done is not None:
        done(outcome)
    return [outcome]


# A set's run that ended in one of these may have been cut short by one row (a v1
# adapter crashing on a project row): its rows run again alone (`run_v1_set`).
CRASHES = frozenset({"ReportMissing", "ClientExit", "ServerExit", "ReceiptsUnavailable"})
ISOLATION_PROBES = 3  # rows run alone before a crash that every one shares stops it
RunSet = Callable[[Outcome, Any, bool], bool]  # (outcome, set, probed) -> probed


def contract_v1(combination: Combination, adapters: dict[str, Adapter]) -> bool:
    """Whether a contract v1 adapter (not ours: not blind) takes part in a combination."""
    return not all(adapters[n].blind for n in (combination.client, combination.server))


def run_v1_set(
    ctx: RunContext,
    outcome: Outcome,
    scenario_set: Any,
    run_set: RunSet,
    probed: bool,
    *,
    extension: Callable[[Any], str | None],
    runs_here: Callable[[Any], bool] = lambda _row: True,
    together: Callable[[list[Any]], list[list[Any]]] | None = None,
) -> bool:
    """One set with a contract v1 adapter in the combination. The rows that need a
    project extension (`extension(row)` names it) are unsupported and never run; the
    others run as one set (`run_set`), and when that run crashes (no report, an exit,
    receipts gone) each of them that `runs_here` runs again alone (or with the rows it
    depends on: `together` groups them), so a crash fails only the row that causes
    it, and says so. Returns whether the receivers have been probed."""
    rows = list(scenario_set.scenarios)
    runnable = [row for row in rows if extension(row) is None]
    outcome.rows += [
        RowVerdict(
            scenario_set.origin(row.id),
            row.id,
            Status.UNSUPPORTED,
            row.expected,
            error=f"needs {extension(row)}",
        )
        for row in rows
        if extension(row) is not None
    ]
    if not runnable:
        return probed
    subset = scenario_set.subset(runnable) if len(runnable) < len(rows) else scenario_set
    trial = Outcome(outcome.suite, outcome.combination)
    probed = run_set(trial, subset, probed)
    crashes = sorted({e.error_class for e in trial.errors} & CRASHES)
    alone_rows = [row for row in runnable if runs_here(row)]
    if not crashes or len(alone_rows) < 2 or ctx.cancelled.is_set():
        outcome.rows += trial.rows
        outcome.errors += trial.errors
        return probed
    cause = "; ".join(f"{e.error_class}: {e.message}" for e in trial.errors)[:300]
    ids = {row.id for row in alone_rows}
    kept = [r for r in trial.rows if r.id not in ids]  # rows not run again keep their verdict
    outcome.rows += kept
    if any(r.status == Status.FAILED for r in kept):
        outcome.errors += trial.errors
    state = _Isolation(ctx, outcome, subset, run_set, probed, cause)
    units = together(alone_rows) if together is not None else [[row] for row in alone_rows]
    first = units[:ISOLATION_PROBES]
    crashed = sum(state.judge([unit]) for unit in first)
    rest = units[len(first) :]
    if crashed == len(first) == ISOLATION_PROBES:
        # the first rows crash alone as well: the cause is not one row, and the set's
        # run stands for the rest (a few runs, not one per row)
        left = {row.id for unit in rest for row in unit}
        outcome.rows += [r for r in trial.rows if r.id in left]
        outcome.errors += trial.errors
    elif rest:
        state.bisect(rest)
    return state.probed


class _Isolation:
    """Rows of a crashed set run again in halves: a half that runs without a crash is
    judged as it ran; a crashing half is split again, down to single rows (the crash
    then fails that row alone). One crashing row of n costs about 2 log2(n) runs."""

    def __init__(
        self,
        ctx: RunContext,
        outcome: Outcome,
        subset: Any,
        run_set: RunSet,
        probed: bool,
        cause: str,
    ) -> None:
        self.ctx, self.outcome, self.subset, self.run_set = ctx, outcome, subset, run_set
        self.probed, self.cause = probed, cause

    def judge(self, units: list[list[Any]]) -> bool:
        """Run these units' rows as a set; keep their verdicts unless the run crashed and
        they are several units (then the caller splits them). True when it crashed."""
        subset_rows = [row for unit in units for row in unit]
        if self.ctx.cancelled.is_set():
            self.outcome.errors.append(
                CombinationError("run", "Cancelled", "the run was interrupted")
            )
            return False
        part = Outcome(self.outcome.suite, self.outcome.combination)
        suffix = f".{subset_rows[0].id}" + (
            f"+{len(subset_rows) - 1}" if len(subset_rows) > 1 else ""
        )
        self.probed = self.run_set(part, self.subset.subset(subset_rows, suffix), self.probed)
        crashed = bool({e.error_class for e in part.errors} & CRASHES)
        if crashed and len(units) > 1:
            return True
        ids = {row.id for row in subset_rows}
        for verdict in part.rows:
            if verdict.id not in ids:
                continue
            verdict.diagnostics["runAlone"] = f"its set's run failed ({self.cause}); run again " + (
                "alone" if len(subset_rows) == 1 else f"with {len(subset_rows) - 1} others"
            )
            if verdict.status == Status.FAILED and part.errors and len(units) == 1:
                verdict.error = (
                    "run alone: " if len(subset_rows) == 1 else "run with the rows it needs: "
                ) + "; ".join(f"{e.error_class}: {e.message}" for e in part.errors)[:400]
        self.outcome.rows += part.rows
        self.outcome.errors += [e for e in part.errors if e.error_class not in CRASHES]
        return crashed

    def bisect(self, units: list[list[Any]]) -> None:
        if self.judge(units) and len(units) > 1:
            middle = len(units) // 2
            self.bisect(units[:middle])
            self.bisect(units[middle:])
