"""The physical floor: what the same number of bare operations costs on this machine.

Each figure is measured in the bench's own run, beside the matrix it is compared
with: loopback HTTP/1.1 round trips on one keep-alive connection (`TCP_NODELAY`,
a fixed request and a fixed answer, no parsing beyond the byte counts), TLS
handshakes against a certificate of a fresh run authority (the handshake and one
byte each way), and process starts (`/bin/true` in its own session, spawn to
reap, as the harness starts adapters). Nothing here is an AHP implementation.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REQUEST = (
    b"POST /intercept HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 2\r\n\r\n{}"
)
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


@dataclass
class Floor:
    """Seconds for `count` operations of one kind (0 operations: 0 seconds)."""

    kind: str
    count: int
    seconds: float

    def as_json(self) -> dict[str, object]:
        each = self.seconds / self.count * 1000 if self.count else 0.0
        return {"count": self.count, "seconds": round(self.seconds, 4), "msEach": round(each, 4)}


def _read_exactly(conn: socket.socket | ssl.SSLSocket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        data += chunk
    return data


def http_round_trips(count: int) -> Floor:
    """`count` request/answer exchanges on one loopback keep-alive connection."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            for _ in range(count):
                _read_exactly(conn, len(REQUEST))
                conn.sendall(ANSWER)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            started = time.perf_counter()
            for _ in range(count):
                client.sendall(REQUEST)
                _read_exactly(client, len(ANSWER))
            seconds = time.perf_counter() - started
    finally:
        thread.join(timeout=10)
        listener.close()
    return Floor("httpRoundTrips", count, seconds)


def tls_handshakes(count: int, cert_file: Path, key_file: Path, ca_file: Path) -> Floor:
    """`count` full TLS handshakes (no session resumption) to a loopback server."""
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_file, key_file)
    client_context = ssl.create_default_context(cafile=str(ca_file))
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    port = listener.getsockname()[1]

    def serve() -> None:
        for _ in range(count):
            conn, _ = listener.accept()
            with server_context.wrap_socket(conn, server_side=True) as tls:
                _read_exactly(tls, 1)
                tls.sendall(b"!")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        started = time.perf_counter()
        for _ in range(count):
            with socket.create_connection(("127.0.0.1", port)) as raw:
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with client_context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    tls.sendall(b"?")
                    _read_exactly(tls, 1)
        seconds = time.perf_counter() - started
    finally:
        thread.join(timeout=10)
        listener.close()
    return Floor("tlsHandshakes", count, seconds)


def process_starts(count: int) -> Floor:
    """`count` starts of `/bin/true` in a new session, each waited for."""
    started = time.perf_counter()
    for _ in range(count):
        subprocess.run(["/bin/true"], check=True, start_new_session=True)
    return Floor("processStarts", count, time.perf_counter() - started)
