"""The compaction suite: the before and after boundaries of a compaction as two chains.

Each combination is a job of its own: per scenario set, a fresh server (over
HTTP started here, over stdio started by the client) and one client process,
the host, that runs every row itself (docs/COMPACTION.md). Stdio runs with
auth none only; rows restricted to one transport are inapplicable on the
other with their reason; an adapter without the lifecycle commands is
unsupported.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime.client import run_client, stdio_server
from interop.runtime.context import RunContext
from interop.runtime.server import Server, ServerStartError
from interop.suites.base import Job
from interop.suites.compaction.scenarios import CompactionSet, CompactionSets, load_sets
from interop.suites.compaction.verify import verify_set

Done = Callable[[Outcome], None]
COMMANDS = ("lifecycleClient", "lifecycleServer")
STDIO_AUTH = "stdio relies on process trust: it runs with auth none only"
RECEIPTS = "lifecycle-control.schema.json#/$defs/receipts"


class CompactionSuite:
    name = "compaction"
    command_keys: tuple[str, ...] = COMMANDS

    def default_sets(self, root: Path) -> list[Path]:
        return [root / "scenarios" / "compaction.json"]

    def load_sets(self, paths: list[Path]) -> CompactionSets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        if combination.transport == "stdio" and combination.auth != "none":
            return STDIO_AUTH
        return None

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        jobs = [
            Job([c], adapters[c.client].weight + adapters[c.server].weight) for c in combinations
        ]
        return sorted(jobs, key=lambda job: -job.cost)

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: CompactionSets,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        combination = job.combinations[0]
        outcome = Outcome(self.name, combination)
        started = time.monotonic()
        missing = [
            f"{name} has no {key!r} command"
            for name, key in zip((combination.client, combination.server), COMMANDS, strict=True)
            if adapters[name].command(key) is None
        ]
        for scenario_set in sets:
            if missing:
                outcome.rows += [
                    RowVerdict(
                        scenario_set.name,
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
            self._run_set(ctx, outcome, combination, scenario_set, adapters)
        outcome.seconds = time.monotonic() - started
        if done is not None:
            done(outcome)
        return [outcome]

    def _run_set(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: CompactionSet,
        adapters: dict[str, Adapter],
    ) -> None:
        """One set's client run against a fresh server, judged into `outcome`."""
        client, server_adapter = adapters[combination.client], adapters[combination.server]
        stage = f"client[{scenario_set.name}]"
        transport = combination.transport
        home = ctx.unique(f"compaction-{scenario_set.name}")
        blind = scenario_set.write(home / "server.json", transport, blind=True)
        given = scenario_set.write(home / "client.json", transport, blind=client.blind)
        rows = scenario_set.for_transport(transport)
        server_extra = {"suite": "compaction"}
        extra: dict[str, Any] = {"suite": "compaction", "childPidFile": str(home / "child.json")}
        refusing = _refusing_port() if transport == "http" else None
        if refusing is None:
            extra["backends"] = {"unreachable": {"command": [str(home / "no-such-backend")]}}
        else:
            port = refusing.getsockname()[1]
            extra["backends"] = {"unreachable": {"endpoint": f"http://127.0.0.1:{port}/intercept"}}
        errors: list[CombinationError] = []
        entries: Any = None
        server: Server | None = None
        run = None
        if combination.transport == "http":
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
                extra["controlEndpoint"] = server.control
                run = run_client(
                    ctx,
                    client,
                    stage=stage,
                    scenario_file=given,
                    transport="http",
                    auth=combination.auth,
                    endpoint=server.endpoint,
                    command_key="lifecycleClient",
                    extra=extra,
                    schema="compaction-client-config.schema.json",
                )
                entries, receipt_errors = server.entries(RECEIPTS)
                if receipt_errors and server.exit_description() is not None:
                    receipt_errors = [
                        CombinationError(
                            "server", "ServerExit", f"the server {server.exit_description()}"
                        )
                    ]
                errors += receipt_errors
        else:
            keys, _ = stdio_server(
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
                schema="compaction-client-config.schema.json",
            )
            report = run.report if isinstance(run.report, dict) else {}
            receipts = report.get("receipts")
            entries = receipts.get("entries") if isinstance(receipts, dict) else None
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
            stage=stage,
            prior_errors=errors,
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
        if server is not None:
            server.stop()
            ctx.keep_log(server.log, f"{combination.key}/server-{scenario_set.name}.log")
            if server.leaks:
                outcome.errors.append(
                    CombinationError(
                        "server-stop",
                        "ProcessLeak",
                        f"left running by the server: {len(server.leaks)} process(es)",
                    )
                )


def _refusing_port() -> socket.socket:
    """A loopback port bound and never listened on (the `unreachable` backend)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock
