"""Client runs: one client process over one scenario file, and the keys of a stdio server."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from interop.contract.check import contract_problem
from interop.contract.manifest import Adapter
from interop.jsonvalue import JsonError, load_file
from interop.results import CombinationError
from interop.runtime import process, relay
from interop.runtime.context import RunContext, write_json
from interop.runtime.receipts import replies_beside, snapshot_beside


def stdio_server(
    ctx: RunContext,
    server: Adapter,
    scenario_file: Path,
    *,
    command_key: str = "server",
    extra: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], Path]:
    """The client config keys that make a client spawn `server` over stdio.

    Returns them with the receipt log the server (or, for a contract v1 server
    without `receiptLog`, the relay put in front of it) appends to.
    """
    home = ctx.unique(f"stdio-{server.name}")
    (home / "ready").mkdir()
    receipt_log = home / "receipts.jsonl"
    server_auth, _ = ctx.trust.server_auth("none", ctx.profile)
    config: dict[str, Any] = {
        "transport": "stdio",
        "readinessFile": str(home / "ready" / "readiness.json"),
        "scenarioFile": str(scenario_file),
        "auth": server_auth,
        "schemaDir": str(ctx.schema_dir(server)),
    }
    config.update(extra or {})
    command = list(server.commands[command_key])
    if command_key != "server":  # suites past core read receipts from the control listener
        config_path = write_json(home / "server-config.json", config)
        if ctx.capture:  # a recheck: every line both ways, the wire evidence (stdio_frames)
            wire = [sys.executable, relay.__file__, "--log", str(receipt_log)]
            command = [*wire, "--replies", str(replies_beside(receipt_log)), "--", *command]
        keys = {"serverCommand": command, "serverCwd": str(server.directory)}
        return {**keys, "serverConfig": str(config_path)}, receipt_log
    if server.receipt_log and not ctx.capture:
        config["receiptLog"] = str(receipt_log)
    else:  # a contract v1 server, or a recheck: receipts and answers from the relay
        replies = str(replies_beside(receipt_log))
        command = [sys.executable, relay.__file__, "--log", str(receipt_log)]
        command += ["--replies", replies, "--snapshot", str(snapshot_beside(receipt_log))]
        command += ["--", *server.commands[command_key]]
    config_path = write_json(home / "server-config.json", config)
    keys = {
        "serverCommand": command,
        "serverCwd": str(server.directory),
        "serverConfig": str(config_path),
    }
    return keys, receipt_log


@dataclass
class ClientRun:
    report: Any
    exit_code: int | None
    errors: list[CombinationError]
    log: Path
    seconds: float


def run_client(
    ctx: RunContext,
    adapter: Adapter,
    *,
    stage: str,
    scenario_file: Path,
    transport: str,
    auth: str,
    endpoint: str | None = None,
    stdio_server: dict[str, Any] | None = None,
    command_key: str = "client",
    extra: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    schema: str = "client-config.schema.json",
) -> ClientRun:
    """Run one client process over one scenario file and collect its report.

    A suite other than core names its `command_key`, the config keys it adds
    (`extra`), the environment variables it hands over (`env`, e.g. upload
    tokens: never in a file) and the schema its config must satisfy.
    """
    home = ctx.unique(f"client-{adapter.name}")
    report_file = home / "report.json"
    client_auth, tls = ctx.trust.client_auth(auth, ctx.profile)
    config: dict[str, Any] = {
        "transport": transport,
        "scenarioFile": str(scenario_file),
        "reportFile": str(report_file),
        "auth": client_auth,
        "timeoutMs": int(ctx.timeouts.client * 1000 / 4),
        "schemaDir": str(ctx.schema_dir(adapter)),
        "language": adapter.language,
    }
    if tls is not None:
        config["tls"] = tls
    if endpoint is not None:
        config["endpoint"] = endpoint
    if stdio_server is not None:
        config.update(stdio_server)
    config.update(extra or {})
    problem = contract_problem(schema, config)
    if problem is not None:  # the harness's own slip: never hand an adapter a bad config
        raise ValueError(f"client config {problem}")
    config_path = write_json(home / "client-config.json", config)
    launch = _Launch(
        command=[*adapter.commands[command_key], "--config", str(config_path)],
        owner=f"client:{home.name}",
        log=home / "client.log",
        env=env,
    )
    started = time.monotonic()
    exit_code, errors = _run(ctx, adapter, stage, launch)
    seconds = time.monotonic() - started
    report = _read_report(report_file, home, stage, errors)
    return ClientRun(
        report=report, exit_code=exit_code, errors=errors, log=launch.log, seconds=seconds
    )


@dataclass(frozen=True)
class _Launch:
    """One client process to start: its command, the owner its processes are marked
    with (every one of them is killed when it ends), its log, and the environment
    variables it is handed besides ours (None: ours only)."""

    command: list[str]
    owner: str
    log: Path
    env: dict[str, str] | None


def _run(
    ctx: RunContext, adapter: Adapter, stage: str, launch: _Launch
) -> tuple[int | None, list[CombinationError]]:
    """Start the client and wait for it under its watchdog; its exit code (None when it
    did not exit) and what went wrong: ClientTimeout, ProcessLeak (a process of its own
    still running a second after it exited), ClientSpawn, Cancelled. Whatever it
    leaves running is killed, however it ends."""
    errors: list[CombinationError] = []
    exit_code: int | None = None
    try:
        spawned = ctx.registry.spawn(
            launch.command,
            cwd=adapter.directory,
            owner=launch.owner,
            adapter=adapter.name,
            label="client",
            log_path=launch.log,
            env={**os.environ, **launch.env} if launch.env else None,
        )
        try:
            exit_code = process.wait_exit(spawned, ctx.timeouts.client)
        except process.WatchdogExpired as exc:
            errors.append(CombinationError(stage, "ClientTimeout", str(exc)))
        finally:
            spawned.close()
        leftovers = process.owned_processes(launch.owner)
        if leftovers and exit_code is not None:
            _, alive = psutil.wait_procs(leftovers, timeout=1.0)
            if alive:
                names = ", ".join(sorted({p.name() for p in alive if p.is_running()}))
                errors.append(
                    CombinationError(
                        stage, "ProcessLeak", f"left running after the client exited: {names}"
                    )
                )
    except OSError as exc:
        errors.append(
            CombinationError(
                stage, "ClientSpawn", process.spawn_failure("client", launch.command, adapter, exc)
            )
        )
    except process.RunCancelled as exc:
        errors.append(CombinationError(stage, "Cancelled", str(exc)))
    finally:
        process.kill_owner(launch.owner)
        ctx.registry.owner_exit(launch.owner)
    return exit_code, errors


def _read_report(report_file: Path, home: Path, stage: str, errors: list[CombinationError]) -> Any:
    """The client's report, None when it wrote none or an unreadable one: ReportMalformed
    (its folder named `<client>`), or ReportMissing unless something already went wrong,
    appended to `errors`."""
    report: Any = None
    if report_file.exists():
        try:
            report = load_file(report_file)
        except JsonError as exc:
            errors.append(
                CombinationError(stage, "ReportMalformed", str(exc).replace(str(home), "<client>"))
            )
    elif not errors:
        errors.append(CombinationError(stage, "ReportMissing", "the client wrote no report"))
    return report
