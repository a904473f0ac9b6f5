"""Runs rows without expectations through several clients, each against its own server.

Each client gets a server process of the same server adapter, so the
server's receipts belong to one client and prove that the client sent every
request exactly once, unchanged. Rows go in batches (one client process per
batch), which keeps every client run well inside its watchdog however many
rows a fuzz run has. Clients run in parallel; a client's batches run in order.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.fuzz.generate import FuzzCase
from interop.jsonvalue import dumps_canonical
from interop.results import CombinationError
from interop.runtime.client import run_client, stdio_server
from interop.runtime.context import RunContext
from interop.runtime.control import ControlError
from interop.runtime.process import describe_exit
from interop.runtime.receipts import read_receipt_log
from interop.runtime.server import Server, ServerStartError
from interop.suites.common import check_receipts, check_report


@dataclass
class ClientRows:
    """What one client reported for a list of rows, and what went wrong around it."""

    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: list[CombinationError] = field(default_factory=list)
    seconds: float = 0.0


def write_rows(path: Path, cases: list[FuzzCase]) -> Path:
    """A scenario file without answers: what both the server and a blind client read."""
    document = {"version": 1, "scenarios": [case.scenario for case in cases]}
    path.write_text(dumps_canonical(document), encoding="utf-8")
    return path


class Executor:
    """Owns one server per client for the whole fuzz run (reset between batches)."""

    def __init__(
        self,
        ctx: RunContext,
        adapters: dict[str, Adapter],
        clients: list[str],
        server: str,
        transport: str,
        auth: str,
        batch_size: int,
        jobs: int,
    ) -> None:
        self.ctx = ctx
        self.adapters = adapters
        self.clients = clients
        self.server = adapters[server]
        self.transport = transport
        self.auth = auth
        self.batch_size = max(1, batch_size)
        self.jobs = max(1, jobs)
        self._servers: dict[str, Server] = {}
        self._lock = threading.Lock()

    def run(self, cases: list[FuzzCase], label: str) -> dict[str, ClientRows]:
        """Every client over every row; returns each client's entries by row id."""
        batches = [
            cases[start : start + self.batch_size]
            for start in range(0, len(cases), self.batch_size)
        ]
        files = [
            write_rows(self.ctx.unique(f"{label}-{n}") / "rows.json", batch)
            for n, batch in enumerate(batches)
        ]
        results = {name: ClientRows() for name in self.clients}
        with ThreadPoolExecutor(max_workers=min(self.jobs, len(self.clients))) as pool:
            futures = [
                pool.submit(self._client_batches, name, batches, files, results[name], label)
                for name in self.clients
            ]
            for future in futures:
                future.result()
        return results

    def _client_batches(
        self,
        name: str,
        batches: list[list[FuzzCase]],
        files: list[Path],
        into: ClientRows,
        label: str,
    ) -> None:
        for number, (batch, path) in enumerate(zip(batches, files, strict=True)):
            if self.ctx.cancelled.is_set():
                into.errors.append(CombinationError(label, "Cancelled", "the run was interrupted"))
                return
            stage = f"{name}[{label} {number + 1}/{len(batches)}]"
            entries, errors, seconds = self._one_batch(name, batch, path, stage)
            into.entries.update(entries)
            into.errors.extend(errors)
            into.seconds += seconds

    def _one_batch(
        self, name: str, batch: list[FuzzCase], path: Path, stage: str
    ) -> tuple[dict[str, dict[str, Any]], list[CombinationError], float]:
        client = self.adapters[name]
        requests = {case.id: case.scenario["request"] for case in batch}
        if self.transport == "stdio":
            keys, receipt_log = stdio_server(self.ctx, self.server, path)
            run = run_client(
                self.ctx,
                client,
                stage=stage,
                scenario_file=path,
                transport="stdio",
                auth="none",
                stdio_server=keys,
            )
            receipts: list[Any] | None
            receipts, problems = read_receipt_log(receipt_log, 0)
        else:
            server, start_error = self._server_for(name, path)
            if start_error is not None:
                return {}, [start_error], 0.0
            offset = server.receipt_offset()
            run = run_client(
                self.ctx,
                client,
                stage=stage,
                scenario_file=path,
                transport="http",
                auth=self.auth,
                endpoint=server.endpoint,
            )
            receipts, problems = server.receipts(offset)
        self.ctx.keep_log(run.log, f"{name}/client.log")
        errors = list(run.errors) + problems
        entries: dict[str, dict[str, Any]] = {}
        if run.report is not None:
            entries, report_errors = check_report(
                run.report, client.language, set(requests), client.blind, stage
            )
            errors.extend(report_errors)
            sent = {i for i, e in entries.items() if e.get("status") != "unsupported"}
            if receipts is None:
                errors.append(CombinationError(stage, "ReceiptsUnavailable", "no receipts"))
            else:
                errors.extend(check_receipts(receipts, requests, sent, stage))
        if run.exit_code not in (0, None) and client.blind:
            errors.append(
                CombinationError(stage, "ClientExit", f"the client {describe_exit(run.exit_code)}")
            )
        return entries, errors, run.seconds

    def _server_for(self, name: str, path: Path) -> tuple[Server, CombinationError | None]:
        """This client's running server, now serving `path`; started on first use."""
        existing = self._servers.get(name)
        if existing is not None and self.server.server_reuse and self.ctx.server_reuse:
            try:
                existing.reset(path)
                return existing, None
            except ControlError as exc:
                return existing, CombinationError("server-reset", "ResetFailed", str(exc))
        if existing is not None:
            existing.stop()
        server = Server(self.ctx, self.server, "http", self.auth, path)
        with self._lock:
            self._servers[name] = server
        try:
            server.start()
        except ServerStartError as exc:
            return server, CombinationError("server-start", exc.error_class, str(exc))
        return server, None

    def close(self) -> list[CombinationError]:
        """Stop every server; a process a server left behind is an error."""
        errors: list[CombinationError] = []
        for name, server in sorted(self._servers.items()):
            server.stop()
            self.ctx.keep_log(server.log, f"{name}/server.log")
            if server.leaks:
                errors.append(
                    CombinationError(
                        "server-stop",
                        "ProcessLeak",
                        f"the server of {name} left {len(server.leaks)} process(es) running",
                    )
                )
        return errors
