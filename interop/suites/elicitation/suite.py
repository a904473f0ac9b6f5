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

from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime.client import run_client
from interop.runtime.context import RunContext
from interop.runtime.server import ServerStartError
from interop.suites.base import Done, Job
from interop.suites.elicitation import upstream
from interop.suites.elicitation.scenarios import ElicitationSet, ElicitationSets, load_sets
from interop.suites.elicitation.verify import verify_set
from interop.suites.steps import (
    one_job_each,
    run_sets,
    run_step_client,
    stdio_auth_none,
    stop_and_keep,
    stop_server,
    upload_credentials,
)
from interop.suites.v1fixture import is_v1

RECEIPTS = "elicitation-control.schema.json#/$defs/receipts"


class ElicitationSuite:
    name = "elicitation"

    def load_sets(self, paths: list[Path]) -> ElicitationSets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        sides = (adapters[combination.client], adapters[combination.server])
        v1 = any(is_v1(a) for a in sides)
        lacking = any(a.suites is not None and self.name not in a.suites for a in sides)
        if v1 and not lacking and (combination.transport, combination.auth) != ("http", "bearer"):
            return upstream.WIRE_ONLY
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

        # a contract v1 side runs through its own non-core adapter, not adapter.json
        return run_sets(self.name, job, ctx, sets, adapters, run_set, done, by_convention=is_v1)

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
        if is_v1(client) or is_v1(adapters[combination.server]):
            self._run_v1_set(ctx, outcome, combination, scenario_set, adapters)
            return
        transport = combination.transport
        home = ctx.unique(f"elicitation-{scenario_set.name}")
        rows = scenario_set.for_transport(transport)
        credentials = upload_credentials(ctx)
        upload = credentials.block()
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
            server_extra={"uploadAuth": {"token": credentials.token}},
            env=credentials.env,
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
        step.mark(judged, combination.transport)
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

    def _run_v1_set(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: ElicitationSet,
        adapters: dict[str, Adapter],
    ) -> None:
        """A set with a contract v1 side (docs/ELICITATION.md, "With a contract v1
        adapter"): its rows that side can run, over HTTP with a bearer token, the
        others unsupported with the reason."""
        client, server = adapters[combination.client], adapters[combination.server]
        runnable, skipped = [], []
        for row in scenario_set.for_transport("http"):
            reason = upstream.not_for_v1(row, client, server)
            if reason is None:
                runnable.append(row)
            else:
                skipped.append((row, reason))
        lacking = [
            found
            for side in ([client] if client is server else [client, server])
            if is_v1(side) and isinstance(found := upstream.command_of(side), str)
        ]
        if lacking:  # an SDK without an elicitation adapter does not implement the suite
            skipped = [(row, "; ".join(lacking)) for row in scenario_set.for_transport("http")]
            runnable = []
        upstream.unsupported_rows(outcome, scenario_set.name, skipped)
        outcome.rows += [
            RowVerdict(
                scenario_set.name,
                r.id,
                Status.INAPPLICABLE,
                r.expected,
                error=r.inapplicable_reason,
            )
            for r in scenario_set.scenarios
            if "http" not in r.transports
        ]
        if not runnable:
            return
        part = upstream.subset(scenario_set, runnable)
        home = ctx.unique(f"elicitation-{scenario_set.name}")
        credentials = upload_credentials(ctx)
        token, stranger = credentials.token, credentials.stranger
        stage = f"client[{scenario_set.name}]"
        report: Any = None
        entries: Any = None
        client_exit: int | None = None
        errors: list[CombinationError] = []
        try:
            receiver = upstream.start_server(
                ctx,
                server,
                scenario_set,
                combination.auth,
                part.write(home / "server.json", "http", server=True),
                token,
            )
        except ServerStartError as exc:
            errors.append(CombinationError("server-start", exc.error_class, str(exc)))
            receiver = None
        if receiver is not None:
            if is_v1(client):
                sent = upstream.run_sender(
                    ctx,
                    client,
                    receiver,
                    runnable,
                    combination.auth,
                    token,
                    stranger,
                    scenario_set.name,
                )
                report, errors = sent.report, sent.errors
            else:
                upload = {**credentials.block(), "endpoint": receiver.upload_endpoint}
                run = run_client(
                    ctx,
                    client,
                    stage=stage,
                    scenario_file=part.write(home / "client.json", "http", server=False),
                    transport="http",
                    auth=combination.auth,
                    endpoint=receiver.endpoint,
                    command_key="lifecycleClient",
                    extra={
                        "suite": "elicitation",
                        "childPidFile": str(home / "child.json"),
                        "upload": upload,
                        "controlEndpoint": receiver.control,
                    },
                    env=credentials.env,
                    schema="elicitation-client-config.schema.json",
                )
                ctx.keep_log(run.log, f"{combination.key}/client-{scenario_set.name}.log")
                report, errors, client_exit = run.report, list(run.errors), run.exit_code
            entries, receipt_errors = receiver.entries(RECEIPTS)
            errors += receipt_errors
            stop_and_keep(ctx, outcome, combination, receiver, scenario_set.name)
            if is_v1(server):
                outcome.shapes["receipts"] = upstream.RECEIPT_SHAPE
        judged, set_errors = verify_set(
            scenario_set.name,
            runnable,
            transport="http",
            report=report,
            entries=entries,
            client_exit=client_exit,
            language=client.language,
            stage=stage,
            prior_errors=errors,
            v1_receiver=is_v1(server),
        )
        outcome.rows += judged
        outcome.errors += set_errors
