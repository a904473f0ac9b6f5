"""The lifecycle suite: pending requests, cancellation, acceptance, observation, uploads, chains.

Each combination is a job of its own: per scenario set, a fresh server (over
HTTP started here, over stdio started by the client) and one client process
that runs every step itself (docs/LIFECYCLE.md); consecutive sets that name
nothing alike run as one (`LifecycleSets.runs`). Upload credentials are made
for the run and handed over through the environment. Rows restricted to the
other transport are inapplicable with the scenario's reason; an adapter
without the suite's commands is unsupported.
"""

from __future__ import annotations

import base64
import contextlib
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import Outcome, RowVerdict, Status
from interop.runtime.capture import Relays
from interop.runtime.context import RunContext
from interop.runtime.listener import refusing_port
from interop.runtime.server import Server
from interop.suites.base import Done, Job
from interop.suites.lifecycle import probes
from interop.suites.lifecycle.scenarios import LifecycleSet, LifecycleSets, load_sets
from interop.suites.lifecycle.verify import verify_set
from interop.suites.steps import (
    StepRun,
    UploadCredentials,
    contract_v1,
    one_job_each,
    run_sets,
    run_step_client,
    run_v1_set,
    stdio_auth_none,
    stop_server,
    unprobed,
    upload_credentials,
)
from interop.suites.wire import mark_rows

RECEIPTS = "lifecycle-control.schema.json#/$defs/receipts"  # the record the server keeps


class LifecycleSuite:
    name = "lifecycle"

    def load_sets(self, paths: list[Path]) -> LifecycleSets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        return stdio_auth_none(combination)

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        return one_job_each(combinations, adapters)

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: LifecycleSets,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        combination = job.combinations[0]
        # a contract v1 adapter in the combination: sets apart, our [ext] rows unsupported,
        # a crash isolated to its row (`run_v1_set`)
        v1 = contract_v1(combination, adapters)
        probed = False  # the receivers are probed once per combination

        def run_set(outcome: Outcome, combination: Combination, chosen: LifecycleSet) -> None:
            nonlocal probed
            if not v1:
                probed = self._run_set(ctx, outcome, combination, chosen, adapters, probed)
                return
            probed = run_v1_set(
                ctx,
                outcome,
                chosen,
                lambda out, subset, seen: self._run_set(
                    ctx, out, combination, subset, adapters, seen
                ),
                probed,
                extension=lambda row: row.extension,
                runs_here=lambda row: combination.transport in row.transports,
            )

        def finish(outcome: Outcome, missing: list[str]) -> None:
            outcome.rows += unprobed(
                combination, missing, probed, probes.skipped,
                over_http="the receivers are probed over HTTP",
                never="the combination failed before its receivers were probed",
            )  # fmt: skip

        runs = sets.runs(apart=v1)
        return run_sets(self.name, job, ctx, runs, adapters, run_set, done, finish=finish)

    def _run_set(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: LifecycleSet,
        adapters: dict[str, Adapter],
        probed: bool,
    ) -> bool:
        """One set's client run against a fresh server (`run_step_client`), judged into
        `outcome`; probes the receivers once per combination. Returns whether they have
        been probed (now or before)."""
        credentials = upload_credentials(ctx)
        step = _step_run(ctx, combination, adapters, scenario_set, credentials)
        clean = _judge(outcome, combination, adapters[combination.client], scenario_set, step)
        rows = scenario_set.for_transport(combination.transport)
        if step.server is not None and clean and not probed and rows:
            probed = True
            template = rows[0].requests[next(iter(rows[0].requests))]
            outcome.rows += probes.run_probes(
                ctx,
                step.server,
                combination.auth,
                credentials.token,
                credentials.stranger,
                template,
                v1=not adapters[combination.server].blind,
            )
        stop_server(ctx, outcome, combination, step, scenario_set.name)
        return probed


