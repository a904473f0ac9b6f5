"""One run of a step-driven client against a fresh server: what the suites past core share.

Over HTTP the harness starts the suite's server (`lifecycleServer`) and hands
the client its endpoint and control endpoint; over stdio the client starts
the server itself and reports the receipts it read from it. The caller judges
the run, may probe the running server, then stops it with `stop_server`.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime.client import ClientRun, run_client, stdio_server
from interop.runtime.context import RunContext
from interop.runtime.server import Server, ServerStartError
from interop.suites.base import Job


@dataclass
class StepRun:
    run: ClientRun | None
    entries: Any
    errors: list[CombinationError] = field(default_factory=list)
    server: Server | None = None  # still running (HTTP): the caller stops it

    @property
    def report(self) -> Any:
        return self.run.report if self.run is not None else None

    def exit_code(self, blind: bool) -> int | None:
        """The client's exit status when it is judged (blind clients), else None."""
        return self.run.exit_code if self.run is not None and blind else None


def run_step_client(
    ctx: RunContext,
    combination: Combination,
    adapters: dict[str, Adapter],
    *,
    suite: str,
    set_name: str,
    server_file: Path,
    client_file: Path,
    extra: dict[str, Any],
    client_schema: str,
    receipts_schema: str,
    server_extra: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    upload: dict[str, Any] | None = None,
) -> StepRun:
    """`upload`, when given, is the client config's upload block: over HTTP its
    `endpoint` is set from the server's readiness (a server without one fails to
    start); over stdio the client reads it from the readiness itself."""
    client, server_adapter = adapters[combination.client], adapters[combination.server]
    stage = f"client[{set_name}]"
    server_extra = {**(server_extra or {}), "suite": suite}
    step = StepRun(run=None, entries=None)
    if combination.transport == "http":
        server = Server(
            ctx,
            server_adapter,
            "http",
            combination.auth,
            server_file,
            command_key="lifecycleServer",
            extra=server_extra,
        )
        step.server = server
        try:
            server.start()
        except ServerStartError as exc:
            step.errors.append(CombinationError("server-start", exc.error_class, str(exc)))
            return step
        if upload is not None:
            if server.upload_endpoint is None:
                step.errors.append(
                    CombinationError(
                        "server-start",
                        "ReadinessMalformed",
                        f"a {suite} server's readiness needs uploadEndpoint",
                    )
                )
                return step
            upload["endpoint"] = server.upload_endpoint
        step.run = run_client(
            ctx,
            client,
            stage=stage,
            scenario_file=client_file,
            transport="http",
            auth=combination.auth,
            endpoint=server.endpoint,
            command_key="lifecycleClient",
            extra={**extra, "controlEndpoint": server.control},
            env=env,
            schema=client_schema,
        )
        step.entries, receipt_errors = server.entries(receipts_schema)
        if receipt_errors and server.exit_description() is not None:
            receipt_errors = [
                CombinationError("server", "ServerExit", f"the server {server.exit_description()}")
            ]
        step.errors += receipt_errors
    else:
        keys, _ = stdio_server(
            ctx, server_adapter, server_file, command_key="lifecycleServer", extra=server_extra
        )
        step.run = run_client(
            ctx,
            client,
            stage=stage,
            scenario_file=client_file,
            transport="stdio",
            auth="none",
            stdio_server=keys,
            command_key="lifecycleClient",
            extra=extra,
            env=env,
            schema=client_schema,
        )
        report = step.run.report if isinstance(step.run.report, dict) else {}
        receipts = report.get("receipts")
        step.entries = receipts.get("entries") if isinstance(receipts, dict) else None
    ctx.keep_log(step.run.log, f"{combination.key}/client-{set_name}.log")
    step.errors = step.run.errors + step.errors
    return step


def stop_server(
    ctx: RunContext, outcome: Outcome, combination: Combination, step: StepRun, set_name: str
) -> None:
    """Stop the run's HTTP server, keep its log, and name any process it left behind."""
    server = step.server
    if server is None:
        return
    server.stop()
    ctx.keep_log(server.log, f"{combination.key}/server-{set_name}.log")
    if server.leaks:
        outcome.errors.append(
            CombinationError(
                "server-stop",
                "ProcessLeak",
                f"left running by the server: {len(server.leaks)} process(es)",
            )
        )


def refusing_port() -> socket.socket:
    """A loopback TCP port bound and never listened on: connecting to it is refused
    (the reserved `unreachable` backend). Held for the client run, so no other
    process can take the port meanwhile; the caller closes it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


STDIO_AUTH = "stdio relies on process trust: it runs with auth none only"
COMMANDS = ("lifecycleClient", "lifecycleServer")


def stdio_auth_none(combination: Combination) -> str | None:
    """The applicability of every step suite: stdio runs with auth none only."""
    if combination.transport == "stdio" and combination.auth != "none":
        return STDIO_AUTH
    return None


def one_job_each(combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
    """A job per combination, costliest first (client and server weights)."""
    jobs = [Job([c], adapters[c.client].weight + adapters[c.server].weight) for c in combinations]
    return sorted(jobs, key=lambda job: -job.cost)


def run_sets(
    suite: str,
    job: Job,
    ctx: RunContext,
    sets: Iterable[Any],
    adapters: dict[str, Adapter],
    run_set: Callable[[Outcome, Combination, Any], None],
    done: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """One combination's run of a step suite: `run_set(outcome, combination, set)` per
    scenario set; every row unsupported when an adapter lacks the lifecycle commands;
    an interrupt stops before the next set."""
    combination = job.combinations[0]
    outcome = Outcome(suite, combination)
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
            outcome.errors.append(CombinationError("run", "Cancelled", "the run was interrupted"))
            break
        run_set(outcome, combination, scenario_set)
    outcome.seconds = time.monotonic() - started
    if done is not None:
        done(outcome)
    return [outcome]
