"""A contract v1 compaction-wire receiver over stdio, behind our hosts.

`python -m interop.suites.compaction.stdio_bridge --config FILE` is the server
command the harness gives our host over stdio when the server is a contract v1
SDK's compaction-wire receiver (docs/COMPACTION.md, "With a contract v1
adapter"). Upstream's host spawns that receiver once per subscription call,
`<cmd> <schemaDir> <storeDir> <subscriptions.json> stdio <scope>`, writes the
request line and reads one reply line (upstream `interop/compaction_wire.py`
convention, `compaction_wire_matrix.py@8f91ac41`). Our host starts one server
per set and writes every call to it; this bridge, that server, does for each
line what upstream's host does: it picks the call's scope (the n-th call with
that id, as over HTTP), spawns the receiver for it in the SDK's root, writes
the line unchanged and copies its one reply line back unchanged. A
notification (`hooks/observe`) spawns nothing: upstream's receiver takes none,
and a notification has no answer to copy back. It serves our control calls
(suites/v1control.py) from the receiver's `<storeDir>/receipts.jsonl`, and
notes what each receiver process answered (`answers` in the config: one JSON
line per call) as wire evidence. Nothing here judges.

FILE: `{"readinessFile", "receiver": [argv up to the mode], "cwd", "env": {...}
(added to the environment), "scopes": [scope names], "store", "answers",
"timeoutSeconds"}`. EOF on stdin ends it with status 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from interop.suites import v1control
from interop.suites.v1control import Entries

NOT_SENT = "a notification: not sent (the receiver takes none)"


def scope_name(ident: str, n: int) -> str:
    """The scope of the n-th call with a request id: its name in the subscriptions file."""
    return f"{ident}#{n}"


def request_id(body: bytes) -> str | None:
    """A request's id, when it is JSON with a string id."""
    try:
        ident = json.loads(body).get("id")
    except (ValueError, AttributeError):
        return None
    return ident if isinstance(ident, str) else None


class ScopeCalls:
    """Which scope a call is for: the n-th call with an id is `<id>#<n>`, when the
    subscriptions file has that scope (None otherwise). Over HTTP and stdio alike."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = set(names)
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()

    def scope(self, ident: str | None) -> str | None:
        if ident is None:
            return None
        with self.lock:
            n = self.counts[ident]
            self.counts[ident] += 1
        name = scope_name(ident, n)
        return name if name in self.names else None


def read_receipts(store: Path) -> Entries:
    """The receiver's `receipts.jsonl`, as our receipts: per accepted exchange a
    `received` entry with its request and a `replied` entry."""
    path = store / "receipts.jsonl"
    if not path.exists():
        return [], None
    entries: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            return None, f"receipts.jsonl line {number} is not JSON: {exc}"
        request = item.get("request") if isinstance(item, dict) else None
        ident = request.get("id") if isinstance(request, dict) else None
        if ident is None:
            return None, f"receipts.jsonl line {number} is not {{subscription, request, ...}}"
        entries.append({"kind": "received", "id": ident, "message": request})
        entries.append({"kind": "replied", "id": ident})
    return entries, None


def describe(status: str, reply: bytes) -> str:
    """What a receiver answered, in one line: its JSON-RPC error, or a result."""
    try:
        answer = json.loads(reply) if reply.strip() else None
    except ValueError:
        answer = None
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict):
        return f"{status}, JSON-RPC error {error.get('code')} {str(error.get('message'))[:80]!r}"
    if isinstance(answer, dict) and "result" in answer:
        return f"{status}, a result"
    return f"{status}, {reply[:80]!r}"


def is_notification(line: bytes) -> bool:
    """A JSON-RPC notification (a method and no id), e.g. hooks/observe."""
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and "method" in message and "id" not in message


def _write_atomic(path: Path, value: Any) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(value), encoding="utf-8")
    os.replace(partial, path)


def _one_call(config: dict[str, Any], line: bytes, calls: ScopeCalls) -> tuple[bytes, str, str]:
    """Spawn the receiver for this call's scope: (its reply line, the id, what it said)."""
    ident = request_id(line)
    key = str(ident)
    scope = calls.scope(ident) or "unscoped"  # unknown: the receiver refuses it
    env = {**os.environ, **config.get("env", {})}
    try:
        child = subprocess.run(
            [*config["receiver"], "stdio", scope],
            input=line,
            capture_output=True,
            cwd=config["cwd"],
            env=env,
            timeout=config.get("timeoutSeconds", 20),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return b"", key, f"stdio {scope}: not answered ({exc})"
    reply = child.stdout.split(b"\n", 1)[0]
    said = describe(f"stdio {scope}: exit {child.returncode}", reply)
    if child.returncode != 0 and child.stderr:
        said += f"; stderr ends {child.stderr[-160:]!r}"
    return reply, key, said


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "--config":
        print("usage: stdio_bridge --config FILE", file=sys.stderr)
        return 2
    config = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    store = Path(config["store"])
    record = v1control.Record(lambda: read_receipts(store))
    server, control = v1control.serve(record)
    _write_atomic(
        Path(config["readinessFile"]),
        {"endpoint": None, "controlEndpoint": control, "pid": os.getpid()},
    )
    calls = ScopeCalls(config["scopes"])
    with open(config["answers"], "a", encoding="utf-8") as answers:
        for line in sys.stdin.buffer:
            if not line.strip():
                continue
            if is_notification(line):  # upstream's receiver takes none: not spawned for it
                answers.write(json.dumps({"id": None, "said": NOT_SENT}) + "\n")
                continue
            reply, ident, said = _one_call(config, line.rstrip(b"\r\n"), calls)
            answers.write(json.dumps({"id": ident, "said": said}) + "\n")
            answers.flush()
            if reply:
                sys.stdout.buffer.write(reply + b"\n")
                sys.stdout.buffer.flush()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
