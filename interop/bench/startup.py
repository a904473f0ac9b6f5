"""Process start-up cost per adapter, measured through the harness's own runtime.

Server: spawn to a `GET /health` answer (readiness file written, control
listener up), over HTTP without authentication, with an empty core scenario
file. Client: spawn to exit, with an empty scenario file against that server
(the process's fixed cost: runtime start, imports, schema loading, the report).
Each is the median of `repeat` starts.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.runtime.client import run_client
from interop.runtime.context import Timeouts, run_context
from interop.runtime.server import Server


def startup_costs(adapters: dict[str, Adapter], logs: Path, repeat: int = 3) -> dict[str, Any]:
    """{adapter: {"serverMs", "clientMs"}} (medians), or {"error"} for one that failed."""
    costs: dict[str, Any] = {}
    with run_context(
        logs=logs, auth=["none"], profile="strict", timeouts=Timeouts(startup=30, client=60)
    ) as ctx:
        empty = ctx.work / "empty-core.json"
        empty.write_text(json.dumps({"version": 1, "scenarios": []}), encoding="utf-8")
        for name, adapter in sorted(adapters.items()):
            servers: list[float] = []
            clients: list[float] = []
            problem = ""
            for _ in range(repeat):
                server = Server(ctx, adapter, "http", "none", empty)
                started = time.monotonic()
                try:
                    server.start()
                    servers.append(time.monotonic() - started)
                    run = run_client(
                        ctx,
                        adapter,
                        stage="bench",
                        scenario_file=empty,
                        transport="http",
                        auth="none",
                        endpoint=server.endpoint,
                    )
                    if run.errors or run.exit_code != 0:
                        problem = "; ".join(e.message for e in run.errors) or (
                            f"the client exited with status {run.exit_code}"
                        )
                        break
                    clients.append(run.seconds)
                except Exception as exc:  # a bench row, never a crash
                    problem = f"{type(exc).__name__}: {exc}"
                    break
                finally:
                    server.stop()
            if problem:
                costs[name] = {"error": problem}
            else:
                costs[name] = {
                    "serverMs": round(statistics.median(servers) * 1000, 1),
                    "clientMs": round(statistics.median(clients) * 1000, 1),
                }
    return costs
