"""One running server adapter process over HTTP, with its control listener."""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from interop.contract.check import contract_problem
from interop.contract.manifest import Adapter
from interop.jsonvalue import JsonError, load_file
from interop.results import CombinationError
from interop.runtime import process
from interop.runtime.context import RunContext, write_json
from interop.runtime.control import ControlError, call
from interop.runtime.receipts import read_receipt_log, unwrap_receipts


class ServerStartError(RuntimeError):
    def __init__(self, error_class: str, message: str) -> None:
        super().__init__(message)
        self.error_class = error_class


def spawn_server(
    ctx: RunContext,
    adapter: Adapter,
    command: list[str],
    *,
    owner: str,
    log: Path,
    stdout: int | IO[bytes] | None = None,
    stdin: int | IO[bytes] | None = subprocess.DEVNULL,
    env: dict[str, str] | None = None,
) -> process.Spawned:
    """Start a server process in the adapter's folder; a failure to start is a
    ServerStartError that names the command (or the run's cancellation)."""
    try:
        return ctx.registry.spawn(
            command,
            cwd=adapter.directory,
            owner=owner,
            adapter=adapter.name,
            label="server",
            log_path=log,
            stdout=stdout,
            stdin=stdin,
            env=env,
        )
    except OSError as exc:
        raise ServerStartError(
            "ServerSpawn", process.spawn_failure("server", command, adapter, exc)
        ) from None
    except process.RunCancelled as exc:
        raise ServerStartError("Cancelled", str(exc)) from None


def log_tail(ctx: RunContext, log: Path, lines: int = 5) -> str:
    """The last lines of a process's log, redacted, for an error message."""
    if not log.exists():
        return ""
    text = ctx.redactor(log.read_text(encoding="utf-8", errors="replace"))
    tail = [line for line in text.splitlines() if line.strip()][-lines:]
    return ("; its log ends: " + " | ".join(tail)) if tail else ""


