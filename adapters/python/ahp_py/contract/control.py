"""The control listener (plain HTTP on loopback, no auth):
``GET /health``, ``GET /receipts``, ``POST /release``, ``POST /reset``,
``POST /shutdown``."""

from __future__ import annotations

import threading
from typing import Any, cast

from ..sdk import codec
from ..sdk.http import Handler
from .backend import Backend
from .config import ScenarioFileError


class ControlApp:
    def __init__(self, backend: Backend, stop: threading.Event) -> None:
        self.backend = backend
        self.stop = stop


class ControlHandler(Handler):
    @property
    def app(self) -> ControlApp:
        return cast(ControlApp, self.listener.app)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/health":
            self.reply_json({"ready": True})
        elif path == "/receipts":
            self.reply_json(self.app.backend.receipts.snapshot())
        else:
            self.reply(404)

    def do_POST(self) -> None:
        body = self.read_body()
        if body is None:
            return
        try:
            payload = codec.loads(body) if body.strip() else {}
        except codec.JsonDecodeError as exc:
            self.reply_json({"error": f"body is not strict JSON: {exc}"}, 400)
            return
        payload = payload if isinstance(payload, dict) else {}
        path = self.path.split("?", 1)[0]
        if path == "/release":
            self._release(payload)
        elif path == "/reset":
            self._reset(payload)
        elif path == "/shutdown":
            self.close_connection = True
            self.reply_json({"shutdown": True})
            self.app.stop.set()
        else:
            self.reply(404)

    def _release(self, payload: dict[str, Any]) -> None:
        name = payload.get("barrier")
        if not isinstance(name, str):
            self.reply_json({"error": "barrier must be a string"}, 400)
            return
        self.app.backend.barriers.release(name)
        self.reply_json({"released": name})

    def _reset(self, payload: dict[str, Any]) -> None:
        scenario_file = payload.get("scenarioFile")
        if scenario_file is not None and not isinstance(scenario_file, str):
            self.reply_json({"error": "scenarioFile must be a string"}, 400)
            return
        try:
            self.app.backend.reset(scenario_file)
        except ScenarioFileError as exc:
            self.reply_json({"error": str(exc)}, 400)
            return
        self.reply_json({"reset": True})
