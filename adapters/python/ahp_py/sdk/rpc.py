"""JSON-RPC 2.0 as AHP uses it: error codes, error messages, and a server's answer."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .record import record

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION = -32001

CAPABILITIES = "hooks/capabilities"
INTERCEPT = "hooks/intercept"
OBSERVE = "hooks/observe"


def error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response; an id that is not a string or number becomes null."""
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        request_id = None
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def parse_error() -> dict[str, Any]:
    return error(None, PARSE_ERROR, "parse error")


def is_notification(message: Any) -> bool:
    """A JSON-RPC object without an ``id`` member gets no reply."""
    return isinstance(message, dict) and "id" not in message


def observation(protocol_version: Any, event: Any) -> dict[str, Any]:
    """The canonical ``hooks/observe`` notification of one event."""
    return {
        "jsonrpc": "2.0",
        "method": OBSERVE,
        "params": {"protocolVersion": protocol_version, "event": event},
    }


@record
class Answer:
    """What a server sends back for one parsed message.

    ``reply`` is sent as is (it may be any JSON value, ``None`` included) unless
    ``has_reply`` is false (a notification). With a ``gate``, the reply waits
    until the gate is set; the transport keeps serving other messages meanwhile
    and calls ``sent`` (when given) once the held reply is written. ``before``
    (when given) runs just before the reply is written, gate or not.

    ``status`` is the HTTP status to answer with instead of 200 (with the reply
    as body) or 204 (without one); stdio has no status and writes the reply,
    if any, as a line. ``raw`` (when given) is written verbatim instead of the
    reply's JSON text (over HTTP as an ``application/json`` body; over stdio as
    one line): a deliberately malformed answer.

    ``hang`` (with ``has_reply`` false) answers nothing at all: over HTTP the
    exchange is held open, unanswered, until the peer closes the connection or
    the event is set (shutdown), then closed without a byte written; over
    stdio nothing is written, ever.
    """

    reply: Any = None
    has_reply: bool = True
    gate: threading.Event | None = None
    sent: Callable[[], None] | None = None
    before: Callable[[], None] | None = None
    status: int | None = None
    raw: bytes | None = None
    hang: threading.Event | None = None

    def writing(self) -> None:
        if self.before is not None:
            self.before()

    def written(self) -> None:
        if self.sent is not None:
            self.sent()


NO_REPLY = Answer(has_reply=False)


def never_answered(until: threading.Event) -> Answer:
    """No answer, ever (HTTP: the exchange is held open until the peer closes it
    or ``until`` is set, then closed unwritten)."""
    return Answer(has_reply=False, hang=until)