class Server:
    """One running server adapter process, with its control listener. Over HTTP
    clients reach its endpoint; over stdio (a server the harness holds itself)
    `exchange` writes a line to its stdin and reads its answer line."""

    def __init__(
        self,
        ctx: RunContext,
        adapter: Adapter,
        transport: str,
        auth: str,
        scenario_file: Path,
        *,
        command_key: str = "server",
        extra: dict[str, Any] | None = None,
        profile: str | None = None,
    ) -> None:
        self.command_key = command_key
        self.profile = profile or ctx.profile
        self.extra = dict(extra or {})
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
        self.upload_endpoint: str | None = None
        self.spawned: process.Spawned | None = None
        self.leaks: list[str] = []  # processes other than the server left at stop
        self.stdout_log: Path | None = None  # stdout apart from the log (smoke checks it)
        self.shapes: dict[str, str] = {}  # the upstream shapes its answers came in
        self._lines: queue.Queue[bytes] = queue.Queue()  # stdio: its stdout lines
        self._writing = threading.Lock()

    def config(self) -> dict[str, Any]:
        auth, tls = self.ctx.trust.server_auth(self.auth, self.profile)
        config: dict[str, Any] = {
            "transport": self.transport,
            "readinessFile": str(self.readiness_file),
            "scenarioFile": str(self.scenario_file),
            "auth": auth,
            "schemaDir": str(self.ctx.schema_dir(self.adapter)),
        }
        if tls is not None:
            config["tls"] = tls
        if self.receipt_log is not None and self.command_key == "server":
            config["receiptLog"] = str(self.receipt_log)
        config.update(self.extra)
        return config

    def start(self) -> None:
        config_path = write_json(self.home / "server-config.json", self.config())
        command = [*self.adapter.commands[self.command_key], "--config", str(config_path)]
        started = time.monotonic()
        stdout = self.stdout_log.open("wb") if self.stdout_log is not None else None
        piped = self.transport == "stdio"
        try:
            self.spawned = spawn_server(
                self.ctx,
                self.adapter,
                command,
                owner=self.owner,
                log=self.log,
                stdout=subprocess.PIPE if piped else stdout,
                stdin=subprocess.PIPE if piped else subprocess.DEVNULL,
            )
        finally:
            if stdout is not None:
                stdout.close()
        if piped:
            threading.Thread(target=self._read_lines, daemon=True).start()
        try:
            process.wait_for_file(self.readiness_file, self.ctx.timeouts.startup, self.spawned)
            readiness = load_file(self.readiness_file)
        except process.WatchdogExpired as exc:
            raise ServerStartError("StartupTimeout", f"{exc}{self._log_tail()}") from None
        except ProcessLookupError:
            raise ServerStartError(
                "ServerExit",
                f"the server {self.exit_description()} before it was ready{self._log_tail()}",
            ) from None
        except JsonError as exc:
            raise ServerStartError("ReadinessMalformed", str(exc)) from None
        problem = contract_problem("readiness.schema.json", readiness)
        if problem is not None:
            raise ServerStartError("ReadinessMalformed", f"readiness file {problem}")
        endpoint = readiness["endpoint"]
        if self.transport == "http" and not isinstance(endpoint, str):
            raise ServerStartError("ReadinessMalformed", "an HTTP server must publish its endpoint")
        self.endpoint = endpoint or ""
        self.control = readiness["controlEndpoint"]
        self.upload_endpoint = readiness.get("uploadEndpoint")
        remaining = max(0.5, self.ctx.timeouts.startup - (time.monotonic() - started))
        try:
            health = call(self.control, "GET", "/health", timeout=remaining)
        except ControlError as exc:
            raise ServerStartError("HealthFailed", str(exc)) from None
        problem = contract_problem("control.schema.json#/$defs/health", health)
        if problem is not None:
            raise ServerStartError("HealthFailed", f"GET /health answer {problem}")

    def _read_lines(self) -> None:
        assert self.spawned is not None and self.spawned.popen.stdout is not None
        for line in self.spawned.popen.stdout:
            self._lines.put(line.rstrip(b"\n"))
        self._lines.put(b"")  # EOF

    def exchange(self, line: bytes, *, answer: bool, timeout: float) -> bytes | None:
        """Stdio: write one line to the server; with `answer`, its next line (b""
        once its stdout closed, None when none came in `timeout`). One at a time."""
        assert self.spawned is not None and self.spawned.popen.stdin is not None
        with self._writing:
            try:
                self.spawned.popen.stdin.write(line.rstrip(b"\n") + b"\n")
                self.spawned.popen.stdin.flush()
            except OSError:
                return b""
            if not answer:
                return b""
            try:
                return self._lines.get(timeout=timeout)
            except queue.Empty:
                return None

    def exit_description(self) -> str | None:
        """None while the server runs, else how it ended (`was killed by signal 9 ...`)."""
        if self.spawned is None:
            return "never started"
        code = self.spawned.popen.poll()
        return None if code is None else process.describe_exit(code)

    def ended(self) -> str | None:
        """How the server ended, or None while it serves. A server whose control
        listener no longer answers is on its way out (a process closes its sockets
        before it becomes reapable): its exit is awaited, bounded, not raced."""
        found = self.exit_description()
        if found is not None or self.spawned is None or not self.control:
            return found
        try:
            call(self.control, "GET", "/health", timeout=2.0)
            return None
        except ControlError:
            try:
                process.wait_exit(self.spawned, self.ctx.timeouts.shutdown)
            except process.WatchdogExpired:
                return None
            return self.exit_description()

    def _log_tail(self, lines: int = 5) -> str:
        return log_tail(self.ctx, self.log, lines)

    def reset(self, scenario_file: Path) -> None:
        answer = call(self.control, "POST", "/reset", {"scenarioFile": str(scenario_file)})
        problem = contract_problem("control.schema.json#/$defs/reset", answer)
        if problem is not None:
            raise ControlError(f"POST /reset answer {problem}")
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
        problem = contract_problem("control.schema.json#/$defs/receipts", answer)
        if problem is not None:
            return None, [
                CombinationError("receipts", "ReceiptMalformed", f"GET /receipts answer {problem}")
            ]
        requests, problems, shape = unwrap_receipts(answer["requests"])
        if shape is not None:
            self.shapes["receipts"] = shape
        return requests, problems

    def entries(
        self, schema: str = "lifecycle-control.schema.json#/$defs/receipts"
    ) -> tuple[list[Any] | None, list[CombinationError]]:
        """The receipt entries of a suite past core (`GET /receipts` → `{entries}`)."""
        try:
            answer = call(self.control, "GET", "/receipts")
        except ControlError as exc:
            return None, [CombinationError("receipts", "ReceiptsUnavailable", str(exc))]
        problem = contract_problem(schema, answer)
        if problem is not None:
            return None, [
                CombinationError("receipts", "ReceiptMalformed", f"GET /receipts answer {problem}")
            ]
        return answer["entries"], []

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
