"""A contract v1 receiver fixture: an SDK's own non-core adapter, run by upstream's
convention rather than from adapter.json, with the control calls our clients make
served in front of it.

Upstream's elicitation and compaction-wire drivers know one command per SDK
language (an `interop/<name>.py` run with the SDK's `.venv/bin/python` and
`PYTHONPATH=src`, `interop/<name>.mjs` with node, Go's `cmd/<name>`, Rust's
`target/debug/<name>`), start its receiver from the SDK's root and wait for one
`{"endpoint": "http://127.0.0.1:PORT"}` line on its stdout (upstream
`interop/elicitation_matrix.py`, `compaction_wire_matrix.py`). Such a receiver has no
control listener of ours: here `/health`, `/mark`, `/receipts` and `/shutdown`
are served by the harness (suites/v1control.py), which reads the receiver's own
record (each suite says how: `Fixture.upstream_entries`) and places every mark
where that record stood when the mark came. Nothing here judges: the suites' verifiers do.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from interop.contract.manifest import Adapter
from interop.jsonvalue import JsonError, loads
from interop.results import CombinationError
from interop.runtime import process
from interop.runtime.context import RunContext
from interop.runtime.control import ControlError, call
from interop.runtime.listener import Listener
from interop.runtime.server import ServerStartError, log_tail, spawn_server
from interop.suites import v1control
from interop.suites.v1control import Entries


def is_v1(adapter: Adapter) -> bool:
    """An SDK checkout on contract v1: no extensions of ours (ours are blind)."""
    return not adapter.blind and adapter.suites is None


def find_command(
    adapter: Adapter, names: tuple[str, str, str, str], what: str, source: str
) -> tuple[list[str], dict[str, str]] | str:
    """The SDK's non-core adapter `names` (its .py, .mjs, Go cmd/ and Rust binary, in
    upstream's order) as a command and environment, or why there is none."""
    root = adapter.directory
    env = {**os.environ}
    python, node, go, rust = names
    if (root / python).is_file():
        venv = root / ".venv" / "bin" / "python"  # upstream's interpreter; else PATH's
        source_dir = str(root / "src")  # upstream hands every adapter the SDK's src
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (source_dir, env.get("PYTHONPATH"))))
        return [".venv/bin/python" if venv.exists() else "python3", python], env
    if (root / node).is_file():
        return ["node", node], env
    if (root / go).is_dir():
        return ["go", "run", "./" + go], env
    if (root / rust).is_file():
        return [rust], env
    return (
        f"{adapter.name} has none of {', '.join(names)} in {root}: contract v1 runs an "
        f"SDK's {what} adapter by that convention, not from adapter.json ({source})"
    )


@dataclass
class PlanRun:
    """One run of a contract v1 command fed a plan on stdin: its exit status and what
    it printed, or why it did not run to its end (`failed`: spawn, cancelled, timeout)."""

    code: int | None = None
    printed: str = ""
    failed: str | None = None  # "spawn", "cancelled" or "timeout"
    why: str = ""


def run_plan(
    ctx: RunContext,
    adapter: Adapter,
    command: list[str],
    env: dict[str, str],
    plan_file: Path,
    log: Path,
    timeout: float,
) -> PlanRun:
    """`command` in the SDK's root with `plan_file` on stdin, stdout kept beside it, its
    stderr in `log`, the whole process tree ended after it (upstream's drivers run the
    non-core adapters' senders and hosts so)."""
    out_file = plan_file.with_suffix(".out")
    owner = f"client:{plan_file.parent.name}"
    with plan_file.open("rb") as stdin, out_file.open("wb") as stdout:
        try:
            spawned = ctx.registry.spawn(
                command,
                cwd=adapter.directory,
                owner=owner,
                adapter=adapter.name,
                label="client",
                log_path=log,
                stdin=stdin,
                stdout=stdout,
                env=env,
            )
        except OSError as exc:
            why = process.spawn_failure("client", command, adapter, exc)
            return PlanRun(failed="spawn", why=why)
        except process.RunCancelled as exc:
            return PlanRun(failed="cancelled", why=str(exc))
    try:
        code = process.wait_exit(spawned, timeout)
    except process.WatchdogExpired:
        return PlanRun(failed="timeout")
    finally:
        spawned.close()
        process.kill_owner(owner)
        ctx.registry.owner_exit(owner)
    return PlanRun(code=code, printed=out_file.read_text(encoding="utf-8", errors="replace"))


