"""The compaction suite: the before and after boundaries of a compaction as two chains.

Each combination is a job of its own: per scenario set, a fresh server (over
HTTP started here, over stdio started by the client) and one client process,
the host, that runs every row itself (docs/COMPACTION.md). Stdio runs with
auth none only; rows restricted to one transport are inapplicable on the
other with their reason; an adapter without the lifecycle commands is
unsupported.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import Outcome, RowVerdict, Status
from interop.runtime.context import RunContext
from interop.suites.base import Job
from interop.suites.compaction.scenarios import CompactionSet, CompactionSets, load_sets
from interop.suites.compaction.verify import verify_set
from interop.suites.steps import (
    COMMANDS,
    one_job_each,
    refusing_port,
    run_sets,
    run_step_client,
    stdio_auth_none,
    stop_server,
)

Done = Callable[[Outcome], None]
RECEIPTS = "lifecycle-control.schema.json#/$defs/receipts"


class CompactionSuite:
    name = "compaction"
    cpu_share = 0.5
    command_keys: tuple[str, ...] = COMMANDS

    def default_sets(self, root: Path) -> list[Path]:
        return [root / "scenarios" / "compaction.json"]

    def load_sets(self, paths: list[Path]) -> CompactionSets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        return stdio_auth_none(combination)

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        return one_job_each(combinations, adapters)

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: CompactionSets,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        def run_set(
            outcome: Outcome, combination: Combination, scenario_set: CompactionSet
        ) -> None:
            self._run_set(ctx, outcome, combination, scenario_set, adapters)

        return run_sets(self.name, job, ctx, sets, adapters, run_set, done)

    def _run_set(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: CompactionSet,
        adapters: dict[str, Adapter],
    ) -> None:
        """One set's client run against a fresh server, judged into `outcome`."""
        client = adapters[combination.client]
        transport = combination.transport
        home = ctx.unique(f"compaction-{scenario_set.name}")
        rows = scenario_set.for_transport(transport)
        extra: dict[str, Any] = {"suite": "compaction", "childPidFile": str(home / "child.json")}
        refusing = refusing_port() if transport == "http" else None
        if refusing is None:
            extra["backends"] = {"unreachable": {"command": [str(home / "no-such-backend")]}}
        else:
            port = refusing.getsockname()[1]
            extra["backends"] = {"unreachable": {"endpoint": f"http://127.0.0.1:{port}/intercept"}}
        try:
            step = run_step_client(
                ctx,
                combination,
                adapters,
                suite="compaction",
                set_name=scenario_set.name,
                server_file=scenario_set.write(home / "server.json", transport, blind=True),
                client_file=scenario_set.write(home / "client.json", transport, blind=client.blind),
                extra=extra,
                client_schema="compaction-client-config.schema.json",
                receipts_schema=RECEIPTS,
            )
        finally:
            if refusing is not None:
                refusing.close()
        judged, set_errors = verify_set(
            scenario_set.name,
            rows,
            report=step.report,
            entries=step.entries,
            client_exit=step.exit_code(client.blind),
            language=client.language,
            stage=f"client[{scenario_set.name}]",
            prior_errors=step.errors,
        )
        outcome.rows += judged
        outcome.rows += [
            RowVerdict(
                scenario_set.name,
                r.id,
                Status.INAPPLICABLE,
                r.expected,
                error=r.inapplicable_reason,
            )
            for r in scenario_set.scenarios
            if transport not in r.transports
        ]
        outcome.errors += set_errors
        stop_server(ctx, outcome, combination, step, scenario_set.name)
