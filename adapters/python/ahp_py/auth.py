"""Request authentication: server-side checks and client-side credentials.

Never log or return a token, secret or key: errors name the check that failed.
"""

from __future__ import annotations

import hmac
import time
import warnings
from typing import Any
from urllib.parse import urlencode, urlsplit

from . import codec
from .config import AuthSettings, ConfigError

JWT_MODES = frozenset({"oauth", "workload"})
TOKEN_MODES = frozenset({"bearer", "oauth", "workload"})


class AuthError(Exception):
    """Credentials could not be obtained (client side)."""


class Authenticator:
    """Decides whether one AHP request's Authorization header list is acceptable."""

    def __init__(self, settings: AuthSettings) -> None:
        self.mode = settings.mode
        self._token: str | None = None
        self._key: Any = None
        if self.mode == "bearer":
            self._token = settings.string("token")
        elif self.mode in JWT_MODES:
            self._algorithm = "ES256" if settings.profile == "strict" else "HS256"
            if settings.profile == "strict":
                self._key = _load_p256_public_key(settings.string("publicKeyFile"))
            else:
                self._key = settings.string("signingKey").encode("utf-8")
            self._issuer = settings.string("issuer")
            self._audience = settings.string("audience")
            purpose = settings.section.get("purpose", self.mode)
            if not isinstance(purpose, str) or not purpose:
                raise ConfigError("auth.purpose must be a non-empty string")
            self._purpose = purpose
            clock = settings.section.get("clock")
            if clock is not None and not codec.is_number(clock):
                raise ConfigError("auth.clock must be a number of Unix seconds")
            self._clock = clock

    def accepts(self, authorization: list[str]) -> bool:
        """``authorization`` is every Authorization header of the request, in order."""
        if self.mode not in TOKEN_MODES:
            return True
        if len(authorization) != 1:
            return False
        value = authorization[0]
        if not value.startswith("Bearer ") or not value[7:].strip():
            return False
        token = value[7:].strip()
        if self.mode == "bearer":
            assert self._token is not None
            return hmac.compare_digest(
                token.encode("utf-8"), self._token.encode("utf-8")
            )
        return self._claims_ok(token)

    def _claims_ok(self, token: str) -> bool:
        import jwt

        try:
            if jwt.get_unverified_header(token).get("alg") != self._algorithm:
                return False
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                claims = jwt.decode(
                    token,
                    self._key,
                    algorithms=[self._algorithm],
                    options={
                        "verify_signature": True,
                        "verify_exp": False,
                        "verify_nbf": False,
                        "verify_iat": False,
                        "verify_aud": False,
                        "verify_iss": False,
                        "verify_sub": False,
                        "verify_jti": False,
                    },
                )
        except jwt.PyJWTError:
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


def _load_p256_public_key(path: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        with open(path, "rb") as handle:
            key = load_pem_public_key(handle.read())
    except (OSError, ValueError):
        raise ConfigError(
            "auth.publicKeyFile is not a readable PEM public key"
        ) from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        raise ConfigError("auth.publicKeyFile must hold a P-256 public key")
    return key


def client_token(settings: AuthSettings, timeout: float) -> str | None:
    """The bearer token this client sends, acquiring an OAuth token when needed."""
    if settings.mode == "bearer":
        return settings.string("token")
    if settings.mode == "workload":
        return settings.string("assertion")
    if settings.mode == "oauth":
        return _fetch_oauth_token(settings, timeout)
    return None


def _fetch_oauth_token(settings: AuthSettings, timeout: float) -> str:
    """Client-credentials grant by form POST; redirects are refused, never followed."""
    import http.client

    endpoint = settings.string("tokenEndpoint")
    url = urlsplit(endpoint)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise AuthError("auth.tokenEndpoint must be an http(s) URL")
    if settings.profile == "strict" and url.scheme != "https":
        raise AuthError("profile strict needs an https token endpoint")
    body = urlencode(
        {
            "grant_type": "client_credentials",
            "client_id": settings.string("clientId"),
            "client_secret": settings.string("clientSecret"),
            "audience": settings.string("audience"),
        }
    ).encode("ascii")
    connection: http.client.HTTPConnection
    if url.scheme == "https":
        from .tls import client_context

        context = client_context(settings.client_tls())
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
