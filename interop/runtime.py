"""Shared machinery every suite uses: run context, servers, client runs, logs."""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from interop import process, relay
from interop.adapters import Adapter
from interop.control import ControlError, call
from interop.jsonvalue import JsonError, load_file, loads
from interop.redact import Redactor
from interop.trust import Trust
from interop.verify import CombinationError


@dataclass
class Timeouts:
    startup: float = 30.0
    client: float = 120.0
    shutdown: float = 5.0


@dataclass
class RunContext:
    """Everything one run shares: its temp dir, trust, logs and process registry."""

    work: Path
    logs: Path
    trust: Trust
    redactor: Redactor
    registry: process.Registry
    profile: str
    timeouts: Timeouts
    server_reuse: bool = True
    cancelled: threading.Event = field(default_factory=threading.Event)
    _counter: itertools.count[int] = field(default_factory=itertools.count)

    def unique(self, prefix: str) -> Path:
        path = self.work / f"{prefix}-{next(self._counter)}"
        path.mkdir(parents=True)
        return path

    def keep_log(self, source: Path | None, name: str) -> None:
        """Copy an adapter log into the report's log folder, redacted."""
        if source is None or not source.exists():
            return
        target = self.logs / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("ab") as out:
            out.write(self.redactor.bytes(source.read_bytes()))


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


