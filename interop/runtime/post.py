"""One HTTP(S) POST through the standard library's client, the answer read whole.

The request goes out as `http.client` writes it (`Host`, `Accept-Encoding:
identity`, `Content-Length`, then `headers` in their order); nothing is
retried and no redirect is followed. A connection, TLS or protocol failure
is a `PostFailed` whose text is the cause's own.
"""

from __future__ import annotations

import http.client
import ssl
from typing import NamedTuple
from urllib.parse import urlsplit


class PostFailed(RuntimeError):
    """The POST got no whole answer (the cause's text)."""


class Posted(NamedTuple):
    status: int
    body: bytes
    content_type: str | None


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    *,
    cafile: str | None = None,
) -> Posted:
    """POST `body` to `url` (its path and query); over https the server's certificate
    must chain to `cafile` (the system's trust when None) and name the host."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        context = ssl.create_default_context(cafile=cafile)
        connection = http.client.HTTPSConnection(host, parts.port, timeout=timeout, context=context)
    else:
        connection = http.client.HTTPConnection(host, parts.port, timeout=timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", target, body=body, headers=headers)
        response = connection.getresponse()
        return Posted(response.status, response.read(), response.getheader("Content-Type"))
    except (OSError, http.client.HTTPException) as exc:
        raise PostFailed(str(exc)) from exc
    finally:
        connection.close()
