"""A step's own upload block replaces the config's wholesale: the lifecycle client
sends nothing of the event's credentials to an independent upload origin
(docs/ISOLATION.md).

The event channel is mTLS (the client holds a client certificate) and the
config's upload block names a bearer token that is set in the environment;
each row's upload step names another origin and no credential. Origins run
here, record every request raw, and one over HTTPS requests a client
certificate (and would accept this one). The client runs as a real process.
"""

from __future__ import annotations

import base64
import hashlib
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from lifecycle_kit import lc_request, lifecycle_server, row, run_lifecycle_client, settled
from pki import make_pki

pytestmark = pytest.mark.e2e

BODY = b"\x00\xffisolated upload bytes"


class Origin(ThreadingHTTPServer):
    """Records (headers as (name, value) pairs, whether a peer certificate came,
    the body); answers 201 with a receipt, or 307 to `redirect`."""

    daemon_threads = True

    def __init__(self, context: ssl.SSLContext | None = None, redirect: str | None = None):
        self.seen: list[tuple[list[tuple[str, str]], bool, bytes]] = []
        self.redirect = redirect
        super().__init__(("127.0.0.1", 0), _Handler)
        if context is not None:
            self.socket = context.wrap_socket(self.socket, server_side=True)
        self.scheme = "https" if context is not None else "http"

    @property
    def endpoint(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server_address[1]}/capture?row=1"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Origin

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        presented = isinstance(self.connection, ssl.SSLSocket) and bool(
            self.connection.getpeercert(binary_form=True)
        )
        self.server.seen.append((list(self.headers.items()), presented, body))
        if self.server.redirect is not None:
            self.send_response(307)
            self.send_header("Location", self.server.redirect)
            payload = b""
        else:
            self.send_response(201)
            self.send_header("Content-Type", "application/json")
            digest = hashlib.sha256(body).hexdigest()
            payload = json.dumps(
                {"ref": "urn:uuid:00000000-0000-4000-8000-000000000001", "size": len(body)}
                | {"sha256": digest}
            ).encode()
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)


@contextmanager
def serving(origin: Origin) -> Iterator[Origin]:
    thread = threading.Thread(target=origin.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield origin
    finally:
        origin.shutdown()
        origin.server_close()
        thread.join(timeout=5)


def isolated_row(sid: str, upload: dict[str, Any]) -> dict[str, Any]:
    req = lc_request(f"{sid}:a")
    block = {"timeoutMs": 5000, "maxBytes": 1048576, **upload}
    return row(
        sid,
        {"a": req},
        {"a": settled(req, {"v": sid})},
        {
            "op": "upload",
            "subscription": "body",
            "ref": "alias",
            "bodyBase64": base64.b64encode(BODY).decode(),
            "size": len(BODY),
            "sha256": hashlib.sha256(BODY).hexdigest(),
            "upload": block,
        },
        {"op": "send", "key": "a", "slot": "a"},
        {"op": "wait", "key": "a", "count": 1},
        {"op": "release", "key": "a"},
        {"op": "receive", "slot": "a"},
        {"op": "accept", "key": "a"},
    )


def test_a_step_upload_block_without_auth_sends_no_event_credential(tmp_path: Path) -> None:
    (tmp_path / "pki").mkdir()
    pki = make_pki(tmp_path / "pki")
    capture_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    capture_tls.load_cert_chain(pki.server_cert, pki.server_key)
    capture_tls.load_verify_locations(cafile=str(pki.ca))  # the event certificate would verify
    capture_tls.verify_mode = ssl.CERT_OPTIONAL  # asks for a client certificate
    with (
        serving(Origin()) as plain,
        serving(Origin(context=capture_tls)) as secure,
        serving(Origin()) as target,
        serving(Origin(redirect=f"http://127.0.0.1:{target.server_address[1]}/x")) as redirect,
    ):
        rows = [
            isolated_row("plain", {"endpoint": plain.endpoint}),
            isolated_row("secure", {"endpoint": secure.endpoint, "tls": {"caFile": str(pki.ca)}}),
            isolated_row("redirect", {"endpoint": redirect.endpoint}),
        ]
        server_tls = {
            "certFile": str(pki.server_cert),
            "keyFile": str(pki.server_key),
            "clientCaFile": str(pki.ca),
        }
        mtls = {"mode": "mtls", "profile": "strict"}
        (tmp_path / "srv").mkdir()
        with lifecycle_server(tmp_path / "srv", rows, auth=mtls, tls=server_tls) as server:
            ready = {
                "endpoint": server.process.endpoint,
                "controlEndpoint": server.process.control_endpoint,
                "uploadEndpoint": server.process.upload_endpoint,
            }
            (tmp_path / "client").mkdir()
            report = run_lifecycle_client(
                tmp_path / "client",
                rows,
                "http",
                ready,
                auth=mtls,
                tls={
                    "caFile": str(pki.ca),
                    "certFile": str(pki.client_cert),
                    "keyFile": str(pki.client_key),
                },
            )
            server_uploads = [e for e in server.entries() if e["kind"] == "upload"]
    statuses = {r["id"]: r["actual"]["uploadStatuses"] for r in report["results"]}
    assert statuses == {"plain": [201], "secure": [201], "redirect": [307]}
    for r in report["results"]:
        assert r["status"] == "completed" and r["actual"]["published"] == [f"{r['id']}:a"]
    assert server_uploads == []  # the config's own upload endpoint got nothing
    assert target.seen == []  # the redirect was not followed
    for origin in (plain, secure, redirect):
        assert len(origin.seen) == 1
        headers, presented, body = origin.seen[0]
        names = sorted(name.lower() for name, _ in headers)
        assert not {"authorization", "proxy-authorization", "cookie"} & set(names), names
        assert [n for n in names if n in ("content-length", "content-type")] == [
            "content-length",
            "content-type",
        ]
        assert not presented  # no client certificate on an upload
        assert body == BODY