def read_receipt_log(path: Path, offset: int) -> tuple[list[Any], list[CombinationError]]:
    """Intercept receipts appended after `offset`; malformed lines are errors."""
    requests: list[Any] = []
    problems: list[CombinationError] = []
    if not path.exists():
        return requests, problems
    with path.open("rb") as handle:
        handle.seek(offset)
        for number, line in enumerate(handle.read().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = loads(line, origin=f"receipt line {number}")
            except JsonError as exc:
                problems.append(CombinationError("receipts", "ReceiptMalformed", str(exc)))
                continue
            if not isinstance(entry, dict) or entry.get("kind") not in ("request", "discovery"):
                problems.append(
                    CombinationError(
                        "receipts",
                        "ReceiptMalformed",
                        f"line {number}: not a {{kind, message}} entry",
                    )
                )
            elif entry["kind"] == "request":
                requests.append(entry.get("message"))
    return requests, problems


class ServerStartError(RuntimeError):
    def __init__(self, error_class: str, message: str) -> None:
        super().__init__(message)
        self.error_class = error_class


class Server:
    """One running server adapter process over HTTP, with its control listener."""

    def __init__(
        self, ctx: RunContext, adapter: Adapter, transport: str, auth: str, scenario_file: Path
    ) -> None:
        self.ctx = ctx
        self.adapter = adapter
        self.transport = transport
        self.auth = auth
        self.home = ctx.unique(f"server-{adapter.name}-{auth}")
        self.owner = f"server:{self.home.name}"
        self.log = self.home / "server.log"
        self.receipt_log = self.home / "receipts.jsonl" if adapter.receipt_log else None
        self.readiness_file = self.home / "ready" / "readiness.json"
        self.readiness_file.parent.mkdir()
        self.scenario_file = scenario_file
        self.endpoint = ""
        self.control = ""
        self.spawned: process.Spawned | None = None
        self.leaks: list[str] = []  # processes other than the server left at stop

    def config(self) -> dict[str, Any]:
        auth, tls = self.ctx.trust.server_auth(self.auth, self.ctx.profile)
        config: dict[str, Any] = {
            "transport": self.transport,
            "readinessFile": str(self.readiness_file),
            "scenarioFile": str(self.scenario_file),
            "auth": auth,
        }
        if tls is not None:
            config["tls"] = tls
        if self.receipt_log is not None:
            config["receiptLog"] = str(self.receipt_log)
        return config

    def start(self) -> None:
        config_path = write_json(self.home / "server-config.json", self.config())
        command = [*self.adapter.commands["server"], "--config", str(config_path)]
        self.ctx.registry.owner_enter(self.owner)
        self.spawned = process.spawn(
            command, cwd=self.adapter.directory, owner=self.owner, label="server", log_path=self.log
        )
        try:
            process.wait_for_file(self.readiness_file, self.ctx.timeouts.startup, self.spawned)
            readiness = load_file(self.readiness_file)
        except process.WatchdogExpired as exc:
            raise ServerStartError("StartupTimeout", str(exc)) from None
        except ProcessLookupError as exc:
            raise ServerStartError("ServerExit", str(exc)) from None
        except JsonError as exc:
            raise ServerStartError("ReadinessMalformed", str(exc)) from None
        if not isinstance(readiness, dict) or not isinstance(readiness.get("controlEndpoint"), str):
            raise ServerStartError("ReadinessMalformed", "readiness needs a controlEndpoint")
        endpoint = readiness.get("endpoint")
        if self.transport == "http" and not isinstance(endpoint, str):
            raise ServerStartError("ReadinessMalformed", "an HTTP server must publish its endpoint")
        self.endpoint = endpoint or ""
        self.control = readiness["controlEndpoint"]
        try:
            health = call(self.control, "GET", "/health", timeout=self.ctx.timeouts.startup)
        except ControlError as exc:
            raise ServerStartError("HealthFailed", str(exc)) from None
        if not isinstance(health, dict) or health.get("ready") is not True:
            raise ServerStartError("HealthFailed", "GET /health did not answer {ready: true}")

    def reset(self, scenario_file: Path) -> None:
        answer = call(self.control, "POST", "/reset", {"scenarioFile": str(scenario_file)})
        if not isinstance(answer, dict) or answer.get("reset") is not True:
            raise ControlError("POST /reset did not answer {reset: true}")
        self.scenario_file = scenario_file

    def receipt_offset(self) -> int:
        if self.receipt_log is None or not self.receipt_log.exists():
            return 0
        return self.receipt_log.stat().st_size

    def receipts(self, offset: int) -> tuple[list[Any] | None, list[CombinationError]]:
        if self.receipt_log is not None:
            return read_receipt_log(self.receipt_log, offset)
        try:
            answer = call(self.control, "GET", "/receipts")
        except ControlError as exc:
            return None, [CombinationError("receipts", "ReceiptsUnavailable", str(exc))]
        if not isinstance(answer, dict) or not isinstance(answer.get("requests"), list):
            return None, [CombinationError("receipts", "ReceiptMalformed", "GET /receipts shape")]
        return answer["requests"], []

    def stop(self) -> None:
        """Shut down politely, then kill the tree; remember anything left behind."""
        if self.spawned is not None and self.spawned.popen.poll() is None and self.control:
            try:
                call(self.control, "POST", "/shutdown", {}, timeout=self.ctx.timeouts.shutdown)
                process.wait_exit(self.spawned, self.ctx.timeouts.shutdown)
            except (ControlError, process.WatchdogExpired):
                pass
        if self.spawned is not None:
            self.spawned.close()
        main = self.spawned.pid if self.spawned is not None else -1
        killed = process.kill_owner(self.owner)
        self.leaks = [f"{name} (pid {pid})" for pid, name in sorted(killed.items()) if pid != main]
        self.ctx.registry.owner_exit(self.owner)


def stdio_server(
    ctx: RunContext, server: Adapter, scenario_file: Path
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
    }
    command = list(server.commands["server"])
    if server.receipt_log:
        config["receiptLog"] = str(receipt_log)
    else:  # a contract v1 server: receipts come from a relay in front of it
        command = [sys.executable, relay.__file__, "--log", str(receipt_log), "--", *command]
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
) -> ClientRun:
    """Run one client process over one scenario file and collect its report."""
    home = ctx.unique(f"client-{adapter.name}")
    owner = f"client:{home.name}"
    report_file = home / "report.json"
    client_auth, tls = ctx.trust.client_auth(auth, ctx.profile)
    config: dict[str, Any] = {
        "transport": transport,
        "scenarioFile": str(scenario_file),
        "reportFile": str(report_file),
        "auth": client_auth,
        "timeoutMs": int(ctx.timeouts.client * 1000 / 4),
    }
    if tls is not None:
        config["tls"] = tls
    if endpoint is not None:
        config["endpoint"] = endpoint
    if stdio_server is not None:
        config.update(stdio_server)
    config_path = write_json(home / "client-config.json", config)
    log = home / "client.log"
    errors: list[CombinationError] = []
    exit_code: int | None = None
    started = time.monotonic()
    ctx.registry.owner_enter(owner)
    try:
        spawned = process.spawn(
            [*adapter.commands["client"], "--config", str(config_path)],
            cwd=adapter.directory,
            owner=owner,
            label="client",
            log_path=log,
        )
        try:
            exit_code = process.wait_exit(spawned, ctx.timeouts.client)
        except process.WatchdogExpired as exc:
            errors.append(CombinationError(stage, "ClientTimeout", str(exc)))
        finally:
            spawned.close()
        leftovers = process.owned_processes(owner)
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
            CombinationError(stage, "ClientSpawn", f"cannot start client: {exc.strerror}")
        )
    finally:
        process.kill_owner(owner)
        ctx.registry.owner_exit(owner)
    seconds = time.monotonic() - started
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
    return ClientRun(report=report, exit_code=exit_code, errors=errors, log=log, seconds=seconds)
