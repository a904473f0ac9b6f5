"""Request authentication: server-side checks and client-side credentials.

Never log or return a token, secret or key: errors name the check that failed.
The settings arrive typed (``ServerPolicy``, ``ClientCredentials``); reading
them from a config file is the caller's business.
"""

from __future__ import annotations

import hmac
import time
import warnings
from typing import Any
from urllib.parse import urlencode, urlsplit

from . import codec
from .record import field, record
from .tls import TlsFiles

AUTH_MODES = frozenset({"none", "bearer", "oauth", "mtls", "workload"})
JWT_MODES = frozenset({"oauth", "workload"})
TOKEN_MODES = frozenset({"bearer", "oauth", "workload"})


class AuthError(Exception):
    """Credentials could not be obtained (client side)."""


@record
class ServerPolicy:
    """What a server accepts in the ``Authorization`` header, per mode.

    ``bearer`` compares ``token``; ``oauth`` and ``workload`` verify a JWT signed
    with ``algorithm`` under ``key`` (an ES256 public key object, or the HS256
    secret as bytes) and check its claims against ``issuer``, ``audience``,
    ``purpose`` at ``clock`` (Unix seconds; None: the wall clock).
    ``none`` and ``mtls`` accept every header list (mTLS is the TLS layer's).
    """

    mode: str
    token: str | None = field(default=None, repr=False)
    algorithm: str = "ES256"
    key: Any = field(default=None, repr=False)
    issuer: str = ""
    audience: str = ""
    purpose: str = ""
    clock: float | None = None


class Authenticator:
    """Decides whether one AHP request's Authorization header list is acceptable."""

    def __init__(self, policy: ServerPolicy) -> None:
        self.mode = policy.mode
        self._token = policy.token
        self._key = policy.key
        self._algorithm = policy.algorithm
        self._issuer = policy.issuer
        self._audience = policy.audience
        self._purpose = policy.purpose
        self._clock = policy.clock

    def accepts(self, authorization: list[str]) -> bool:
        """``authorization`` is every Authorization header of the request, in order."""
        if self.mode not in TOKEN_MODES:
            return True
        if len(authorization) != 1:
            return False
        # "Bearer" 1*SP token, the scheme in any case (RFC 7235 section 2.1, RFC 6750)
        scheme, _, rest = authorization[0].partition(" ")
        token = rest.lstrip(" ")
        if scheme.lower() != "bearer" or not token or any(c in token for c in " \t,"):
            return False
        if self.mode == "bearer":
            assert self._token is not None
            return hmac.compare_digest(token.encode("utf-8"), self._token.encode("utf-8"))
        return self._claims_ok(token)

    def _claims_ok(self, token: str) -> bool:
        import jwt

        try:
            if jwt.get_unverified_header(token).get("alg") != self._algorithm:
                return False
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # Only the signature is PyJWT's; the claims are read as strict JSON.
                signed = jwt.PyJWS().decode_complete(token, self._key, algorithms=[self._algorithm])
            claims = codec.loads(signed["payload"])
        except (jwt.PyJWTError, codec.JsonDecodeError):
            return False
        if not isinstance(claims, dict):
            return False
        clock = float(self._clock) if self._clock is not None else time.time()
        audience = claims.get("aud")
        audience_ok = audience == self._audience or (
            isinstance(audience, list) and self._audience in audience
        )
        exp, iat = _seconds(claims.get("exp")), _seconds(claims.get("iat"))
        nbf = _seconds(claims.get("nbf"))
        return (
            isinstance(claims.get("iss"), str)
            and claims["iss"] == self._issuer
            and audience_ok
            and claims.get("purpose") == self._purpose
            and isinstance(claims.get("sub"), str)
            and claims["sub"] != ""
            and exp is not None
            and exp > clock
            and iat is not None
            and iat <= clock
            and ("nbf" not in claims or (nbf is not None and nbf <= clock))
        )


def _seconds(value: Any) -> float | None:
    """A NumericDate claim as a number, or None when it is not a JSON number."""
    return float(value) if codec.is_number(value) else None


def load_p256_public_key(path: str) -> Any:
    """The P-256 public key in a PEM file; ValueError says what is wrong."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        with open(path, "rb") as handle:
            key = load_pem_public_key(handle.read())
    except (OSError, ValueError):
        raise ValueError("not a readable PEM public key") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        raise ValueError("must hold a P-256 public key")
    return key


@record
class ClientCredentials:
    """What a client sends: ``token`` (the bearer token, or the workload
    assertion), or for ``oauth`` what the client-credentials grant needs.
    ``https_only`` refuses a plain-HTTP token endpoint; ``tls`` is the trust
    used to reach an HTTPS one."""

    mode: str
    token: str | None = field(default=None, repr=False)
    token_endpoint: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    audience: str | None = None
    https_only: bool = True
    tls: TlsFiles = field(default_factory=TlsFiles)


def client_token(credentials: ClientCredentials, timeout: float) -> str | None:
    """The bearer token this client sends, acquiring an OAuth token when needed."""
    if credentials.mode in ("bearer", "workload"):
        return credentials.token
    if credentials.mode == "oauth":
        return _fetch_oauth_token(credentials, timeout)
    return None


def _fetch_oauth_token(credentials: ClientCredentials, timeout: float) -> str:
    """Client-credentials grant by form POST; redirects are refused, never followed."""
    import http.client

    endpoint = credentials.token_endpoint or ""
    url = urlsplit(endpoint)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise AuthError("auth.tokenEndpoint must be an http(s) URL")
    if credentials.https_only and url.scheme != "https":
        raise AuthError("profile strict needs an https token endpoint")
    body = urlencode(
        {
            "grant_type": "client_credentials",
            "client_id": credentials.client_id or "",
            "client_secret": credentials.client_secret or "",
            "audience": credentials.audience or "",
        }
    ).encode("ascii")
    connection: http.client.HTTPConnection
    if url.scheme == "https":
        from .tls import client_context

        context = client_context(credentials.tls)
        connection = http.client.HTTPSConnection(
            url.hostname, url.port, timeout=timeout, context=context
        )
    else:
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    try:
        connection.request(
            "POST",
            path,
            body,
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
        )
        response = connection.getresponse()
        data = response.read()
    except (OSError, http.client.HTTPException) as exc:
        raise AuthError(f"token endpoint unreachable: {type(exc).__name__}") from None
    finally:
        connection.close()
    if response.status != 200:
        raise AuthError(f"token endpoint answered HTTP {response.status}")
    try:
        answer = codec.loads(data)
    except codec.JsonDecodeError:
        raise AuthError("token endpoint answer is not JSON") from None
    token = answer.get("access_token") if isinstance(answer, dict) else None
    token_type = answer.get("token_type") if isinstance(answer, dict) else None
    if not isinstance(token, str) or not token:
        raise AuthError("token endpoint answer has no access_token")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise AuthError("token endpoint answer is not a Bearer token")
    return token
