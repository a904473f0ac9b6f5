"""The auth suite's server-side cases: what each probe sends, written out by hand.

A case says which modes and profiles it applies to, whether it is a negative
(the server must refuse it) or a positive control, and how to build the
request: headers, TLS options, query string. Tokens are made here from the
run's trust with deliberate faults (docs/AUTH.md lists every case).
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import hashes, hmac, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from interop.runtime.probe import TlsOptions
from interop.trust import AUDIENCE, CLOCK, ISSUER, Trust, standard_claims

TOKEN_MODES = ("bearer", "oauth", "workload")
JWT_MODES = ("oauth", "workload")
HTTPS_MODES = ("bearer", "oauth", "workload", "mtls")  # under strict
REJECTED = (401, 403)
MALFORMED = (400, 401, 403, 431)  # a header the server may refuse as malformed


@dataclass
class Material:
    """What one (server, mode, profile) probes with: the run's trust and extra files."""

    trust: Trust
    mode: str
    profile: str
    files: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (cert, key)

    @property
    def https(self) -> bool:
        return self.mode == "mtls" or (self.profile == "strict" and self.mode != "none")

    def token(self) -> str:
        """The credential an honest client presents in this mode."""
        if self.mode == "bearer":
            return self.trust.bearer_token
        return self.trust.token(self.mode, self.profile)

    def tls(self, *, cert: str | None = "client", version: str | None = None) -> TlsOptions:
        """The client TLS: the run's CA, and a client certificate by name (mTLS only)."""
        files = {"client": (self.trust.path("client.pem"), self.trust.path("client-key.pem"))}
        files |= self.files
        chosen = files.get(cert) if cert is not None and self.mode == "mtls" else None
        return TlsOptions(
            self.trust.path("ca.pem"),
            chosen[0] if chosen else None,
            chosen[1] if chosen else None,
            version,
        )


@dataclass(frozen=True)
class Request:
    headers: list[tuple[str, str]]
    tls: TlsOptions | None
    query: str = ""
    plain: bool = False  # plain HTTP to the HTTPS port


@dataclass(frozen=True)
class Case:
    name: str
    negative: bool
    modes: tuple[str, ...]
    build: Callable[[Material], Request]
    profiles: tuple[str, ...] = ("strict", "compat")
    statuses: tuple[int, ...] = REJECTED  # what answers a negative over HTTP
    https_only: bool = False  # the case needs a TLS listener (strict, or mtls)
    # a rule of our contract only (docs/CONTRACT.md, "Authentication and TLS"), neither
    # the protocol's nor upstream's auth driver's: a contract v1 server is not probed on it
    ours: bool = False


# ------------------------------------------------------------------ tokens


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _segments(header: dict[str, Any], claims: dict[str, Any]) -> bytes:
    parts = [json.dumps(p, separators=(",", ":")).encode() for p in (header, claims)]
    return f"{_b64(parts[0])}.{_b64(parts[1])}".encode("ascii")


def _es256(key: ec.EllipticCurvePrivateKey, claims: dict[str, Any], **header: Any) -> str:
    signing = _segments({"alg": "ES256", "typ": "JWT", **header}, claims)
    r, s = decode_dss_signature(key.sign(signing, ec.ECDSA(hashes.SHA256())))
    return signing.decode() + "." + _b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def _hs256(secret: bytes, claims: dict[str, Any], **header: Any) -> str:
    signing = _segments({"alg": "HS256", "typ": "JWT", **header}, claims)
    mac = hmac.HMAC(secret, hashes.SHA256())
    mac.update(signing)
    return signing.decode() + "." + _b64(mac.finalize())


def _key(m: Material) -> ec.EllipticCurvePrivateKey:
    return m.trust.oauth_key if m.mode == "oauth" else m.trust.workload_key


def signed(m: Material, claims: dict[str, Any], **header: Any) -> str:
    """`claims` signed the way this profile's server verifies (ES256 / HS256)."""
    if m.profile == "compat":
        return _hs256(m.trust.compat_secrets[m.mode].encode(), claims, **header)
    return _es256(_key(m), claims, **header)


def _claims(m: Material, **changes: Any) -> dict[str, Any]:
    claims = standard_claims(m.mode)
    for name, value in changes.items():
        if value is _DROP:
            claims.pop(name, None)
        else:
            claims[name] = value
    return claims


_DROP = object()


def _other_key(m: Material, **header: Any) -> str:
    """The right claims signed by a key the server does not know."""
    if m.profile == "compat":
        return _hs256(secrets.token_bytes(32), _claims(m), **header)
    return _es256(ec.generate_private_key(ec.SECP256R1()), _claims(m), **header)