def _step_run(
    ctx: RunContext,
    combination: Combination,
    adapters: dict[str, Adapter],
    scenario_set: LifecycleSet,
    credentials: UploadCredentials,
) -> StepRun:
    """The set's client run: its upload block and content sources, and the reserved
    `unreachable` backend (over HTTP a held port that refuses, over stdio a command
    that does not exist)."""
    client = adapters[combination.client]
    transport = combination.transport
    home = ctx.unique(f"lifecycle-{scenario_set.name}")
    upload = credentials.block()
    extra: dict[str, Any] = {
        "suite": "lifecycle",
        "childPidFile": str(home / "child.json"),
        "upload": upload,
        "contentSources": _content_sources(scenario_set, transport),
    }
    rows = scenario_set.for_transport(transport)
    with refusing_port() if transport == "http" else contextlib.nullcontext() as refusing:
        if refusing is None:
            extra["backends"] = {"unreachable": {"command": [str(home / "no-such-backend")]}}

        def ready(server: Server, relays: Relays) -> Path | None:
            """The reserved `unreachable` backend refuses on a held port of the
            server's scheme; a contract v1 client reads the upload URL in its file."""
            assert refusing is not None
            scheme = (server.endpoint or "http:").split(":", 1)[0]
            port = refusing.getsockname()[1]
            extra["backends"] = {
                "unreachable": {"endpoint": f"{scheme}://127.0.0.1:{port}/intercept"}
            }
            if client.blind:
                return None
            return scenario_set.write_with_uploads(
                home / "client-v1.json", transport, str(relays.upload)
            )

        return run_step_client(
            ctx,
            combination,
            adapters,
            suite="lifecycle",
            set_name=scenario_set.name,
            server_file=scenario_set.write(home / "server.json", transport, blind=True),
            client_file=scenario_set.write(home / "client.json", transport, blind=client.blind),
            extra=extra,
            client_schema="lifecycle-client-config.schema.json",
            receipts_schema=RECEIPTS,
            server_extra={"uploadAuth": {"token": credentials.token}},
            env=credentials.env,
            upload=upload,
            request_ids={s.request_id(k) for s in rows for k in s.requests},
            ready=ready,
        )


def _judge(
    outcome: Outcome,
    combination: Combination,
    client: Adapter,
    scenario_set: LifecycleSet,
    step: StepRun,
) -> bool:
    """The set's rows judged into `outcome` (each under its own set; a row of the other
    transport inapplicable with its reason). True when nothing failed."""
    transport = combination.transport
    rows = scenario_set.for_transport(transport)
    judged, set_errors = verify_set(
        scenario_set.name,
        rows,
        report=step.report,
        entries=step.entries,
        client_exit=step.exit_code(client.blind),
        language=client.language,
        blind=client.blind,
        stage=f"client[{scenario_set.name}]",
        prior_errors=step.errors,
    )
    requests = {s.id: {s.request_id(k) for k in s.requests} for s in rows}
    mark_rows(
        judged,
        step.contradictions,
        transport=transport,
        ids_of=lambda sid: requests.get(sid, set()),
    )
    for row in judged:
        row.set = scenario_set.origin(row.id)
    outcome.rows += judged
    outcome.rows += [
        RowVerdict(
            scenario_set.origin(s.id),
            s.id,
            Status.INAPPLICABLE,
            s.expected,
            error=s.inapplicable_reason,
        )
        for s in scenario_set.scenarios
        if transport not in s.transports
    ]
    outcome.errors += set_errors
    return not set_errors and all(r.status != Status.FAILED for r in judged)


def _content_sources(scenario_set: LifecycleSet, transport: str) -> list[dict[str, Any]]:
    """The bytes of every upload step the scenario expects to succeed (as upstream hands them)."""
    sources: dict[str, dict[str, Any]] = {}
    for scenario in scenario_set.for_transport(transport):
        if scenario.chain:
            continue
        statuses = scenario.expected["uploadStatuses"]
        for number, upload in enumerate(scenario.uploads()):
            if number < len(statuses) and statuses[number] == 201:
                sources.setdefault(
                    upload.alias,
                    {
                        "descriptor": {
                            "ref": upload.alias,
                            "size": upload.size,
                            "sha256": upload.sha256,
                        },
                        "bytes": base64.b64encode(upload.body).decode("ascii"),
                    },
                )
    return list(sources.values())
