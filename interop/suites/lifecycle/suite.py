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
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime.capture import Relays
from interop.runtime.client import run_client, stdio_server
from interop.runtime.context import RunContext
from interop.runtime.listener import refusing_port
from interop.runtime.server import Server, ServerStartError
from interop.suites.base import Job
from interop.suites.lifecycle import probes
from interop.suites.lifecycle.scenarios import LifecycleSet, LifecycleSets, load_sets
from interop.suites.lifecycle.verify import verify_set
from interop.suites.steps import (
    contract_v1,
    keep_stdio_frames,
    one_job_each,
    run_v1_set,
    stdio_auth_none,
    stop_and_keep,
)
from interop.suites.wire import (
    Contradiction,
    mark_rows,
    read_against_wire,
    stdio_contradictions,
)

Done = Callable[[Outcome], None]
UPLOAD_TOKEN_ENV = "AHP_INTEROP_UPLOAD_TOKEN"
UNAUTHORIZED_TOKEN_ENV = "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN"


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
        outcome = Outcome(self.name, combination)
        started = time.monotonic()
        missing = [
            f"{name} has no {key!r} command"
            for name, key in (
                (combination.client, "lifecycleClient"),
                (combination.server, "lifecycleServer"),
            )
            if adapters[name].command(key) is None
        ]
        probed = False
        # a contract v1 adapter in the combination: sets apart, our [ext] rows unsupported,
        # a crash isolated to its row (`_run_v1`)
        v1 = contract_v1(combination, adapters)
        for scenario_set in sets.runs(apart=v1):
            if missing:
                outcome.rows += [
                    RowVerdict(
                        scenario_set.origin(s.id),
                        s.id,
                        Status.UNSUPPORTED,
                        s.expected,
                        error="; ".join(missing),
                    )
                    for s in scenario_set.scenarios
                ]
                continue
            if ctx.cancelled.is_set():
                outcome.errors.append(
                    CombinationError("run", "Cancelled", "the run was interrupted")
                )
                break
            if v1:
                probed = run_v1_set(
                    ctx,
                    outcome,
                    scenario_set,
                    lambda out, chosen, seen: self._run_set(
                        ctx, out, combination, chosen, adapters, seen
                    ),
                    probed,
                    extension=lambda row: row.extension,
                    runs_here=lambda row: combination.transport in row.transports,
                )
            else:
                probed = self._run_set(ctx, outcome, combination, scenario_set, adapters, probed)
        if missing:
            outcome.rows += probes.skipped(Status.UNSUPPORTED, "; ".join(missing))
        elif combination.transport != "http":
            outcome.rows += probes.skipped(
                Status.INAPPLICABLE, "the receivers are probed over HTTP"
            )
        elif not probed:
            outcome.rows += probes.skipped(
                Status.NOT_RUN, "the combination failed before its receivers were probed"
            )
        outcome.seconds = time.monotonic() - started
        if done is not None:
            done(outcome)
        return [outcome]

    def _run_set(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: LifecycleSet,
        adapters: dict[str, Adapter],
        probed: bool,
    ) -> bool:
        """One set's client run, judged into `outcome`; probes once per combination.

        Returns whether the receivers have been probed (now or before)."""
        client, server_adapter = adapters[combination.client], adapters[combination.server]
        transport = combination.transport
        stage = f"client[{scenario_set.name}]"
        home = ctx.unique(f"lifecycle-{scenario_set.name}")
        blind = scenario_set.write(home / "server.json", transport, blind=True)
        given = scenario_set.write(home / "client.json", transport, blind=client.blind)
        token, stranger = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        for secret in (token, stranger):
            ctx.redactor.add(secret)
        server_extra = {"suite": "lifecycle", "uploadAuth": {"token": token}}
        env = {UPLOAD_TOKEN_ENV: token, UNAUTHORIZED_TOKEN_ENV: stranger}
        upload: dict[str, Any] = {
            "auth": {"type": "bearer", "tokenEnv": UPLOAD_TOKEN_ENV},
            "timeoutMs": 5000,
            "maxBytes": 1048576,
        }
        extra: dict[str, Any] = {
            "suite": "lifecycle",
            "childPidFile": str(home / "child.json"),
            "upload": upload,
            "contentSources": _content_sources(scenario_set, transport),
        }
        rows = scenario_set.for_transport(transport)
        refusing = refusing_port() if transport == "http" else None
        try:
            if refusing is None:
                extra["backends"] = {"unreachable": {"command": [str(home / "no-such-backend")]}}
            errors: list[CombinationError] = []
            found: list[Contradiction] = []  # a recheck's record against the wire
            entries: Any = None
            server: Server | None = None
            run = None
            if transport == "http":
                server = Server(
                    ctx,
                    server_adapter,
                    "http",
                    combination.auth,
                    blind,
                    command_key="lifecycleServer",
                    extra=server_extra,
                )
                try:
                    server.start()
                except ServerStartError as exc:
                    errors.append(CombinationError("server-start", exc.error_class, str(exc)))
                if not errors:
                    if server.upload_endpoint is None:
                        errors.append(
                            CombinationError(
                                "server-start",
                                "ReadinessMalformed",
                                "a lifecycle server's readiness needs uploadEndpoint",
                            )
                        )
                    else:
                        relays = Relays(
                            ctx,
                            combination.auth,
                            server.endpoint,
                            server.control,
                            server.upload_endpoint,
                            token,
                        )
                        upload["endpoint"] = relays.upload
                        if not client.blind:
                            given = scenario_set.write_with_uploads(
                                home / "client-v1.json", transport, str(relays.upload)
                            )
                        extra["controlEndpoint"] = relays.control
                        scheme = (server.endpoint or "http:").split(":", 1)[0]
                        port = refusing.getsockname()[1] if refusing is not None else 0
                        extra["backends"] = {
                            "unreachable": {"endpoint": f"{scheme}://127.0.0.1:{port}/intercept"}
                        }
                        try:
                            run = run_client(
                                ctx,
                                client,
                                stage=stage,
                                scenario_file=given,
                                transport="http",
                                auth=combination.auth,
                                endpoint=relays.endpoint,
                                command_key="lifecycleClient",
                                extra=extra,
                                env=env,
                                schema="lifecycle-client-config.schema.json",
                            )
                        finally:  # a recheck: the record against the wire
                            ids = {s.request_id(k) for s in rows for k in s.raw["requests"]}
                            entries, receipt_errors, found = read_against_wire(
                                ctx, relays, server.entries, combination.key,
                                scenario_set.name, ids,
                            )  # fmt: skip
                        if receipt_errors and server.exit_description() is not None:
                            receipt_errors = [
                                CombinationError(
                                    "server",
                                    "ServerExit",
                                    f"the server {server.exit_description()}",
                                )
                            ]
                        errors += receipt_errors
            else:
                keys, wire_log = stdio_server(
                    ctx, server_adapter, blind, command_key="lifecycleServer", extra=server_extra
                )
                run = run_client(
                    ctx,
                    client,
                    stage=stage,
                    scenario_file=given,
                    transport="stdio",
                    auth="none",
                    stdio_server=keys,
                    command_key="lifecycleClient",
                    extra=extra,
                    env=env,
                    schema="lifecycle-client-config.schema.json",
                )
                report = run.report if isinstance(run.report, dict) else {}
                receipts = report.get("receipts")
                entries = receipts.get("entries") if isinstance(receipts, dict) else None
                if ctx.capture:
                    frames = keep_stdio_frames(ctx, combination.key, scenario_set.name, wire_log)
                    found = stdio_contradictions(entries, frames)
        finally:  # the held port is released on every path
            if refusing is not None:
                refusing.close()
        if run is not None:
            ctx.keep_log(run.log, f"{combination.key}/client-{scenario_set.name}.log")
            errors = run.errors + errors
        judged, set_errors = verify_set(
            scenario_set.name,
            rows,
            report=run.report if run is not None else None,
            entries=entries,
            client_exit=run.exit_code if run is not None and client.blind else None,
            language=client.language,
            blind=client.blind,
            stage=stage,
            prior_errors=errors,
        )
        requests = {s.id: {s.request_id(k) for k in s.raw["requests"]} for s in rows}
        mark_rows(judged, found, transport=transport, ids_of=lambda sid: requests.get(sid, set()))
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
        clean = not set_errors and all(r.status != Status.FAILED for r in judged)
        if server is not None and clean and not probed and rows:
            probed = True
            template = rows[0].raw["requests"][next(iter(rows[0].raw["requests"]))]
            outcome.rows += probes.run_probes(
                ctx,
                server,
                combination.auth,
                token,
                stranger,
                template,
                v1=not server_adapter.blind,
            )
        if server is not None:
            stop_and_keep(ctx, outcome, combination, server, scenario_set.name)
        return probed


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
