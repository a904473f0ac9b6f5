"""The core suite: intercept application, every scenario row, every combination.

HTTP combinations that share a server adapter and an auth mode form one job:
the server starts once and its receipts are reset between client runs when
the adapter declares `serverReuse` (otherwise a fresh server per run). Each
stdio combination is its own job: the client spawns the server itself, and the
server's receipts arrive through its receipt log before each reply is written.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from interop.adapters import Adapter
from interop.control import ControlError
from interop.grid import Combination
from interop.runtime import (
    ClientRun,
    RunContext,
    Server,
    ServerStartError,
    read_receipt_log,
    run_client,
    stdio_server,
)
from interop.scenarios import ScenarioSet
from interop.suites.base import Job, Outcome
from interop.verify import CombinationError, verify_set

# Relative start-up and per-row cost, for longest-first scheduling only.
_LANGUAGE_WEIGHT = {"python": 1.5, "typescript": 1.0}


class CoreSuite:
    name = "core"

    def __init__(self) -> None:
        self._blind: dict[tuple[str, str], Path] = {}

    def default_sets(self, root: Path) -> list[Path]:
        return [
            root / "scenarios" / "core.json",
            root / "scenarios" / "upstream" / "scenarios.json",
        ]

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        groups: dict[tuple[str, str, str], list[Combination]] = defaultdict(list)
        jobs: list[Job] = []
        for combination in combinations:
            if not combination.applicable:
                continue
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
        return sum(
            _LANGUAGE_WEIGHT.get(adapters[c.client].language, 2.0)
            + _LANGUAGE_WEIGHT.get(adapters[c.server].language, 2.0) * (c.transport == "stdio")
            for c in combinations
        )

    def _scenario_file(self, ctx: RunContext, scenario_set: ScenarioSet, blind: bool) -> Path:
        """The file an adapter receives: the blind copy unless a v1 client needs answers."""
        if not blind:
            return scenario_set.path
        key = (scenario_set.name, str(scenario_set.path))
        if key not in self._blind:
            self._blind[key] = scenario_set.write_blind(
                ctx.unique(f"set-{scenario_set.name}") / "blind.json"
            )
        return self._blind[key]

    def run(
        self, job: Job, ctx: RunContext, sets: list[ScenarioSet], adapters: dict[str, Adapter]
    ) -> list[Outcome]:
        first = job.combinations[0]
        if first.transport == "stdio":
            return [self._run_stdio(first, ctx, sets, adapters)]
        return self._run_http(job, ctx, sets, adapters)

    # -- HTTP -------------------------------------------------------------------

    def _run_http(
        self, job: Job, ctx: RunContext, sets: list[ScenarioSet], adapters: dict[str, Adapter]
    ) -> list[Outcome]:
        first = job.combinations[0]
        server_adapter = adapters[first.server]
        outcomes: list[Outcome] = []
        shared: Server | None = None
        shared_error: CombinationError | None = None
        if server_adapter.server_reuse and ctx.server_reuse:
            shared = Server(
                ctx, server_adapter, "http", first.auth, self._scenario_file(ctx, sets[0], True)
            )
            shared_error = self._start(shared)
        for combination in job.combinations:
            outcome = Outcome(self.name, combination)
            started = time.monotonic()
            for scenario_set in sets:
                if ctx.cancelled.is_set():
                    outcome.errors.append(
                        CombinationError("run", "Cancelled", "the run was interrupted")
                    )
                    break
                server = shared
                start_error = shared_error
                if server is None:
                    server = Server(
                        ctx,
                        server_adapter,
                        "http",
                        combination.auth,
                        self._scenario_file(ctx, scenario_set, True),
                    )
                    start_error = self._start(server)
                elif start_error is None:
                    try:
                        server.reset(self._scenario_file(ctx, scenario_set, True))
                    except ControlError as exc:
                        start_error = CombinationError("server-reset", "ResetFailed", str(exc))
                self._client_over_http(
                    ctx, outcome, combination, scenario_set, adapters, server, start_error
                )
                if shared is None:
                    server.stop()
                    self._leaks(outcome, server)
                    ctx.keep_log(server.log, f"{combination.key}/server-{scenario_set.name}.log")
            outcome.seconds = time.monotonic() - started
            outcomes.append(outcome)
        if shared is not None:
            shared.stop()
            for outcome in outcomes:
                self._leaks(outcome, shared)
            ctx.keep_log(shared.log, f"servers/{first.server}--http--{first.auth}.log")
        return outcomes

    @staticmethod
    def _start(server: Server) -> CombinationError | None:
        try:
            server.start()
        except ServerStartError as exc:
            return CombinationError("server-start", exc.error_class, str(exc))
        except OSError as exc:
            return CombinationError(
                "server-start", "ServerSpawn", f"cannot start server: {exc.strerror}"
            )
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
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: ScenarioSet,
        adapters: dict[str, Adapter],
        server: Server,
        start_error: CombinationError | None,
    ) -> None:
        client = adapters[combination.client]
        stage = f"client[{scenario_set.name}]"
        if start_error is not None:
            self._record(outcome, scenario_set, client, stage, None, None, [start_error])
            return
        offset = server.receipt_offset()
        run = run_client(
            ctx,
            client,
            stage=stage,
            scenario_file=self._scenario_file(ctx, scenario_set, client.blind),
            transport="http",
            auth=combination.auth,
            endpoint=server.endpoint,
        )
        receipts, receipt_errors = server.receipts(offset)
        ctx.keep_log(run.log, f"{combination.key}/client-{scenario_set.name}.log")
        self._record(outcome, scenario_set, client, stage, run, receipts, receipt_errors)

    @staticmethod
    def _record(
        outcome: Outcome,
        scenario_set: ScenarioSet,
        client: Adapter,
        stage: str,
        run: ClientRun | None,
        receipts: list[Any] | None,
        errors: list[CombinationError],
    ) -> None:
        """Verify one client run (or a run that never happened) into the outcome."""
        verdict = verify_set(
            scenario_set,
            report=run.report if run else None,
            receipts=receipts,
            client_exit=run.exit_code if run else None,
            language=client.language,
            blind=client.blind,
            stage=stage,
            prior_errors=(run.errors if run else []) + errors,
        )
        outcome.rows.extend(verdict.rows)
        outcome.errors.extend(verdict.errors)

    # -- stdio ------------------------------------------------------------------

    def _run_stdio(
        self,
        combination: Combination,
        ctx: RunContext,
        sets: list[ScenarioSet],
        adapters: dict[str, Adapter],
    ) -> Outcome:
        client = adapters[combination.client]
        server = adapters[combination.server]
        outcome = Outcome(self.name, combination)
        started = time.monotonic()
        for scenario_set in sets:
            stage = f"client[{scenario_set.name}]"
            stdio_keys, receipt_log = stdio_server(
                ctx, server, self._scenario_file(ctx, scenario_set, True)
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
            ctx.keep_log(run.log, f"{combination.key}/client-{scenario_set.name}.log")
            self._record(outcome, scenario_set, client, stage, run, receipts, problems)
        outcome.seconds = time.monotonic() - started
        return outcome
