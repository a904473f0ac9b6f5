"""A lifecycle adapter that breaks one verification rule per scenario (standard library only).

Its server runs our Python adapter's lifecycle server unchanged and puts a
proxy in front of its control listener: `GET /receipts` answers the real
receipts with one planted break per targeted upstream scenario (see BREAKS),
so each targeted row must fail with that rule's error class and every other
row must pass. `--break probe` also puts a relay in front of the upload
receiver that answers an upload over 1 MiB with 400 instead of 413, drops a
second `Authorization` header and a `Content-Encoding` header: breaks only the
receiver probes see. Its client is our Python adapter's client; with
`--break-report NAME` it rewrites the report (REPORT_BREAKS).

The harness never learns about the proxy: it reads the readiness file the
real server wrote, with the control (and upload) endpoint swapped.

Usage: lifecycle_breaker.py {server,client} [--break NAMES] [--break-report NAME] --config PATH
       lifecycle_breaker.py core {server,client} --config PATH
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "adapters" / "python"
ADAPTER = [str(PYTHON / ".venv" / "bin" / "python"), "-m", "ahp_py"]

Entries = list[dict[str, Any]]


def _mine(entries: Entries, sid: str) -> list[int]:
    """Positions of the entries belonging to scenario `sid`."""

    def belongs(e: dict[str, Any]) -> bool:
        ident = str(e.get("id", e.get("eventId", "")))
        return e.get("scenario") == sid or ident == sid or ident.startswith(sid + ":")

    return [i for i, e in enumerate(entries) if belongs(e)]


def _first(entries: Entries, sid: str, kind: str) -> int:
    return next(i for i in _mine(entries, sid) if entries[i]["kind"] == kind)


def _last(entries: Entries, sid: str, kind: str) -> int:
    return [i for i in _mine(entries, sid) if entries[i]["kind"] == kind][-1]


def _move(entries: Entries, source: int, before: int) -> None:
    entry = entries.pop(source)
    entries.insert(before if before < source else before - 1, entry)


def _move_after(entries: Entries, source: int, after: int) -> None:
    entry = entries.pop(source)
    entries.insert(after if after > source else after + 1, entry)


def _tamper_input(entry: dict[str, Any]) -> None:
    entry["message"]["params"]["event"]["tool"]["input"] = {"value": "tampered"}


def _refs(message: Any) -> list[str]:
    items = message.get("params", {}).get("event", {}).get("items", []) or []
    return [i["body"]["ref"] for i in items if isinstance(i.get("body"), dict)]


def cancel_order(e: Entries) -> None:
    sid = "cancel-before-reply"
    _move_after(e, _first(e, sid, "cancelled"), _first(e, sid, "replied"))


def attempt_mismatch(e: Entries) -> None:
    del e[_first(e, "cancel-after-reply-before-acceptance", "replied")]


def acquired_mismatch(e: Entries) -> None:
    i = _first(e, "duplicate-reply-ignored", "acquired")
    e.insert(i + 1, copy.deepcopy(e[i]))


def acquired_order(e: Entries) -> None:
    sid = "first-staged-response-wins"
    _move(e, _first(e, sid, "acquired"), _first(e, sid, "replied"))


def accepted_order(e: Entries) -> None:
    sid = "request-specific-acceptance"
    accepted = _first(e, sid, "accepted")
    rid = e[accepted]["id"]
    acquired = next(i for i in _mine(e, sid) if e[i]["kind"] == "acquired" and e[i]["id"] == rid)
    _move(e, accepted, acquired)


def milestone_mismatch(e: Entries) -> None:
    del e[_first(e, "two-staged-reverse-acceptance", "accepted")]


def late_reply_order(e: Entries) -> None:
    sid = "late-old-while-next-pending"
    replies = [i for i in _mine(e, sid) if e[i]["kind"] == "replied"]
    e[replies[0]], e[replies[1]] = e[replies[1]], e[replies[0]]


def attempt_order(e: Entries) -> None:
    sid = "interrupt-after-publication"
    _move_after(e, _first(e, sid, "received"), _first(e, sid, "replied"))


def observation_mismatch(e: Entries) -> None:
    _tamper_input(e[_first(e, "settled-observer-effects-ignored", "observed")])


def observation_order(e: Entries) -> None:
    sid = "denied-boundary-observed"
    _move(e, _first(e, sid, "observed"), _first(e, sid, "accepted"))


def received_mismatch(e: Entries) -> None:
    _tamper_input(e[_first(e, "cancelled-boundary-observed", "received")])


def received_invalid(e: Entries) -> None:
    del e[_first(e, "stopped-boundary-observed", "received")]["message"]["params"]["capabilities"]


def ref_reused(e: Entries) -> None:
    sid = "immutable-upload-and-subscription-views"
    uploads = [i for i, x in enumerate(e) if x["kind"] == "upload" and "ref" in x]
    first_use = _first(e, sid, "observed")
    before = [i for i in uploads if i < first_use]
    by_hash: dict[str, int] = {}
    for i in before:
        by_hash.setdefault(e[i]["sha256"], i)
    one, other = list(by_hash.values())[-2:]
    e[other]["ref"] = e[one]["ref"]


def upload_before_use(e: Entries) -> None:
    observed = _first(e, "changed-body-new-reference", "observed")
    ref = _refs(e[observed]["message"])[0]
    upload = next(i for i, x in enumerate(e) if x["kind"] == "upload" and x.get("ref") == ref)
    _move_after(e, upload, observed)


def upload_mismatch(e: Entries) -> None:
    observed = _first(e, "normal-content-kinds", "observed")
    ref = _refs(e[observed]["message"])[0]
    upload = next(i for i, x in enumerate(e) if x["kind"] == "upload" and x.get("ref") == ref)
    e[upload]["size"] += 1


def stray_frame(e: Entries) -> None:
    sid = "stdio-unsolicited-old-before-live"
    discarded = _first(e, sid, "discarded")
    emitted = next(i for i, x in enumerate(e) if x["kind"] == "emitted")
    _move_after(e, emitted, discarded)


def chain_receipts(e: Entries) -> None:
    sid = "observation-chain-deny"
    i = _first(e, sid, "chain-settled")
    e.insert(i, {"kind": "acquired", "id": sid, "scenario": sid})


def chain_requests(e: Entries) -> None:
    _tamper_input(e[_first(e, "observation-chain-stop", "received")])


def chain_calls(e: Entries) -> None:
    del e[_first(e, "observation-chain-deny-stop", "replied")]


def chain_observations(e: Entries) -> None:
    del e[_last(e, "observation-chain-deny-no-explicit", "observed")]


def chain_settlement(e: Entries) -> None:
    i = _first(e, "observation-chain-fail-open", "chain-settled")
    e.insert(i + 1, copy.deepcopy(e[i]))


def chain_interrupt(e: Entries) -> None:
    sid = "observation-chain-interrupt"
    _move_after(e, _first(e, sid, "cancelled"), _first(e, sid, "replied"))


def held_observers(e: Entries) -> None:
    sid = "observation-chain-continue"
    i = _first(e, sid, "chain-settled")
    e.insert(i + 1, {"kind": "observer-blocked", "id": sid, "scenario": sid})


def timeout_replied(e: Entries) -> None:
    # our set [ext]: a reply recorded for the call whose scripted answer is a timeout
    sid = "lc-chain-timeout-fail-open"
    calls = [i for i in _mine(e, sid) if e[i]["kind"] == "received"]
    e.insert(calls[1] + 1, copy.deepcopy(e[_first(e, sid, "replied")]))


def unreachable_received(e: Entries) -> None:
    # our set [ext]: a receipt for the call to the unreachable backend
    sid = "lc-chain-unreachable-fail-closed"
    observed = e[_first(e, sid, "observed")]
    message = copy.deepcopy(observed["message"])
    message.update({"id": f"{sid}:a", "method": "hooks/intercept"})
    e.insert(
        _first(e, sid, "chain-settled"), {"kind": "received", "id": f"{sid}:a", "message": message}
    )


# name: (the rule's error class, the scenario it breaks, the break)
BREAKS: dict[str, tuple[str, str, Callable[[Entries], None]]] = {
    "cancel-order": ("CancelOrder", "cancel-before-reply", cancel_order),
    "attempt-mismatch": (
        "AttemptMismatch",
        "cancel-after-reply-before-acceptance",
        attempt_mismatch,
    ),
    "acquired-mismatch": ("AcquiredMismatch", "duplicate-reply-ignored", acquired_mismatch),
    "acquired-order": ("AcquiredOrder", "first-staged-response-wins", acquired_order),
    "accepted-order": ("AcceptedOrder", "request-specific-acceptance", accepted_order),
    "milestone-mismatch": (
        "MilestoneMismatch",
        "two-staged-reverse-acceptance",
        milestone_mismatch,
    ),
    "late-reply-order": ("LateReplyOrder", "late-old-while-next-pending", late_reply_order),
    "attempt-order": ("AttemptOrder", "interrupt-after-publication", attempt_order),
    "observation-mismatch": (
        "ObservationMismatch",
        "settled-observer-effects-ignored",
        observation_mismatch,
    ),
    "observation-order": ("ObservationOrder", "denied-boundary-observed", observation_order),
    "received-mismatch": ("ReceivedMismatch", "cancelled-boundary-observed", received_mismatch),
    "received-invalid": ("ReceivedInvalid", "stopped-boundary-observed", received_invalid),
    "ref-reused": ("RefReused", "immutable-upload-and-subscription-views", ref_reused),
    "upload-before-use": ("UploadBeforeUse", "changed-body-new-reference", upload_before_use),
    "upload-mismatch": ("UploadMismatch", "normal-content-kinds", upload_mismatch),
    "stray-frame": ("StrayFrame", "stdio-unsolicited-old-before-live", stray_frame),
    "chain-receipts": ("ChainReceipts", "observation-chain-deny", chain_receipts),
    "chain-requests": ("ChainRequests", "observation-chain-stop", chain_requests),
    "chain-calls": ("ChainCalls", "observation-chain-deny-stop", chain_calls),
    "chain-observations": (
        "ChainObservations",
        "observation-chain-deny-no-explicit",
        chain_observations,
    ),
    "chain-settlement": ("ChainSettlement", "observation-chain-fail-open", chain_settlement),
    "chain-interrupt": ("ChainInterrupt", "observation-chain-interrupt", chain_interrupt),
    "held-observers": ("HeldObservers", "observation-chain-continue", held_observers),
    "timeout-replied": ("ChainCalls", "lc-chain-timeout-fail-open", timeout_replied),
    "unreachable-received": (
        "ChainRequests",
        "lc-chain-unreachable-fail-closed",
        unreachable_received,
    ),
}
OWN_BREAKS = ("timeout-replied", "unreachable-received")  # rows of scenarios/lifecycle.json


# ------------------------------------------------ the catalogue suite (docs/CATALOGUE.md)


def _verdict(entries: Entries, event_id: str) -> dict[str, Any]:
    return next(e for e in entries if e["kind"] != "discovery" and e["eventId"] == event_id)


def verdict_kind(e: Entries) -> None:
    _verdict(e, "invalid:model-error")["errorKind"] = "lineage"


def observed_tamper(e: Entries) -> None:
    entry = _verdict(e, "catalogue:tool.after")
    entry["message"]["params"]["event"]["time"] = "2026-01-01T00:00:00Z"


def verdict_order(e: Entries) -> None:
    # the two deliveries of one scenario recorded the other way round
    first = e.index(_verdict(e, "task:proposal"))
    e[first], e[first + 1] = e[first + 1], e[first]


def discovery_twice(e: Entries) -> None:
    e.insert(1, copy.deepcopy(e[0]))


def discovery_tamper(e: Entries) -> None:
    e[0]["response"]["result"]["manifest"]["gaps"] = [{"path": "x", "reason": "planted"}]


# rows of scenarios/upstream/catalogue-scenarios.json: (class, scenario, break)
CATALOGUE_BREAKS: dict[str, tuple[str, str, Callable[[Entries], None]]] = {
    "cat-verdict-kind": ("DeliveryMismatch", "typed-model-error-required", verdict_kind),
    "cat-observed-tamper": ("DeliveryMismatch", "catalogue:tool.after", observed_tamper),
    "cat-verdict-order": ("DeliveryMismatch", "task-modified-actual-pair", verdict_order),
}
# breaks that fail the whole combination: (class, break)
CATALOGUE_RUN_BREAKS: dict[str, tuple[str, Callable[[Entries], None]]] = {
    "cat-discovery-twice": ("DiscoveryCount", discovery_twice),
    "cat-discovery-tamper": ("DiscoveryMismatch", discovery_tamper),
}
# what the control proxy can plant, by name
PLANTABLE: dict[str, Callable[[Entries], None]] = {
    **{name: fn for name, (_, _, fn) in BREAKS.items()},
    **{name: fn for name, (_, _, fn) in CATALOGUE_BREAKS.items()},
    **{name: fn for name, (_, fn) in CATALOGUE_RUN_BREAKS.items()},
}


def _break_report(name: str, report: dict[str, Any]) -> None:
    results = report["results"]
    if name == "result-missing":
        results.pop()
    elif name == "result-duplicate":
        results.append(copy.deepcopy(results[0]))
    elif name == "result-unknown":
        results.append({**copy.deepcopy(results[0]), "id": "no-such-scenario"})
    elif name == "result-wrong":
        results[0]["actual"]["published"] = ["not-published"]
    elif name == "cat-registration-flip":
        entry = next(r for r in results if r["id"] == "registration-duplicate-backend")
        entry["actual"]["registrations"] = [{"accepted": True}]
    elif name == "cat-discovery-report":
        report["discovery"]["id"] = "planted"


REPORT_BREAKS = {
    "result-missing": "ResultMissing",
    "result-duplicate": "ResultDuplicateId",
    "result-unknown": "ResultUnknownId",
    "result-wrong": "LifecycleResult",
}
CATALOGUE_REPORT_BREAKS = {
    "cat-registration-flip": "CatalogueResult",
    "cat-discovery-report": "DiscoveryMismatch",
}


# ------------------------------------------------------------------ the proxies


def _control_proxy(target: str, names: list[str]) -> ThreadingHTTPServer:
    class Proxy(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _relay(self, body: bytes | None) -> None:
            request = urllib.request.Request(target + self.path, data=body, method=self.command)
            request.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(request, timeout=60) as answer:
                    status, payload = answer.status, answer.read()
            except urllib.error.HTTPError as exc:
                status, payload = exc.code, exc.read()
            if self.command == "GET" and self.path == "/receipts" and status == 200:
                document = json.loads(payload)
                for name in names:
                    if name in PLANTABLE:
                        # a scenario that did not run here (another transport) is left alone
                        with contextlib.suppress(StopIteration, IndexError, KeyError, ValueError):
                            PLANTABLE[name](document["entries"])
                payload = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            self._relay(None)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self._relay(self.rfile.read(length))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _upload_relay(target_port: int) -> socket.socket:
    """A byte relay to the upload receiver, except that an upload over 1 MiB gets 400."""
    listener = socket.create_server(("127.0.0.1", 0))

    def pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):  # pass a half-close on, keep the answer path
                sink.shutdown(socket.SHUT_WR)

    def serve(client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(65536)
            if not chunk:
                client.close()
                return
            head += chunk
        top, rest = head.split(b"\r\n\r\n", 1)
        lines = top.decode("latin-1").split("\r\n")
        fields = [(k.strip().lower(), line) for line in lines[1:] for k in [line.partition(":")[0]]]
        length = next(
            (line.partition(":")[2].strip() for k, line in fields if k == "content-length"), ""
        )
        if length.isdigit() and int(length) > 1048576:
            client.sendall(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            client.close()
            return
        kept, seen = [lines[0]], set()
        for k, line in fields:
            if k == "content-encoding" or (k == "authorization" and k in seen):
                continue  # the planted breaks: an encoding ignored, a second credential dropped
            seen.add(k)
            kept.append(line)
        head = "\r\n".join(kept).encode("latin-1") + b"\r\n\r\n" + rest
        upstream = socket.create_connection(("127.0.0.1", target_port))
        upstream.sendall(head)
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
        pump(client, upstream)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener


def _status_relay(target_port: int) -> socket.socket:
    """A byte relay to the AHP listener (plain HTTP) that answers 202 wherever it said 409:
    a receiver that hides its lineage verdicts (`--break cat-probe`)."""
    listener = socket.create_server(("127.0.0.1", 0))
    conflict = re.compile(rb"HTTP/1\.[01] 409 [^\r]*\r\n")

    def pump(source: socket.socket, sink: socket.socket, rewrite: bool) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(
                    conflict.sub(b"HTTP/1.1 202 Accepted\r\n", chunk) if rewrite else chunk
                )
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", target_port))
            threading.Thread(target=pump, args=(upstream, client, True), daemon=True).start()
            threading.Thread(target=pump, args=(client, upstream, False), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener


def serve(names: list[str], config_path: str) -> int:
    settings = json.loads(Path(config_path).read_text())
    readiness = Path(settings["readinessFile"])
    private = readiness.parent / f"breaker-{os.getpid()}"  # inside the run's own directory
    private.mkdir()
    inner = {**settings, "readinessFile": str(private / "ready.json")}
    (private / "config.json").write_text(json.dumps(inner))
    child = subprocess.Popen(
        [*ADAPTER, "lifecycle-server", "--config", str(private / "config.json")], cwd=PYTHON
    )

    def stop(signum: int, _frame: Any) -> None:
        child.terminate()

    signal.signal(signal.SIGTERM, stop)
    deadline = time.monotonic() + 30
    while not (private / "ready.json").exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            return 1
        time.sleep(0.02)
    ready = json.loads((private / "ready.json").read_text())
    proxy = _control_proxy(ready["controlEndpoint"].rstrip("/"), names)
    ready["controlEndpoint"] = f"http://127.0.0.1:{proxy.server_address[1]}"
    if "probe" in names:
        host_port = ready["uploadEndpoint"].split("//", 1)[1].split("/", 1)
        relay = _upload_relay(int(host_port[0].rsplit(":", 1)[1]))
        path = "/" + host_port[1] if len(host_port) > 1 else ""
        ready["uploadEndpoint"] = f"http://127.0.0.1:{relay.getsockname()[1]}{path}"
    if "cat-probe" in names and ready.get("endpoint", "").startswith("http://"):
        parts = ready["endpoint"].split("//", 1)[1].split("/", 1)
        status_relay = _status_relay(int(parts[0].rsplit(":", 1)[1]))
        path = "/" + parts[1] if len(parts) > 1 else ""
        ready["endpoint"] = f"http://127.0.0.1:{status_relay.getsockname()[1]}{path}"
    ready["pid"] = os.getpid()
    partial = readiness.with_suffix(".partial")
    partial.write_text(json.dumps(ready))
    partial.replace(readiness)
    return child.wait()


def client(name: str | None, config_path: str) -> int:
    signals = os.environ.get("BREAKER_SIGNAL_DIR")
    if signals:  # the Ctrl-C test waits for every client to be under way
        (Path(signals) / str(os.getpid())).write_text("started")
    code = subprocess.run([*ADAPTER, "lifecycle-client", "--config", config_path], cwd=PYTHON)
    settings = json.loads(Path(config_path).read_text())
    report_path = Path(settings["reportFile"])
    if name and report_path.exists():
        report = json.loads(report_path.read_text())
        _break_report(name, report)
        report_path.write_text(json.dumps(report))
    return code.returncode


def main() -> int:
    role, args = sys.argv[1], sys.argv[2:]
    if role == "core":  # the core suite's roles, unchanged
        return subprocess.run([*ADAPTER, *args], cwd=PYTHON).returncode
    config = args[args.index("--config") + 1]
    names = args[args.index("--break") + 1].split(",") if "--break" in args else []
    if role == "server":
        return serve(names, config)
    wrong = args[args.index("--break-report") + 1] if "--break-report" in args else None
    return client(wrong, config)


if __name__ == "__main__":
    sys.exit(main())
