"""The core suite: intercept application, every scenario row, every combination.

HTTP combinations that share a server adapter and an auth mode form one job:
the server starts once and its receipts are reset between client runs when
the adapter declares `serverReuse` (otherwise a fresh server per run). Each
stdio combination is its own job: the client spawns the server itself, and the
server's receipts arrive through its receipt log before each reply is written.
stdio runs without authentication (process trust), so its other auth modes
are inapplicable.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import CombinationError, Outcome
from interop.runtime.capture import Relays
from interop.runtime.client import ClientRun, run_client, stdio_server
from interop.runtime.context import RunContext
from interop.runtime.control import ControlError
from interop.runtime.receipts import (
    own_receipt_problems,
    read_receipt_log,
    read_replies,
    replies_beside,
    server_receipts,
    snapshot_beside,
)
from interop.runtime.server import Server, ServerStartError
from interop.suites.base import Done, Job
from interop.suites.core.scenarios import CoreSets, ScenarioSet, load_sets
from interop.suites.core.verify import verify_set

STDIO_AUTH = "stdio relies on process trust: it runs with auth none only"


@dataclass
class _HttpJob:
    """One HTTP job as it runs: its context, adapters, scenario runs and server adapter;
    the server its combinations share when the adapter declares `serverReuse` (None: a
    fresh server per run), that server's start error, and why it can no longer serve
    (`gone`: it exited during a combination, so the job's later ones are not run)."""

    ctx: RunContext
    adapters: dict[str, Adapter]
    runs: list[ScenarioSet]
    server_adapter: Adapter
    shared: Server | None = None
    shared_error: CombinationError | None = None
    gone: str | None = None


class CoreSuite:
    name = "core"

    def __init__(self) -> None:
        self._files: dict[tuple[str, str, bool], Path] = {}

    def load_sets(self, paths: list[Path]) -> CoreSets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        if combination.transport == "stdio" and combination.auth != "none":
            return STDIO_AUTH
        return None

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        groups: dict[tuple[str, str, str], list[Combination]] = defaultdict(list)
        jobs: list[Job] = []
        for combination in combinations:
            if combination.transport == "http":
                groups[(combination.server, combination.transport, combination.auth)].append(
                    combination
                )
            else:
                jobs.append(Job([combination], self._cost([combination], adapters)))
        jobs.extend(Job(group, self._cost(group, adapters)) for group in groups.values())
        return sorted(jobs, key=lambda job: -job.cost)

    @staticmethod
    def _cost(combinations: list[Combination], adapters: dict[str, Adapter]) -> float:
        """Relative run time, for longest-first scheduling only (manifest weights)."""
        return sum(
            adapters[c.client].weight + adapters[c.server].weight * (c.transport == "stdio")
            for c in combinations
        )

    def _scenario_file(self, ctx: RunContext, scenario_set: ScenarioSet, blind: bool) -> Path:
        """The file an adapter receives: the blind copy for our adapters, the whole file
        for a contract v1 one, as upstream hands it: a v1 client compares its own
        answers, and a v1 server reads `expectError` to send a scripted invalid
        response (a merged run's files are written once, like the blind copies)."""
        merged = bool(scenario_set.origins)
        if not blind and not merged:
            return scenario_set.path
        key = (scenario_set.name, str(scenario_set.path), blind)
        if key not in self._files:
            folder = ctx.unique(f"set-{scenario_set.name}")
            self._files[key] = (
                scenario_set.write_blind(folder / "blind.json")
                if blind
                else scenario_set.write_full(folder / "full.json")
            )
        return self._files[key]

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: CoreSets,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        report = done or (lambda _outcome: None)
        first = job.combinations[0]
        if first.transport == "stdio":
            outcome = self._run_stdio(first, ctx, sets, adapters)
            report(outcome)
            return [outcome]
        return self._run_http(job, ctx, sets, adapters, report)

    # -- HTTP -------------------------------------------------------------------

    def _run_http(
        self,
        job: Job,
        ctx: RunContext,
        sets: CoreSets,
        adapters: dict[str, Adapter],
        done: Done,
    ) -> list[Outcome]:
        """The job's combinations in order, `done` called as each finishes; one not
        started (the run interrupted, the shared server gone) is not run."""
        first = job.combinations[0]
        http = self._http_job(ctx, first, sets.runs(), adapters)
        outcomes: list[Outcome] = []
        for combination in job.combinations:
            outcome = Outcome(self.name, combination)
            if ctx.cancelled.is_set():
                outcome.not_run = "the run was interrupted before this combination started"
            elif http.gone is not None:
                outcome.not_run = http.gone
            if outcome.not_run is not None:
                outcome.skipped_rows = sets.row_count()
            else:
                self._http_combination(http, outcome, combination)
            outcomes.append(outcome)
            done(outcome)  # a leak the shared server shows at its stop is added afterwards
        if http.shared is not None:
            http.shared.stop()
            for outcome in outcomes:
                self._leaks(outcome, http.shared)
            ctx.keep_log(http.shared.log, f"servers/{first.server}--http--{first.auth}.log")
        return outcomes

    def _http_job(
        self,
        ctx: RunContext,
        first: Combination,
        runs: list[ScenarioSet],
        adapters: dict[str, Adapter],
    ) -> _HttpJob:
        """The job's state, its one server started (on the first run's file) when the
        adapter declares `serverReuse` and the run allows it."""
        server_adapter = adapters[first.server]
        http = _HttpJob(ctx, adapters, runs, server_adapter)
        if server_adapter.server_reuse and ctx.server_reuse:
            http.shared = Server(
                ctx,
                server_adapter,
                "http",
                first.auth,
                self._scenario_file(ctx, runs[0], server_adapter.blind),
            )
            http.shared_error = self._start(http.shared)
        return http

    def _http_combination(self, http: _HttpJob, outcome: Outcome, combination: Combination) -> None:
        """Every scenario run of one combination, stopping when the run is interrupted
        or the shared server is gone."""
        started = time.monotonic()
        for scenario_set in http.runs:
            if http.ctx.cancelled.is_set():
                outcome.errors.append(
                    CombinationError("run", "Cancelled", "the run was interrupted")
                )
                break
            self._http_set(http, outcome, combination, scenario_set)
            if http.gone is not None:
                break
        outcome.seconds = time.monotonic() - started

    def _http_set(
        self, http: _HttpJob, outcome: Outcome, combination: Combination, scenario_set: ScenarioSet
    ) -> None:
        """One scenario run: the client against the shared server (reset to the run's
        file) or a fresh one (stopped after, its leaks and log kept); a shared server
        that exits while serving fails the combination and is gone for the rest."""
        ctx, shared = http.ctx, http.shared
        server, start_error = self._set_server(http, combination, scenario_set)
        self._client_over_http(http, outcome, combination, scenario_set, server, start_error)
        ended = server.ended() if shared is not None and http.shared_error is None else None
        if ended is not None:
            outcome.errors.append(
                CombinationError(
                    "server", "ServerExit", f"the server {ended} while serving this client"
                )
            )
            http.gone = f"the shared server {ended} during an earlier combination of its job"
        if shared is None:
            server.stop()
            self._leaks(outcome, server)
            ctx.keep_log(server.log, f"{combination.key}/server-{scenario_set.name}.log")

    def _set_server(
        self, http: _HttpJob, combination: Combination, scenario_set: ScenarioSet
    ) -> tuple[Server, CombinationError | None]:
        """The server a scenario run's client talks to, and why it cannot serve (None:
        it can): a fresh one started on the run's file, else the shared one reset to it
        (unless it never started)."""
        ctx, server_adapter = http.ctx, http.server_adapter
        if http.shared is None:
            server = Server(
                ctx,
                server_adapter,
                "http",
                combination.auth,
                self._scenario_file(ctx, scenario_set, server_adapter.blind),
            )
            return server, self._start(server)
        start_error = http.shared_error
        if start_error is None:
            try:
                http.shared.reset(self._scenario_file(ctx, scenario_set, server_adapter.blind))
            except ControlError as exc:
                start_error = self._server_problem(http.shared, "ResetFailed", str(exc))
        return http.shared, start_error

    @staticmethod
    def _server_problem(server: Server, error_class: str, message: str) -> CombinationError:
        """An error at the server, named by its cause when the process is gone."""
        ended = server.exit_description()
        if ended is not None:
            return CombinationError("server", "ServerExit", f"the server {ended}")
        return CombinationError("server", error_class, message)

    @staticmethod
    def _start(server: Server) -> CombinationError | None:
        try:
            server.start()
        except ServerStartError as exc:
            return CombinationError("server-start", exc.error_class, str(exc))
        return None

    @staticmethod
    def _leaks(outcome: Outcome, server: Server) -> None:
        if server.leaks:
            outcome.errors.append(
                CombinationError(
                    "server-stop",
                    "ProcessLeak",
                    f"left running by the server: {len(server.leaks)} process(es)",
                )
            )

    def _client_over_http(
        self,
        http: _HttpJob,
        outcome: Outcome,
        combination: Combination,
        scenario_set: ScenarioSet,
        server: Server,
        start_error: CombinationError | None,
    ) -> None:
        """One client run against `server` through a recording relay, judged into
        `outcome`; when the server cannot serve (`start_error`), no client runs and the
        rows are judged on that error."""
        ctx = http.ctx
        client = http.adapters[combination.client]
        stage = f"client[{scenario_set.name}]"
        if start_error is not None:
            self._record(outcome, scenario_set, client, stage, None, None, [start_error])
            return
        offset = server.receipt_offset()
        relays = Relays(ctx, combination.auth, server.endpoint, control="")
        try:  # a recheck: the client talks through the recording relay
            run = run_client(
                ctx,
                client,
                stage=stage,
                scenario_file=self._scenario_file(ctx, scenario_set, client.blind),
                transport="http",
                auth=combination.auth,
                endpoint=relays.endpoint,
            )
        finally:
            relays.stop()
        replies = relays.captures[0].replies() if relays.captures else None
        relays.keep(ctx, combination.key, scenario_set.name)
        receipts, receipt_errors = server.receipts(offset)
        outcome.shapes.update(server.shapes)
        if receipt_errors and server.exit_description() is not None:
            receipt_errors = [self._server_problem(server, "ReceiptsUnavailable", "")]
        ctx.keep_log(run.log, f"{combination.key}/client-{scenario_set.name}.log")
        self._record(
            outcome, scenario_set, client, stage, run, receipts, receipt_errors, replies=replies
        )

    @staticmethod
    def _record(
        outcome: Outcome,
        scenario_set: ScenarioSet,
        client: Adapter,
        stage: str,
        run: ClientRun | None,
        receipts: list[Any] | None,
        errors: list[CombinationError],
        *,
        replies: list[tuple[Any, Any]] | None = None,
    ) -> None:
        """Verify one client run (or a run that never happened) into the outcome;
        `replies`: what a relayed stdio server really answered."""
        verdict = verify_set(
            scenario_set,
            report=run.report if run else None,
            receipts=receipts,
            client_exit=run.exit_code if run else None,
            language=client.language,
            blind=client.blind,
            stage=stage,
            prior_errors=(run.errors if run else []) + errors,
            replies=replies,
        )
        outcome.rows.extend(verdict.rows)
        outcome.errors.extend(verdict.errors)

    # -- stdio ------------------------------------------------------------------

    def _run_stdio(
        self,
        combination: Combination,
        ctx: RunContext,
        sets: CoreSets,
        adapters: dict[str, Adapter],
    ) -> Outcome:
        client = adapters[combination.client]
        server = adapters[combination.server]
        outcome = Outcome(self.name, combination)
        if ctx.cancelled.is_set():
            outcome.not_run = "the run was interrupted before this combination started"
            outcome.skipped_rows = sets.row_count()
            return outcome
        started = time.monotonic()
        for scenario_set in sets.runs():
            if ctx.cancelled.is_set():
                outcome.errors.append(
                    CombinationError("run", "Cancelled", "the run was interrupted")
                )
                break
            stage = f"client[{scenario_set.name}]"
            stdio_keys, receipt_log = stdio_server(
                ctx, server, self._scenario_file(ctx, scenario_set, server.blind)
            )
            run = run_client(
                ctx,
                client,
                stage=stage,
                scenario_file=self._scenario_file(ctx, scenario_set, client.blind),
                transport="stdio",
                auth="none",
                stdio_server=stdio_keys,
            )
            receipts, problems = read_receipt_log(receipt_log, 0)
            relayed = ctx.capture or not server.receipt_log
            replies = read_replies(replies_beside(receipt_log)) if relayed else None
            if ctx.capture:  # the recheck's wire evidence
                ctx.keep_log(
                    replies_beside(receipt_log),
                    f"{combination.key}/capture-{scenario_set.name}.jsonl",
                )
            if replies is not None and not server.receipt_log:  # a v1 server's own receipts
                own, own_problems, shape = server_receipts(snapshot_beside(receipt_log))
                problems += own_problems
                if own is not None:
                    answered = {request_id for request_id, _ in replies}
                    problems += own_receipt_problems(own, receipts, answered)
                if shape is not None:
                    outcome.shapes["receipts"] = shape
            ctx.keep_log(run.log, f"{combination.key}/client-{scenario_set.name}.log")
            self._record(
                outcome, scenario_set, client, stage, run, receipts, problems, replies=replies
            )
        outcome.seconds = time.monotonic() - started
        return outcome
