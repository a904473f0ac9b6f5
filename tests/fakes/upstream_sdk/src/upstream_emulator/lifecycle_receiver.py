"""The lifecycle suite's receiver: held intercepts and adversarial observation answers.

Intercepts: the answers are indexed by request id from every scenario's
`requests` / `responses`; `responseSequences[KEY]` answers the n-th receipt of
that id (the last one again past its end). A request is recorded `received`
before anything else, held until its id is released, recorded `replied`, then
answered with the scripted response unchanged. An id no scenario names is
refused (`None`: HTTP 409; the stdio server dies on it).

Observations: recorded `observed` and answered with an unsolicited intercept
response (deny, "observer must not decide"), whatever the event. When the
event's boundary holds its observers (a scenario with `chain.holdObservers`:
the gate `<requests.a id>:observers`), `observer-blocked` {id: the event id}
is recorded first and the answer waits until that gate opens or the server stops.
"""

from __future__ import annotations

import threading
from typing import Any

from upstream_emulator.ledger import Ledger

UNSOLICITED = {
    "jsonrpc": "2.0",
    "id": "unsolicited-observer",
    "result": {
        "protocolVersion": "draft",
        "effects": [{"type": "deny", "reason": "observer must not decide"}],
    },
}


def _event_of(message: Any) -> Any:
    params = message.get("params") if isinstance(message, dict) else None
    return params.get("event") if isinstance(params, dict) else None


class LifecycleReceiver:
    def __init__(self, scenarios: list[dict[str, Any]], ledger: Ledger) -> None:
        self._ledger = ledger
        self._answers: dict[str, list[Any]] = {}  # request id -> answers by receipt
        self._held_observers: dict[str, str] = {}  # event id -> gate
        self._receipts: dict[str, int] = {}
        self._lock = threading.Lock()
        for scenario in scenarios:
            requests = scenario.get("requests") or {}
            responses = scenario.get("responses") or {}
            sequences = scenario.get("responseSequences") or {}
            for key, request in requests.items():
                ident = request.get("id") if isinstance(request, dict) else None
                if not isinstance(ident, str):
                    continue
                sequence = sequences.get(key)
                if isinstance(sequence, list) and sequence:
                    self._answers.setdefault(ident, list(sequence))
                elif key in responses:
                    self._answers.setdefault(ident, [responses[key]])
            chain = scenario.get("chain")
            boundary = requests.get("a")
            event = _event_of(boundary)
            held = isinstance(chain, dict) and chain.get("holdObservers") is True
            if held and isinstance(boundary, dict) and isinstance(event, dict):
                self._held_observers[str(event.get("id"))] = f"{boundary.get('id')}:observers"

    def knows(self, message: Any) -> bool:
        ident = message.get("id") if isinstance(message, dict) else None
        return isinstance(ident, str) and ident in self._answers

    def intercept(self, message: Any) -> Any:
        """The scripted answer, after the receipt, the hold and the `replied` entry
        (`message` is a request `knows` accepted)."""
        ident = message["id"]
        with self._lock:
            number = self._receipts.get(ident, 0)
            self._receipts[ident] = number + 1
        self._ledger.record({"kind": "received", "id": ident, "message": message})
        self._ledger.hold(ident)
        answers = self._answers[ident]
        self._ledger.record({"kind": "replied", "id": ident})
        return answers[min(number, len(answers) - 1)]

    def observe(self, message: Any) -> dict[str, Any]:
        """Record the observation (held first when its boundary holds observers)."""
        event = _event_of(message)
        event_id = event.get("id") if isinstance(event, dict) else None
        gate = self._held_observers.get(event_id) if isinstance(event_id, str) else None
        if gate is not None:
            self._ledger.record({"kind": "observer-blocked", "id": event_id})
        self._ledger.record(
            {"kind": "observed", "eventId": event_id, "event": event, "message": message}
        )
        if gate is not None:
            self._ledger.hold(gate)
        return UNSOLICITED
