"""``hooks/capabilities`` answered with the adapter's discovery manifest
(``sdk/manifest.py``), for a server whose suite has no manifest of its own."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ..sdk import rpc
from ..sdk.manifest import PROTOCOL_VERSION, discovery_result
from ..sdk.schemas import CAPABILITIES_REQUEST

if TYPE_CHECKING:
    from ..sdk.schemas import SchemaSet


def discovery_answer(schemas: SchemaSet, message: dict[str, Any]) -> rpc.Answer:
    """``hooks/capabilities``: the discovery manifest (an unknown version -32001;
    a request the schema refuses, when the set has that schema, -32602)."""
    params = message.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    if isinstance(version, str) and version != PROTOCOL_VERSION:
        return rpc.Answer(
            rpc.error(
                message["id"],
                rpc.UNSUPPORTED_VERSION,
                "unsupported_protocol_version",
                {"supported": [PROTOCOL_VERSION]},
            )
        )
    if CAPABILITIES_REQUEST in schemas.names():
        problem = schemas.error(CAPABILITIES_REQUEST, message)
        if problem:
            text = f"invalid discovery request: {problem}"
            print(f"ahp_py server: {text}", file=sys.stderr, flush=True)
            return rpc.Answer(
                rpc.error(message["id"], rpc.INVALID_PARAMS, "invalid capabilities request")
            )
    return rpc.Answer({"jsonrpc": "2.0", "id": message["id"], "result": discovery_result()})