def _jwk(key: ec.EllipticCurvePrivateKey) -> dict[str, str]:
    numbers = key.public_key().public_numbers()
    return {
        "kty": "EC",
        "crv": "P-256",
        "x": _b64(numbers.x.to_bytes(32, "big")),
        "y": _b64(numbers.y.to_bytes(32, "big")),
    }


def _embedded_jwk(m: Material) -> str:
    attacker = ec.generate_private_key(ec.SECP256R1())
    return _es256(attacker, _claims(m), jwk=_jwk(attacker))


def _confusion(m: Material) -> str:
    """HS256 keyed with the server's public key (PEM bytes): algorithm confusion."""
    public = (
        _key(m)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return _hs256(public, _claims(m))


def _alg_none(m: Material) -> str:
    return _segments({"alg": "none", "typ": "JWT"}, _claims(m)).decode() + "."


def _flip_signature(token: str) -> str:
    head, _, signature = token.rpartition(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    return f"{head}.{flipped}"


def _cross_purpose(m: Material) -> str:
    other = "workload" if m.mode == "oauth" else "oauth"
    return m.trust.token(other, m.profile)


def _es256_in_compat(m: Material) -> str:
    return _es256(_key(m), _claims(m))


# ------------------------------------------------------------------ requests


def header(*values: str | Callable[[Material], str]) -> Callable[[Material], Request]:
    """`Authorization` headers, each a text or built from the material."""

    def build(m: Material) -> Request:
        made = [v(m) if callable(v) else v for v in values]
        return Request([("Authorization", v) for v in made], m.tls())

    return build


def token_case(make: Callable[[Material], str]) -> Callable[[Material], Request]:
    return lambda m: Request([("Authorization", f"Bearer {make(m)}")], m.tls())


def _valid(m: Material) -> str:
    return f"Bearer {m.token()}"


def _wrong(m: Material) -> str:
    return "Bearer wrong-" + secrets.token_urlsafe(24)


def _none_request(m: Material) -> Request:
    return Request([], m.tls())


def _query(m: Material) -> Request:
    return Request([], m.tls(), query=f"access_token={m.token()}")


def _plain(m: Material) -> Request:
    headers = [] if m.mode in ("none", "mtls") else [("Authorization", _valid(m))]
    return Request(headers, None, plain=True)


def _certificate(name: str | None, version: str) -> Callable[[Material], Request]:
    return lambda m: Request([], m.tls(cert=name, version=version))


CASES: tuple[Case, ...] = (
    # -- every token mode: the header itself
    Case("missing-authorization", True, TOKEN_MODES, _none_request),
    Case("wrong-token", True, TOKEN_MODES, header(_wrong)),
    Case("duplicate-valid-valid", True, TOKEN_MODES, header(_valid, _valid), statuses=MALFORMED),
    Case("duplicate-valid-wrong", True, TOKEN_MODES, header(_valid, _wrong), statuses=MALFORMED),
    Case("duplicate-wrong-valid", True, TOKEN_MODES, header(_wrong, _valid), statuses=MALFORMED),
    Case(
        "two-tokens-in-one-header",
        True,
        TOKEN_MODES,
        header(lambda m: f"{_valid(m)}, {_valid(m)}"),
        statuses=MALFORMED,
    ),
    Case("another-scheme", True, TOKEN_MODES, header(lambda m: f"Token {m.token()}")),
    Case(
        "basic-scheme",
        True,
        TOKEN_MODES,
        header(lambda m: "Basic " + base64.b64encode(f"x:{m.token()}".encode()).decode()),
    ),
    Case("scheme-without-token", True, TOKEN_MODES, header("Bearer"), statuses=MALFORMED),
    Case(
        "oversize-16-kib-token",
        True,
        TOKEN_MODES,
        header(lambda m: "Bearer " + "A" * 16384),
        statuses=MALFORMED,
    ),
    Case("token-in-the-query-string", True, TOKEN_MODES, _query, ours=True),
    # -- signed tokens
    Case(
        "jwt-wrong-issuer",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, iss="urn:other"))),
    ),
    Case(
        "jwt-wrong-audience",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, aud="urn:ahp-interop:another-backend"))),
    ),
    Case(
        "jwt-audience-array-without-ours",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, aud=["urn:a", "urn:b"]))),
    ),
    Case(
        "jwt-wrong-purpose",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, purpose="elsewhere"))),
    ),
    Case("jwt-cross-purpose", True, JWT_MODES, token_case(_cross_purpose)),
    Case(
        "jwt-expired", True, JWT_MODES, token_case(lambda m: signed(m, _claims(m, exp=CLOCK - 1)))
    ),
    Case(
        "jwt-exp-missing", True, JWT_MODES, token_case(lambda m: signed(m, _claims(m, exp=_DROP)))
    ),
    Case(
        "jwt-exp-a-string",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, exp=str(CLOCK + 3600)))),
    ),
    Case(
        "jwt-not-before-in-the-future",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, nbf=CLOCK + 600))),
    ),
    Case(
        "jwt-iat-missing",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, iat=_DROP))),
        ours=True,
    ),
    Case(
        "jwt-issued-in-the-future",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, iat=CLOCK + 600))),
        ours=True,
    ),
    Case(
        "jwt-sub-missing",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, sub=_DROP))),
        ours=True,
    ),
    Case(
        "jwt-sub-empty",
        True,
        JWT_MODES,
        token_case(lambda m: signed(m, _claims(m, sub=""))),
        ours=True,
    ),
    Case("jwt-bad-signature", True, JWT_MODES, token_case(lambda m: _flip_signature(m.token()))),
    Case("jwt-another-key", True, JWT_MODES, token_case(_other_key)),
    Case("jwt-alg-none", True, JWT_MODES, token_case(_alg_none)),
    Case("jwt-static-bearer", True, JWT_MODES, token_case(lambda m: m.trust.bearer_token)),
    Case(
        "jwt-not-three-segments", True, JWT_MODES, token_case(lambda m: m.token().rsplit(".", 1)[0])
    ),
    Case(
        "jwt-kid-pointing-elsewhere",
        True,
        JWT_MODES,
        token_case(lambda m: _other_key(m, kid="../../oauth-public.pem")),
    ),
    Case(
        "jwt-jku-header",
        True,
        JWT_MODES,
        token_case(lambda m: _other_key(m, jku="https://127.0.0.1:9/jwks.json")),
    ),
    Case(
        "jwt-x5u-header",
        True,
        JWT_MODES,
        token_case(lambda m: _other_key(m, x5u="https://127.0.0.1:9/cert.pem")),
    ),
    Case("jwt-embedded-jwk", True, JWT_MODES, token_case(_embedded_jwk), profiles=("strict",)),
    Case(
        "jwt-hs256-keyed-with-the-public-key",
        True,
        JWT_MODES,
        token_case(_confusion),
        profiles=("strict",),
    ),
    Case(
        "jwt-es256-where-hs256", True, JWT_MODES, token_case(_es256_in_compat), profiles=("compat",)
    ),
    # -- client certificates (TLS 1.3 and 1.2, each rejection named by its alert)
    *(
        Case(f"{name}-tls{version}", True, ("mtls",), _certificate(cert, version))
        for name, cert in (
            ("no-client-certificate", None),
            ("untrusted-client-certificate", "untrusted"),
            ("expired-client-certificate", "expired"),
            ("certificate-without-client-auth-usage", "server-usage"),
        )
        for version in ("1.3", "1.2")
    ),
    # -- transport
    Case(
        "plain-http-to-the-https-port",
        True,
        HTTPS_MODES,
        _plain,
        https_only=True,
    ),
    # -- positive controls, after every negative
    Case(
        "none-ignores-wrong-credentials",
        False,
        ("none",),
        header(_wrong),
    ),
    Case(
        "scheme-is-case-insensitive",
        False,
        TOKEN_MODES,
        header(lambda m: f"bearer {m.token()}"),
        ours=True,
    ),
    Case(
        "positive-control",
        False,
        ("none", *TOKEN_MODES, "mtls"),
        lambda m: Request(
            [] if m.mode in ("none", "mtls") else [("Authorization", _valid(m))], m.tls()
        ),
    ),
)


def applicable(mode: str, profile: str, https: bool) -> list[Case]:
    """This mode's cases under `profile`, negatives first (the positives control them)."""
    chosen = [
        c
        for c in CASES
        if mode in c.modes and profile in c.profiles and (https or not c.https_only)
    ]
    return [c for c in chosen if c.negative] + [c for c in chosen if not c.negative]


def extra_certificates(trust: Trust) -> dict[str, tuple[str, str]]:
    """The client certificates the mTLS negatives present (made once per run)."""
    untrusted = (trust.path("untrusted-client.pem"), trust.path("untrusted-client-key.pem"))
    return {
        "untrusted": untrusted,
        "expired": trust.leaf_files("expired-client", server=False, expired=True),
        # a certificate of the run's CA whose only usage is server authentication
        "server-usage": (trust.path("server.pem"), trust.path("server-key.pem")),
    }


__all__ = ["AUDIENCE", "CASES", "ISSUER", "Case", "Material", "Request", "applicable"]
