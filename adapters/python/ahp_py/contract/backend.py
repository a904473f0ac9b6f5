"""Scripted replies by scenario id: the server side every suite shares.

``Backend.dispatch`` takes one parsed JSON-RPC message: it records the receipt
(before anything else, so it is flushed before any reply), answers a
notification with nothing, and hands a request to the suite's method table.
A suite's method finds its row with ``scenario`` and answers with
``scripted``: the row's ``response`` unchanged, held at the row's ``barrier``
if it names one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from ..sdk import rpc
from ..sdk.manifest import discovery_manifest
from .barriers import Barriers, HeldReplies
from .config import ScenarioFileError, read_scenarios
from .receipts import NOTIFICATION, Receipts, kind_of

Method = Callable[[dict[str, Any]], rpc.Answer]


def log(text: str) -> None:
    print(f"ahp_py server: {text}", file=sys.stderr, flush=True)


def scenario_table(rows: list[dict[str, Any]], origin: str) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["id"] in table:
            raise ScenarioFileError(f"{origin}: duplicate scenario id {row['id']!r}")
        table[row["id"]] = row
    return table


class Backend:
    def __init__(
        self,
        receipts: Receipts,
        barriers: Barriers,
        methods: Mapping[str, Method] | None = None,
    ) -> None:
        self.receipts = receipts
        self.barriers = barriers
        self.methods: dict[str, Method] = dict(methods or {})
        self.scenarios: dict[str, dict[str, Any]] = {}
        self.held = HeldReplies(barriers)

    def load_rows(self, rows: list[dict[str, Any]], origin: str) -> None:
        self.scenarios = scenario_table(rows, origin)

    def load(self, scenario_file: str) -> None:
        self.load_rows(read_scenarios(scenario_file), scenario_file)

    def reset(self, scenario_file: str | None) -> None:
        """``POST /reset``: load the file (if any; a bad one changes nothing and
        raises ScenarioFileError), then clear the receipt lists and every release."""
        if scenario_file is not None:
            self.load(scenario_file)
        self.barriers.reset()
        self.receipts.clear()

    def scenario(self, request_id: Any) -> dict[str, Any] | None:
        return self.scenarios.get(request_id) if isinstance(request_id, str) else None

    def scripted(self, row: dict[str, Any]) -> rpc.Answer:
        """The row's ``response`` as is (even invalid, even null), behind its barrier."""
        barrier = row.get("barrier")
        if not isinstance(barrier, str):
            return rpc.Answer(row.get("response"))
        return self.held.answer(barrier, row.get("response"))

    def manifest(self) -> dict[str, Any]:
        """The core discovery manifest (what ``suites/core.py`` answers
        ``hooks/capabilities`` with); ``GET /capabilities`` answers its
        ``tool.before`` capabilities without a receipt."""
        return discovery_manifest()

    def release_all(self) -> None:
        self.barriers.release_all()

    def drain(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until every held reply is written."""
        self.held.drain(timeout)

    def dispatch(self, message: Any) -> rpc.Answer:
        if not isinstance(message, dict):
            return rpc.Answer(rpc.error(None, rpc.INVALID_REQUEST, "not a single JSON-RPC object"))
        kind = kind_of(message)
        self.receipts.record(kind, message)
        if kind == NOTIFICATION:
            return rpc.NO_REPLY
        name = message.get("method")
        method = self.methods.get(name) if isinstance(name, str) else None
        if method is None:
            return rpc.Answer(rpc.error(message["id"], rpc.METHOD_NOT_FOUND, "method not found"))
        try:
            return method(message)
        except Exception as exc:  # one broken request must not stop the server
            log(f"internal error: {type(exc).__name__}: {exc}")
            return rpc.Answer(rpc.error(message["id"], rpc.INTERNAL_ERROR, "internal error"))
