"""The lifecycleClient role: the `lifecycle` suite's steps or the `catalogue` suite's rows,
then the upstream-shaped report `{language, results, receipts[, discovery]}`.

`receipts` is the server's `GET /receipts` answer, fetched before the server
is shut down (over stdio the client's own child, closed here). Another
`suite` reports every row unsupported. Exit 1 when a row failed; a crash
(an unadvertised effect, a notification not answered 200) is an uncaught
exception: a traceback on stderr, exit 1, no report.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from upstream_emulator import catalogue_client, settings, steps
from upstream_emulator.client import LANGUAGE, write_report
from upstream_emulator.peer import HttpPeer, Peer, PeerError
from upstream_emulator.stdio_peer import StdioPeer

SUITES = ("lifecycle", "catalogue")


def open_peer(config: dict[str, Any], token: str | None) -> Peer:
    if config["transport"] == "http":
        endpoint, control = config.get("endpoint"), config.get("controlEndpoint")
        if not isinstance(endpoint, str) or not isinstance(control, str):
            raise PeerError("an http client needs endpoint and controlEndpoint")
        return HttpPeer(endpoint, token, control)
    return StdioPeer(config)


def run(config: dict[str, Any]) -> int:
    try:
        rows = settings.scenarios(config)
        token = settings.bearer_token(config)
    except settings.ConfigError as exc:
        print(f"upstream-emulator lifecycle client: {exc}", file=sys.stderr)
        return 2
    suite = config.get("suite")
    report: dict[str, Any] = {"language": LANGUAGE}
    if suite not in SUITES:
        why = f"suite {suite!r} is not implemented"
        report["results"] = [
            {"id": r["id"], "status": "unsupported", "actual": None, "error": why} for r in rows
        ]
        write_report(Path(str(config["reportFile"])), report)
        return 0
    try:
        peer = open_peer(config, token)
    except (PeerError, OSError, ValueError, KeyError) as exc:
        print(f"upstream-emulator lifecycle client: {exc}", file=sys.stderr)
        return 2
    try:
        if suite == "lifecycle":
            report["results"] = [steps.run_row(row, peer) for row in rows]
        else:
            report["results"], report["discovery"] = catalogue_client.run_rows(rows, peer)
        try:
            report["receipts"] = peer.control.call("/receipts")
        except PeerError as exc:
            print(f"upstream-emulator lifecycle client: receipts: {exc}", file=sys.stderr)
    finally:
        peer.close()
    write_report(Path(str(config["reportFile"])), report)
    return 1 if any(r.get("status") == "failed" for r in report["results"]) else 0
