"""Scripted server faults [ext] (docs/LIFECYCLE.md, "Operational failures"): an
entry of ``responseSequences`` that is exactly ``{"fault": KIND}`` with a known
``KIND``, and ``observeFaults``. Shared by every step server that serves
scripted sequences; what a fault does to the answer is each server's."""

from __future__ import annotations

from typing import Any

SERVER_ERROR, MALFORMED_FAULT, TIMEOUT = "server-error", "malformed", "timeout"
FAULTS = (SERVER_ERROR, MALFORMED_FAULT, TIMEOUT)
MALFORMED_BODY = b'{"jsonrpc": "2.0", "id": '  # 25 bytes, not JSON
SILENT = "silent"  # an ``observeFaults`` entry: the observation recorded, never answered


def fault_of(entry: Any) -> str | None:
    """The fault a ``responseSequences`` entry scripts (``{"fault": KIND}``), else None
    (an entry with another ``fault`` is sent unchanged, like any response)."""
    if isinstance(entry, dict) and set(entry) == {"fault"} and entry["fault"] in FAULTS:
        return str(entry["fault"])
    return None
