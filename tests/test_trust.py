"""The run's trust material: strict X.509 handshakes, signed tokens, the issuer."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from interop.issuer import Issuer
from interop.redact import Redactor
from interop.trust import AUDIENCE, CLIENT_ID, CLOCK, ISSUER, Trust


@pytest.fixture
def trust(tmp_path: Path) -> Iterator[Trust]:
    made = Trust.create(Redactor(), parent=tmp_path)
    yield made
    made.destroy()
    assert not made.directory.exists()


def _handshake(trust: Trust, client_cert: str | None) -> str | None:
    """Run one TLS handshake with full verification; return the client's CN or None."""
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(trust.path("server.pem"), trust.path("server-key.pem"))
    server_ctx.load_verify_locations(trust.path("ca.pem"))
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    client_ctx = ssl.create_default_context(cafile=trust.path("ca.pem"))
    client_ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    if client_cert:
        client_ctx.load_cert_chain(
            trust.path(f"{client_cert}.pem"), trust.path(f"{client_cert}-key.pem")
        )
    listener = socket.create_server(("127.0.0.1", 0))
    result: dict[str, object] = {}

    def serve() -> None:
        connection, _ = listener.accept()
        try:
            with server_ctx.wrap_socket(connection, server_side=True) as tls:
                subject = dict(x[0] for x in tls.getpeercert()["subject"])  # type: ignore[index]
                result["cn"] = subject["commonName"]
                tls.sendall(b"ok")
        except (ssl.SSLError, OSError) as exc:
            result["error"] = exc

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        with (
            socket.create_connection(listener.getsockname()) as raw,
            client_ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            tls.recv(2)
    except (ssl.SSLError, OSError):
        pass
    thread.join(5)
    listener.close()
    return result.get("cn")  # type: ignore[return-value]


def test_strict_mutual_tls_handshake(trust: Trust) -> None:
    assert _handshake(trust, "client") == "ahp-interop-client"


def test_untrusted_client_certificate_is_refused(trust: Trust) -> None:
    assert _handshake(trust, "untrusted-client") is None


def _decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def test_es256_token_verifies_with_the_public_key_only(trust: Trust) -> None:
    token = trust.token("workload", "strict")
    head, body, signature = token.split(".")
    assert json.loads(_decode(head)) == {"alg": "ES256", "typ": "JWT"}
    claims = json.loads(_decode(body))
    assert claims == {
        "iss": ISSUER,
        "sub": CLIENT_ID,
        "aud": AUDIENCE,
        "purpose": "workload",
        "iat": CLOCK,
        "exp": CLOCK + 3600,
    }
    public = serialization.load_pem_public_key(Path(trust.path("workload-public.pem")).read_bytes())
    assert isinstance(public, ec.EllipticCurvePublicKey)
    raw = _decode(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    other = serialization.load_pem_public_key(Path(trust.path("oauth-public.pem")).read_bytes())
    assert isinstance(other, ec.EllipticCurvePublicKey)
    from cryptography.exceptions import InvalidSignature

    with pytest.raises(InvalidSignature):
        other.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))


def test_server_config_never_holds_a_signing_key(trust: Trust) -> None:
    for mode in ("oauth", "workload"):
        auth, tls = trust.server_auth(mode, "strict")
        assert "signingKey" not in auth and auth["publicKeyFile"].endswith("-public.pem")
        assert tls is not None and "clientCaFile" not in tls
    client_auth, _ = trust.client_auth("workload", "strict")
    assert set(client_auth) == {"mode", "profile", "assertion"}


def _token_request(endpoint: str, trust: Trust, secret: str) -> tuple[int, dict[str, object]]:
    form = urllib.parse.urlencode(
        {
            "grant_type": "client_credentials",
            "client_id": CLIENT_ID,
            "client_secret": secret,
            "audience": AUDIENCE,
        }
    )
    context = ssl.create_default_context(cafile=trust.path("ca.pem"))
    request = urllib.request.Request(endpoint, data=form.encode(), method="POST")
    try:
        with urllib.request.urlopen(request, context=context, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_issuer_serves_https_and_checks_the_client_secret(trust: Trust) -> None:
    with Issuer(trust, "strict") as issuer:
        assert issuer.endpoint.startswith("https://127.0.0.1:")
        status, body = _token_request(issuer.endpoint, trust, trust.client_secret)
        assert status == 200 and body["token_type"] == "Bearer"
        assert str(body["access_token"]).count(".") == 2
        status, body = _token_request(issuer.endpoint, trust, "wrong-secret-value")
        assert status == 401 and body == {"error": "invalid_client"}
        assert issuer.issued == 1
    assert trust.redactor(f"x {trust.client_secret} y") == "x [REDACTED] y"


def test_leaves_made_at_once_each_keep_their_own_files(trust: Trust) -> None:
    # combinations running at once ask for the same leaf; a rewrite of a shared file
    # under another's handshake failed it with "PEM lib"
    made: list[tuple[str, str]] = []
    problems: list[BaseException] = []

    def make() -> None:
        try:
            for _ in range(5):
                cert, key = trust.leaf_files("bad-expired", server=True, expired=True)
                made.append((cert, key))
                ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key)
        except BaseException as exc:  # reported below, with every other thread's
            problems.append(exc)

    threads = [threading.Thread(target=make) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert problems == []
    assert len({cert for cert, _ in made}) == len({key for _, key in made}) == 20
    assert all(Path(cert).name.startswith("bad-expired-") for cert, _ in made)
    key_text = Path(made[0][1]).read_text()
    assert trust.redactor(key_text) != key_text  # the leaf's key is never printed
