"""The control listener's routes: /health, /receipts, /release, /shutdown."""

from __future__ import annotations

import json

from upstream_emulator.board import Board
from upstream_emulator.httpserve import Reply, Request, Route

NOT_FOUND = Reply(404, {"error": "Not found"})


def control_route(board: Board) -> Route:
    def route(request: Request) -> Reply:
        where = (request.method, request.path)
        if where == ("GET", "/health"):
            return Reply(200, {"ready": True})
        if where == ("GET", "/receipts"):
            return Reply(200, {"requests": board.receipts()})
        if where == ("POST", "/release"):
            raw = request.body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            name = body.get("barrier") if isinstance(body, dict) else None
            if not isinstance(name, str):
                return Reply(400, {"error": "Invalid request"})
            board.release(name)
            return Reply(200, {"released": True})
        if where == ("POST", "/shutdown"):
            request.body()
            return Reply(200, {"stopping": True}, close=True, then=board.stop)
        return NOT_FOUND

    return route