class Fixture:
    """A contract v1 receiver process with our control calls served in front of it.
    Quacks like `Server` where a suite uses one. A suite's subclass starts it
    (`launch`) and reads its record (`upstream_entries`)."""

    source = "upstream's driver"  # the upstream file its convention comes from

    def __init__(self, ctx: RunContext, adapter: Adapter, label: str) -> None:
        self.ctx = ctx
        self.adapter = adapter
        self.home = ctx.unique(f"{label}-{adapter.name}")
        self.owner = f"server:{self.home.name}"
        self.log = self.home / "server.log"
        self.base = ""
        self.endpoint = ""
        self.upload_endpoint: str | None = None
        self.control = ""
        self.spawned: process.Spawned | None = None
        self.leaks: list[str] = []
        self._shim: Listener | None = None
        self._record = v1control.Record(self.upstream_entries)

    def start(self) -> None:
        """Write what the receiver needs, then `launch` it."""
        raise NotImplementedError

    def upstream_entries(self) -> Entries:
        raise NotImplementedError

    def launch(self, command: list[str], env: dict[str, str]) -> None:
        """Spawn the receiver in the SDK's root, read its endpoint line (`base`) and
        serve the control calls (`control`)."""
        self.spawned = spawn_server(
            self.ctx,
            self.adapter,
            command,
            owner=self.owner,
            log=self.log,
            stdout=subprocess.PIPE,
            env=env,
        )
        line = self._first_line(self.ctx.timeouts.startup)
        try:
            announced = loads(line, origin="the receiver's first stdout line")
        except JsonError as exc:
            raise ServerStartError("ReadinessMalformed", str(exc)) from None
        endpoint = announced.get("endpoint") if isinstance(announced, dict) else None
        parts = urlsplit(endpoint) if isinstance(endpoint, str) else None
        if parts is None or parts.scheme != "http" or parts.hostname != "127.0.0.1":
            raise ServerStartError(
                "ReadinessMalformed",
                f'the receiver must print {{"endpoint": "http://127.0.0.1:PORT"}} first, '
                f"printed {line[:200]!r} ({self.source})",
            )
        self.base = str(endpoint).rstrip("/")
        self._serve_control()

    def _first_line(self, timeout: float) -> str:
        assert self.spawned is not None and self.spawned.popen.stdout is not None
        stream = self.spawned.popen.stdout
        deadline = time.monotonic() + timeout
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([stream], [], [], max(left, 0.0))
            if not ready:
                raise ServerStartError(
                    "StartupTimeout", f"the receiver printed no endpoint line in {timeout:.0f}s"
                )
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                raise ServerStartError(
                    "ServerExit",
                    f"the receiver {self.exit_description()} before it printed its endpoint"
                    f"{self.log_tail()}",
                )
            data += chunk
        first, _, rest = data.partition(b"\n")
        log = self.log

        def drain() -> None:  # anything more it prints goes to its log
            with log.open("ab") as out:
                out.write(rest)
                for more in iter(lambda: os.read(stream.fileno(), 65536), b""):
                    out.write(more)

        threading.Thread(target=drain, daemon=True).start()
        return first.decode("utf-8", errors="replace")

    def log_tail(self) -> str:
        return log_tail(self.ctx, self.log)

    def _serve_control(self) -> None:
        self._shim, self.control = v1control.serve(self._record)

    def entries(self, schema: str = "") -> tuple[list[Any] | None, list[CombinationError]]:
        try:
            answer = call(self.control, "GET", "/receipts")
        except ControlError as exc:
            return None, [CombinationError("receipts", "ReceiptsUnavailable", str(exc))]
        return answer["entries"], []

    def exit_description(self) -> str | None:
        if self.spawned is None:
            return "never started"
        code = self.spawned.popen.poll()
        return None if code is None else process.describe_exit(code)

    def stop(self) -> None:
        if self._shim is not None:
            self._shim.close()
        if self.spawned is not None:  # upstream: terminate, 5 s, kill
            if self.spawned.popen.poll() is None:
                self.spawned.popen.terminate()
                with contextlib.suppress(process.WatchdogExpired):
                    process.wait_exit(self.spawned, 5.0)
            if self.spawned.popen.stdout is not None:
                self.spawned.popen.stdout.close()
            self.spawned.close()
        main = self.spawned.pid if self.spawned is not None else -1
        killed = process.kill_owner(self.owner)
        self.leaks = [f"{name} (pid {pid})" for pid, name in sorted(killed.items()) if pid != main]
        self.ctx.registry.owner_exit(self.owner)
