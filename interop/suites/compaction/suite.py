"""The compaction suite: the before and after boundaries of a compaction as two chains.

Each combination is a job of its own: per scenario set, a fresh server (over
HTTP started here, over stdio started by the client) and one client process,
the host, that runs every row itself (docs/COMPACTION.md). Stdio runs with
auth none only; rows restricted to one transport are inapplicable on the
other with their reason; an adapter without the lifecycle commands is
unsupported. A contract v1 side is upstream's compaction-wire receiver, run by
its convention (suites/compaction/upstream.py).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime.client import ClientRun, run_client
from interop.runtime.context import RunContext, write_json
from interop.runtime.listener import refusing_port
from interop.runtime.server import Server, ServerStartError
from interop.suites.base import Done, Job
from interop.suites.compaction import host, upstream
from interop.suites.compaction.scenarios import (
    CompactionRow,
    CompactionSet,
    CompactionSets,
    load_sets,
)
from interop.suites.compaction.verify import verify_set
from interop.suites.steps import (
    one_job_each,
    reported_entries,
    run_sets,
    run_step_client,
    stdio_auth_none,
    stop_and_keep,
    stop_server,
)
from interop.suites.v1fixture import is_v1

RECEIPTS = "lifecycle-control.schema.json#/$defs/receipts"


class CompactionSuite:
    name = "compaction"

    def load_sets(self, paths: list[Path]) -> CompactionSets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        server, client = adapters[combination.server], adapters[combination.client]
        if combination.transport == "http" and combination.auth != "bearer":
            if is_v1(server) and not is_v1(client):
                return upstream.RECEIVER_ONLY_BEARER
            if is_v1(client) and not is_v1(server):
                return host.HOST_ONLY_BEARER
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

        # a contract v1 side runs through its own non-core adapter, not adapter.json
        return run_sets(self.name, job, ctx, sets, adapters, run_set, done, by_convention=is_v1)

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
        if scenario_set.host_plans:
            self._run_host_set(ctx, outcome, combination, scenario_set, adapters)
            return
        if is_v1(client) or is_v1(adapters[combination.server]):
            self._run_v1_set(ctx, outcome, combination, scenario_set, adapters)
            return
        home = ctx.unique(f"compaction-{scenario_set.name}")
        rows = scenario_set.for_transport(transport)
        extra: dict[str, Any] = {"suite": "compaction", "childPidFile": str(home / "child.json")}
        refusing = refusing_port() if transport == "http" else None
        extra["backends"] = _backends(home, refusing)
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
        step.mark(judged, combination.transport)
        outcome.rows += judged
        outcome.rows += _elsewhere(scenario_set, transport)
        outcome.errors += set_errors
        stop_server(ctx, outcome, combination, step, scenario_set.name)

    def _run_host_set(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: CompactionSet,
        adapters: dict[str, Adapter],
    ) -> None:
        """Upstream's case plans through a contract v1 host before our server
        (docs/COMPACTION.md, "A contract v1 host"; suites/compaction/host.py)."""
        client, server = adapters[combination.client], adapters[combination.server]
        rows = list(scenario_set.rows)
        status, reason = Status.UNSUPPORTED, None
        if not is_v1(client):
            status, reason = Status.INAPPLICABLE, host.NOT_A_V1_HOST
        elif is_v1(server):
            reason = host.BOTH_V1
        elif isinstance(found := upstream.command_of(client), str):
            reason = found  # an SDK without a compaction-wire adapter
        if reason is not None:
            outcome.rows += [
                RowVerdict(scenario_set.name, r.id, status, r.expected, error=reason) for r in rows
            ]
            return
        home = ctx.unique(f"compaction-{scenario_set.name}")
        server_file = write_json(
            home / "server.json",
            {"version": 1, "suite": "compaction", "scenarios": host.server_rows(rows)},
        )
        ours = Server(
            ctx,
            server,
            combination.transport,
            combination.auth,
            server_file,
            command_key="lifecycleServer",
            extra={"suite": "compaction"},
        )
        suppliers = [s["supplier"] for r in rows for b in ("before", "after") for s in r.raw[b]]
        credentials = {
            name: {"token": secrets.token_urlsafe(24), "uploadToken": secrets.token_urlsafe(24)}
            for name in suppliers
        }
        for pair in credentials.values():
            for secret in pair.values():
                ctx.redactor.add(secret)
        gate = host.Gate(ctx, ours, credentials, home)
        outputs: Any = None
        entries: Any = None
        errors: list[CombinationError] = []
        try:
            ours.start()
        except ServerStartError as exc:
            errors.append(CombinationError("server-start", exc.error_class, str(exc)))
        else:
            gate.start()
            plan = {
                "cases": host.plan_cases(rows),
                "schema": str(ctx.schema_dir(client)),
                "transport": combination.transport,
                "endpoint": gate.endpoint,
                "credentials": credentials,
                "receiverCommand": gate.receiver_command(),
            }
            outputs, errors = host.run_host(ctx, client, plan, home, scenario_set.name)
            entries, receipt_errors = ours.entries(RECEIPTS)
            errors += receipt_errors
        finally:
            gate.stop()
            stop_and_keep(ctx, outcome, combination, ours, scenario_set.name)
            ctx.keep_log(home / "client.log", f"{combination.key}/client-{scenario_set.name}.log")
        outcome.shapes["client"] = host.REPORT_SHAPE
        judged, set_errors = host.verify_host(
            scenario_set.name, rows, outputs, gate.calls, entries, errors
        )
        outcome.rows += judged
        outcome.errors += set_errors

    def _run_v1_set(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: CompactionSet,
        adapters: dict[str, Adapter],
    ) -> None:
        """A set with a contract v1 side (docs/COMPACTION.md, "With a contract v1
        adapter"): our host before a v1 receiver, the rows that receiver can play;
        everything else unsupported with the reason."""
        client, server = adapters[combination.client], adapters[combination.server]
        transport = combination.transport
        rows = scenario_set.for_transport(transport)
        outcome.rows += _elsewhere(scenario_set, transport)
        whole: str | None = None
        if is_v1(client):
            whole = upstream.HOST_OWN_CASES
        elif isinstance(found := upstream.command_of(server), str):
            whole = found  # an SDK without a compaction-wire adapter
        skipped = [(r, whole or upstream.not_for_v1(r)) for r in rows]
        outcome.rows += [
            RowVerdict(scenario_set.name, r.id, Status.UNSUPPORTED, r.expected, error=reason)
            for r, reason in skipped
            if reason is not None
        ]
        runnable: list[CompactionRow] = [r for r, reason in skipped if reason is None]
        if not runnable:
            return
        home = ctx.unique(f"compaction-{scenario_set.name}")
        client_file = upstream.subset(scenario_set, runnable).write(
            home / "client.json", transport, blind=client.blind
        )
        scopes = upstream.scopes_of(runnable)
        if transport == "http":
            report, entries, errors, answers = self._run_v1_http(
                ctx, outcome, combination, adapters, scopes, client_file, home, scenario_set.name
            )
        else:
            report, entries, errors, answers = self._run_v1_stdio(
                ctx, combination, adapters, scopes, client_file, home, scenario_set.name
            )
        outcome.shapes["receipts"] = upstream.RECEIPT_SHAPE
        judged, set_errors = verify_set(
            scenario_set.name,
            runnable,
            report=report,
            entries=entries,
            client_exit=None,
            language=client.language,
            stage=f"client[{scenario_set.name}]",
            prior_errors=errors,
            notifications=False,  # a v1 receiver takes none
        )
        for verdict in judged:  # wire evidence: what the receiver answered each call
            if verdict.status == Status.FAILED:
                row = next(r for r in runnable if r.id == verdict.id)
                ids = (
                    [row.negative.get("id")]
                    if row.negative
                    else [row.boundary_id(b) for b in ("before", "after")]
                )
                said = [f"{i} {a}" for i in ids for a in answers.get(str(i), [])]
                verdict.diagnostics["receiverAnswers"] = said or ["no call reached it"]
        outcome.rows += judged
        outcome.errors += set_errors

    def _run_v1_http(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        adapters: dict[str, Adapter],
        scopes: dict[tuple[str, int], dict[str, Any]],
        client_file: Path,
        home: Path,
        set_name: str,
    ) -> tuple[Any, Any, list[CombinationError], dict[str, list[str]]]:
        """Our host before the v1 receiver over HTTP, through the scope forwarder."""
        receiver = upstream.V1Receiver(
            ctx, adapters[combination.server], scopes, ctx.trust.bearer_token
        )
        report: Any = None
        entries: Any = None
        errors: list[CombinationError] = []
        try:
            receiver.start()
        except ServerStartError as exc:
            errors.append(CombinationError("server-start", exc.error_class, str(exc)))
        else:
            refusing = refusing_port()
            try:
                run = _v1_client(
                    ctx,
                    combination,
                    adapters,
                    client_file,
                    home,
                    set_name,
                    backends=_backends(home, refusing),
                    endpoint=receiver.endpoint,
                    controlEndpoint=receiver.control,
                )
            finally:
                refusing.close()
            report, errors = run.report, list(run.errors)
            entries, receipt_errors = receiver.entries(RECEIPTS)
            errors += receipt_errors
        finally:
            stop_and_keep(ctx, outcome, combination, receiver, set_name)
        return report, entries, errors, receiver.answers

    def _run_v1_stdio(
        self,
        ctx: RunContext,
        combination: Combination,
        adapters: dict[str, Adapter],
        scopes: dict[tuple[str, int], dict[str, Any]],
        client_file: Path,
        home: Path,
        set_name: str,
    ) -> tuple[Any, Any, list[CombinationError], dict[str, list[str]]]:
        """Our host before the v1 receiver over stdio: the host starts the stdio
        bridge as its server, which spawns the receiver once per call."""
        server = adapters[combination.server]
        keys, answers_file = upstream.stdio_bridge_keys(ctx, server, scopes, home)
        run = _v1_client(
            ctx,
            combination,
            adapters,
            client_file,
            home,
            set_name,
            backends=_backends(home, None),
            stdio_server=keys,
        )
        entries = reported_entries(run.report)
        return run.report, entries, list(run.errors), upstream.read_answers(answers_file)


def _v1_client(
    ctx: RunContext,
    combination: Combination,
    adapters: dict[str, Adapter],
    client_file: Path,
    home: Path,
    set_name: str,
    *,
    backends: dict[str, Any],
    endpoint: str | None = None,
    stdio_server: dict[str, Any] | None = None,
    **extra: Any,
) -> ClientRun:
    """Our host's run of a set before a v1 receiver (an endpoint over HTTP, the stdio
    bridge's keys over stdio), its log kept."""
    run = run_client(
        ctx,
        adapters[combination.client],
        stage=f"client[{set_name}]",
        scenario_file=client_file,
        transport=combination.transport,
        auth=combination.auth,
        endpoint=endpoint,
        stdio_server=stdio_server,
        command_key="lifecycleClient",
        extra={
            "suite": "compaction",
            "childPidFile": str(home / "child.json"),
            "backends": backends,
            **extra,
        },
        schema="compaction-client-config.schema.json",
    )
    ctx.keep_log(run.log, f"{combination.key}/client-{set_name}.log")
    return run


def _backends(home: Path, refusing: Any) -> dict[str, Any]:
    """The reserved `unreachable` backend: a refused loopback port over HTTP, a
    command that does not exist over stdio."""
    if refusing is None:
        return {"unreachable": {"command": [str(home / "no-such-backend")]}}
    port = refusing.getsockname()[1]
    return {"unreachable": {"endpoint": f"http://127.0.0.1:{port}/intercept"}}


def _elsewhere(scenario_set: CompactionSet, transport: str) -> list[RowVerdict]:
    """The set's rows for another transport: inapplicable, with their reason."""
    return [
        RowVerdict(
            scenario_set.name, r.id, Status.INAPPLICABLE, r.expected, error=r.inapplicable_reason
        )
        for r in scenario_set.scenarios
        if transport not in r.transports
    ]
