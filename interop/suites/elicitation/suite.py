"""The elicitation suite: the receiver's checks of MCP elicitation events, and the
host's atomic effects at both elicitation boundaries.

Each combination is a job of its own: per scenario set, a fresh server (over
HTTP started here, over stdio started by the client) and one client process
that runs every row itself (docs/ELICITATION.md). Uploads go to the server's
plain-HTTP upload listener on both transports, with credentials made fresh
for every run. Stdio runs with auth none only; an adapter without the
lifecycle commands is unsupported.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import Outcome, RowVerdict, Status
from interop.runtime.context import RunContext
from interop.suites.base import Job
from interop.suites.elicitation.scenarios import ElicitationSet, ElicitationSets, load_sets
from interop.suites.elicitation.verify import verify_set
from interop.suites.steps import (
    COMMANDS,
    one_job_each,
    run_sets,
    run_step_client,
    stdio_auth_none,
    stop_server,
)

Done = Callable[[Outcome], None]
RECEIPTS = "elicitation-control.schema.json#/$defs/receipts"
UPLOAD_TOKEN_ENV = "AHP_INTEROP_UPLOAD_TOKEN"
UNAUTHORIZED_TOKEN_ENV = "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN"


class ElicitationSuite:
    name = "elicitation"
    cpu_share = 1.0
    command_keys: tuple[str, ...] = COMMANDS

    def default_sets(self, root: Path) -> list[Path]:
        return [root / "scenarios" / "elicitation.json"]

    def load_sets(self, paths: list[Path]) -> ElicitationSets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        return stdio_auth_none(combination)

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        return one_job_each(combinations, adapters)

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: ElicitationSets,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        def run_set(
            outcome: Outcome, combination: Combination, scenario_set: ElicitationSet
        ) -> None:
            self._run_set(ctx, outcome, combination, scenario_set, adapters)

        return run_sets(self.name, job, ctx, sets, adapters, run_set, done)

    def _run_set(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: ElicitationSet,
        adapters: dict[str, Adapter],
    ) -> None:
        """One set's client run against a fresh server, judged into `outcome`."""
        client = adapters[combination.client]
        transport = combination.transport
        home = ctx.unique(f"elicitation-{scenario_set.name}")
        rows = scenario_set.for_transport(transport)
        token, stranger = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        for secret in (token, stranger):
            ctx.redactor.add(secret)
        upload: dict[str, Any] = {
            "auth": {"type": "bearer", "tokenEnv": UPLOAD_TOKEN_ENV},
            "timeoutMs": 5000,
            "maxBytes": 1048576,
        }
        extra: dict[str, Any] = {
            "suite": "elicitation",
            "childPidFile": str(home / "child.json"),
            "upload": upload,
        }
        step = run_step_client(
            ctx,
            combination,
            adapters,
            suite="elicitation",
            set_name=scenario_set.name,
            server_file=scenario_set.write(home / "server.json", transport, server=True),
            client_file=scenario_set.write(
                home / "client.json", transport, server=False, blind=client.blind
            ),
            extra=extra,
            client_schema="elicitation-client-config.schema.json",
            receipts_schema=RECEIPTS,
            server_extra={"uploadAuth": {"token": token}},
            env={UPLOAD_TOKEN_ENV: token, UNAUTHORIZED_TOKEN_ENV: stranger},
            upload=upload,
        )
        judged, set_errors = verify_set(
            scenario_set.name,
            rows,
            transport=transport,
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
