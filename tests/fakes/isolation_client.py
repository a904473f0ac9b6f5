"""A lifecycle client that leaks on uploads: our Python adapter's client with its upload
sender patched in-process (run with the adapter's own venv python).

`--leak` picks the misbehaviour, each a bug a real SDK could have:

- `none`: the adapter unchanged (the control).
- `event-bearer`: the event channel's bearer token (static, OAuth-fetched or the
  workload assertion) goes along as `Authorization` on every upload.
- `no-upload`: no upload is sent at all; the step is reported as a 201 with a
  made-up receipt.
- `follow-redirect`: a 3xx answer to an upload is followed (the bytes POSTed again to
  its `Location`), and the final status reported.
- `event-certificate`: an https upload's TLS also presents the event's client
  certificate (the upload's CA is kept, so the handshake still verifies).
- `cookie-jar`: cookies the event server sets are kept and sent with uploads to the
  same host (cookies are not port-bound).
- `hang`: the first upload never returns (a file in $ISOLATION_SIGNAL_DIR says so):
  for Ctrl-C tests.

Usage: isolation_client.py client --leak NAME --config PATH
       isolation_client.py server --config PATH   (our lifecycle server, unchanged)
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import socket
import ssl
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "adapters" / "python"))

LEAKS = (
    "none",
    "event-bearer",
    "no-upload",
    "follow-redirect",
    "event-certificate",
    "cookie-jar",
    "hang",
)


def _option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def _event_certificate(config: dict[str, Any]) -> tuple[str, str] | None:
    """The event's client certificate and key, under either trust profile."""
    for block in (config.get("tls") or {}, config.get("auth") or {}):
        if block.get("certFile") and block.get("keyFile"):
            return block["certFile"], block["keyFile"]
    return None


def patch(leak: str, config: dict[str, Any]) -> None:
    from ahp_py.contract import peer, steps
    from ahp_py.sdk import upload as upload_module

    for module, name in ((steps, "send_upload"), (peer, "client_token")):
        if not callable(getattr(module, name, None)):  # a patch that misses proves nothing
            raise SystemExit(
                f"isolation_client: {module.__name__}.{name} is gone: patch the new place"
            )

    seen: dict[str, Any] = {"token": None, "cookies": {}}

    if leak == "event-bearer":
        real_token = peer.client_token

        def recording_token(credentials: Any, timeout: float) -> Any:
            token = real_token(credentials, timeout)
            seen["token"] = token
            return token

        peer.client_token = recording_token  # type: ignore[assignment]

    if leak == "cookie-jar":
        real_getresponse = http.client.HTTPConnection.getresponse

        def keeping(self: http.client.HTTPConnection) -> http.client.HTTPResponse:
            answer = real_getresponse(self)
            for value in answer.msg.get_all("Set-Cookie") or []:
                name, _, rest = value.partition("=")
                seen["cookies"][name.strip()] = rest.split(";", 1)[0].strip()
            return answer

        http.client.HTTPConnection.getresponse = keeping  # type: ignore[method-assign]

    def leaky_send(
        endpoint: str,
        data: bytes,
        *,
        size: int,
        sha256: str,
        token: str | None,
        timeout: float,
        ssl_context: ssl.SSLContext | None = None,
    ) -> Any:
        if leak == "hang":
            signals = Path(os.environ["ISOLATION_SIGNAL_DIR"])
            (signals / f"hung-{os.getpid()}").write_text("hung")
            threading.Event().wait()
        if leak == "no-upload":
            receipt = {
                "ref": "urn:uuid:00000000-0000-4000-8000-0000000000aa",
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
            return upload_module.UploadAnswer(201, json.dumps(receipt).encode())
        extra: list[str] = []
        if leak == "event-bearer" and seen["token"] is not None:
            token = seen["token"]
        if leak == "event-certificate" and endpoint.startswith("https:"):
            found = _event_certificate(config)
            if found is not None:
                ssl_context = ssl_context or ssl.create_default_context()
                ssl_context.load_cert_chain(*found)
        if leak == "cookie-jar" and seen["cookies"]:
            extra.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in seen["cookies"].items()))
        answer, location = _upload(endpoint, data, size, sha256, token, timeout, ssl_context, extra)
        if leak == "follow-redirect" and 300 <= answer.status < 400 and location:
            answer, _ = _upload(
                urljoin(endpoint, location), data, size, sha256, token, timeout, ssl_context, extra
            )
        return answer

    steps.send_upload = leaky_send  # type: ignore[assignment]


def _upload(
    endpoint: str,
    data: bytes,
    size: int,
    sha256: str,
    token: str | None,
    timeout: float,
    context: ssl.SSLContext | None,
    extra: list[str],
) -> tuple[Any, str | None]:
    """One raw upload as the adapter sends it, plus `extra` header lines; the answer and
    its Location header."""
    from ahp_py.sdk.upload import UploadAnswer

    url = urlsplit(endpoint)
    port = url.port or (443 if url.scheme == "https" else 80)
    host = url.hostname or "127.0.0.1"
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: application/octet-stream",
        f"Content-Length: {size}",
        f"AHP-Content-SHA256: {sha256}",
        "Connection: close",
        *([f"Authorization: Bearer {token}"] if token is not None else []),
        *extra,
    ]
    sock: socket.socket = socket.create_connection((host, port), timeout=timeout)
    try:
        if url.scheme == "https":
            sock = (context or ssl.create_default_context()).wrap_socket(sock, server_hostname=host)
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data[:size])
        response = http.client.HTTPResponse(sock)
        response.begin()
        return UploadAnswer(response.status, response.read()), response.getheader("Location")
    finally:
        sock.close()


def main(argv: list[str]) -> int:
    role = argv[0]
    config_path = _option(argv, "--config")
    from ahp_py.__main__ import main as adapter_main

    if role == "server":
        return adapter_main(["lifecycle-server", "--config", config_path])
    leak = _option(argv, "--leak")
    if leak not in LEAKS:
        print(f"isolation_client: unknown leak {leak!r}", file=sys.stderr)
        return 2
    config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    patch(leak, config)
    return adapter_main(["lifecycle-client", "--config", config_path])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
