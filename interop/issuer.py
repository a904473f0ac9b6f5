"""The run's OAuth client-credentials token endpoint on loopback.

`strict`: HTTPS with the run's server certificate, ES256-signed access tokens.
`compat`: plain HTTP and HS256 tokens, as the upstream drivers do. The issuer
never redirects; it counts what it issued so tests can check acquisition.
"""

from __future__ import annotations

import hmac
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

from interop.trust import AUDIENCE, CLIENT_ID, TOKEN_LIFETIME, Trust

MAX_BODY = 16_384


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    trust: Trust
    profile: str
    issued: int
    rejected: int


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Silence per-request logs; nothing here may print a credential."""

    def _send(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        head = (
            f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
            "Content-Type: application/json\r\n"
            "Cache-Control: no-store\r\n"
            f"Content-Length: {len(data)}\r\n\r\n"
        ).encode()
        self.wfile.write(head + data)  # one send: no Nagle/delayed-ACK stall
        self.wfile.flush()

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            length = -1
        if self.path != "/token" or not 0 < length <= MAX_BODY:
            self.server.rejected += 1
            self._send(400, {"error": "invalid_request"})
            return
        form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"), keep_blank_values=True)

        def field(name: str) -> str | None:
            values = form.get(name)
            return values[0] if values is not None and len(values) == 1 else None

        secret = field("client_secret") or ""
        valid = (
            field("grant_type") == "client_credentials"
            and field("client_id") == CLIENT_ID
            and hmac.compare_digest(secret.encode(), self.server.trust.client_secret.encode())
            and (field("audience") in (None, AUDIENCE))
        )
        if not valid:
            self.server.rejected += 1
            self._send(401, {"error": "invalid_client"})
            return
        self.server.issued += 1
        token = self.server.trust.token("oauth", self.server.profile)
        self._send(
            200, {"access_token": token, "token_type": "Bearer", "expires_in": TOKEN_LIFETIME}
        )

    def do_GET(self) -> None:
        self._send(405, {"error": "method_not_allowed"})


class Issuer:
    """Context manager running the token endpoint on a loopback port."""

    def __init__(self, trust: Trust, profile: str) -> None:
        self.trust = trust
        self.profile = profile
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.endpoint = ""

    def __enter__(self) -> Issuer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.trust = self.trust
        server.profile = self.profile
        server.issued = 0
        server.rejected = 0
        scheme = "http"
        if self.profile == "strict":
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            context.load_cert_chain(
                self.trust.path("server.pem"), self.trust.path("server-key.pem")
            )
            server.socket = context.wrap_socket(server.socket, server_side=True)
            scheme = "https"
        self._server = server
        # shutdown() waits for the loop's next poll: 0.5 s by default, at the end of every run
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="issuer", daemon=True
        )
        self._thread.start()
        self.endpoint = f"{scheme}://127.0.0.1:{server.server_port}/token"
        self.trust.issuer_endpoints[self.profile] = self.endpoint
        return self

    @property
    def issued(self) -> int:
        return self._server.issued if self._server else 0

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
