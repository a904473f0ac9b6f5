"""Answering one `hooks/intercept` request from the scenario file.

The request names its scenario by `params.event.id`, and its JSON-RPC `id` must
be that event id. The receipt is recorded, a named barrier is waited for, and
the scenario's scripted response is answered. Like the upstream servers, it
refuses to send a malformed scripted response unless the scenario says
`expectError: true` (then the malformed response is the point of the row).
"""

from __future__ import annotations

from typing import Any

from upstream_emulator.board import Board
from upstream_emulator.jsonequal import same

BARRIER_SECONDS = 30.0


class Responder:
    def __init__(self, scenarios: list[dict[str, Any]], board: Board) -> None:
        self._scenarios = {row["id"]: row for row in scenarios}
        self._board = board

    def intercept(self, message: Any) -> Any | None:
        """The scripted response to send, or None when the request is refused."""
        if not isinstance(message, dict) or message.get("method") != "hooks/intercept":
            return None
        params = message.get("params")
        event = params.get("event") if isinstance(params, dict) else None
        event_id = event.get("id") if isinstance(event, dict) else None
        if not isinstance(event_id, str) or not same(message.get("id"), event_id):
            return None
        scenario = self._scenarios.get(event_id)
        if scenario is None:
            return None
        self._board.record(event_id, message)
        barrier = scenario.get("barrier")
        if isinstance(barrier, str):
            self._board.wait(barrier, BARRIER_SECONDS)
        response = scenario.get("response")
        if scenario.get("expectError") is not True and not _well_formed(response, event_id):
            return None
        return response


def _well_formed(response: Any, request_id: str) -> bool:
    if not isinstance(response, dict) or response.get("jsonrpc") != "2.0":
        return False
    result = response.get("result")
    return (
        same(response.get("id"), request_id)
        and isinstance(result, dict)
        and isinstance(result.get("effects"), list)
    )
