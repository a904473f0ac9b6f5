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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime.client import run_client
from interop.runtime.context import RunContext
from interop.runtime.server import Server, ServerStartError
from interop.suites.base import Done, Job
from interop.suites.elicitation import upstream
from interop.suites.elicitation.scenarios import (
    ElicitationRow,
    ElicitationSet,
    ElicitationSets,
    load_sets,
)
from interop.suites.elicitation.verify import verify_set
from interop.suites.steps import (
    UploadCredentials,
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
        outcome.rows += _inapplicable(scenario_set, transport)
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
        runnable, skipped = _v1_rows(scenario_set, client, server)
        upstream.unsupported_rows(outcome, scenario_set.name, skipped)
        outcome.rows += _inapplicable(scenario_set, "http")
        if not runnable:
            return
        home = ctx.unique(f"elicitation-{scenario_set.name}")
        setting = _V1Setting(
            ctx,
            combination,
            scenario_set,
            client,
            server,
            runnable,
            upstream.subset(scenario_set, runnable),
            home,
            upload_credentials(ctx),
        )
        run = _v1_run(setting, outcome)
        judged, set_errors = verify_set(
            scenario_set.name,
            runnable,
            transport="http",
            report=run.report,
            entries=run.entries,
            client_exit=run.client_exit,
            language=client.language,
            stage=setting.stage,
            prior_errors=run.errors,
            v1_receiver=is_v1(server),
        )
        outcome.rows += judged
        outcome.errors += set_errors


def _inapplicable(scenario_set: ElicitationSet, transport: str) -> list[RowVerdict]:
    """The set's rows that do not run over `transport`, each inapplicable with its reason."""
    return [
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


def _v1_rows(
    scenario_set: ElicitationSet, client: Adapter, server: Adapter
) -> tuple[list[ElicitationRow], list[tuple[ElicitationRow, str]]]:
    """The set's HTTP rows a contract v1 side can run, and the others with the reason
    each cannot: all of them when a v1 side's SDK has no elicitation adapter (it does
    not implement the suite)."""
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
        return [], [(row, "; ".join(lacking)) for row in scenario_set.for_transport("http")]
    return runnable, skipped


@dataclass(frozen=True)
class _V1Setting:
    """One set's run with a contract v1 side: the combination, its two sides, the rows
    that run, the run's folder and the upload credentials made fresh for it."""

    ctx: RunContext
    combination: Combination
    scenario_set: ElicitationSet
    client: Adapter
    server: Adapter
    runnable: list[ElicitationRow]
    part: ElicitationSet  # the set of the runnable rows only
    home: Path
    credentials: UploadCredentials

    @property
    def stage(self) -> str:
        return f"client[{self.scenario_set.name}]"


@dataclass
class _V1Run:
    """What a run with a contract v1 side leaves to judge: the client's report (a v1
    sender's as our client would write it), the receiver's entries, the client's exit
    status (None: no client process of ours) and the errors so far."""

    report: Any = None
    entries: Any = None
    client_exit: int | None = None
    errors: list[CombinationError] = field(default_factory=list)


def _v1_run(setting: _V1Setting, outcome: Outcome) -> _V1Run:
    """The receiver started on the runnable rows, the client side run against it, its
    entries read and then it stopped (its log and leaks into `outcome`); a receiver
    that does not start is the one error, nothing run."""
    ctx, combination, set_name = setting.ctx, setting.combination, setting.scenario_set.name
    try:
        receiver = upstream.start_server(
            ctx,
            setting.server,
            setting.scenario_set,
            combination.auth,
            setting.part.write(setting.home / "server.json", "http", server=True),
            setting.credentials.token,
        )
    except ServerStartError as exc:
        return _V1Run(errors=[CombinationError("server-start", exc.error_class, str(exc))])
    run = (
        _v1_sender_run(setting, receiver)
        if is_v1(setting.client)
        else _client_run(setting, receiver)
    )
    entries, receipt_errors = receiver.entries(RECEIPTS)
    run.entries = entries
    run.errors += receipt_errors
    stop_and_keep(ctx, outcome, combination, receiver, set_name)
    if is_v1(setting.server):
        outcome.shapes["receipts"] = upstream.RECEIPT_SHAPE
    return run


def _v1_sender_run(setting: _V1Setting, receiver: Server | upstream.V1Receiver) -> _V1Run:
    """The v1 client's sender, one process per step, against the receiver."""
    sent = upstream.run_sender(
        setting.ctx,
        setting.client,
        receiver,
        setting.runnable,
        setting.combination.auth,
        setting.credentials.token,
        setting.credentials.stranger,
        setting.scenario_set.name,
    )
    return _V1Run(report=sent.report, errors=sent.errors)


def _client_run(setting: _V1Setting, receiver: Server | upstream.V1Receiver) -> _V1Run:
    """Our client (its lifecycleClient command) over the runnable rows against a v1
    receiver, its log kept."""
    ctx, combination, home = setting.ctx, setting.combination, setting.home
    upload = {**setting.credentials.block(), "endpoint": receiver.upload_endpoint}
    run = run_client(
        ctx,
        setting.client,
        stage=setting.stage,
        scenario_file=setting.part.write(home / "client.json", "http", server=False),
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
        env=setting.credentials.env,
        schema="elicitation-client-config.schema.json",
    )
    ctx.keep_log(run.log, f"{combination.key}/client-{setting.scenario_set.name}.log")
    return _V1Run(report=run.report, client_exit=run.exit_code, errors=list(run.errors))
