"""Per-run synthetic trust: a PKI, signed tokens and an OAuth issuer on loopback.

Everything is generated fresh in a private temporary directory when the run
starts and deleted when it ends. Nothing here is a production trust stack:
it exists so that every adapter performs real TLS handshakes with strict X.509
verification on, and verifies real signed tokens with a public key only.
"""

from __future__ import annotations

import base64
import datetime as dt
import hmac as std_hmac
import ipaddress
import itertools
import json
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, hmac, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from interop.redact import Redactor

CLOCK = 1_893_456_000  # 2030-01-01T00:00:00Z: the fixed verification time of every token
ISSUER = "urn:ahp-interop:issuer"
AUDIENCE = "urn:ahp-interop:backend"
CLIENT_ID = "ahp-interop-client"
AUTH_MODES = ("none", "bearer", "oauth", "mtls", "workload")
TOKEN_LIFETIME = 3600


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _jwt_input(alg: str, claims: dict[str, Any]) -> bytes:
    header = {"alg": alg, "typ": "JWT"}
    parts = [json.dumps(p, separators=(",", ":")).encode() for p in (header, claims)]
    return (_b64url(parts[0]) + "." + _b64url(parts[1])).encode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hmac_compare(a: str, b: str) -> bool:
    return std_hmac.compare_digest(a.encode(), b.encode())


def sign_es256(key: ec.EllipticCurvePrivateKey, claims: dict[str, Any]) -> str:
    """A compact JWS with ES256 (raw r||s signature, per RFC 7518)."""
    signing_input = _jwt_input("ES256", claims)
    r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
    signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return signing_input.decode("ascii") + "." + _b64url(signature)


def sign_hs256(secret: str, claims: dict[str, Any]) -> str:
    """A compact JWS with HS256 (the upstream `compat` wire)."""
    signing_input = _jwt_input("HS256", claims)
    mac = hmac.HMAC(secret.encode(), hashes.SHA256())
    mac.update(signing_input)
    return signing_input.decode("ascii") + "." + _b64url(mac.finalize())


def standard_claims(purpose: str) -> dict[str, Any]:
    return {
        "iss": ISSUER,
        "sub": CLIENT_ID,
        "aud": AUDIENCE,
        "purpose": purpose,
        "iat": CLOCK,
        "exp": CLOCK + TOKEN_LIFETIME,
    }


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "AHP Interop Matrix (test only)"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _validity(expired: bool = False) -> tuple[dt.datetime, dt.datetime]:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    if expired:  # ended a day ago
        return now - dt.timedelta(days=3), now - dt.timedelta(days=1)
    return now - dt.timedelta(hours=1), now + dt.timedelta(days=2)


@dataclass
class Authority:
    """A root CA that issues leaf certificates."""

    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @classmethod
    def create(cls, common_name: str) -> Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        not_before, not_after = _validity()
        public = key.public_key()
        certificate = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .sign(key, hashes.SHA256())
        )
        return cls(key=key, certificate=certificate)

    def issue(
        self,
        common_name: str,
        *,
        server: bool,
        expired: bool = False,
        names: tuple[str, ...] | None = None,
    ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        """A leaf: server (server-auth usage, `names` as SANs, default 127.0.0.1 and
        localhost) or client (client-auth usage); `expired` ended a day ago."""
        key = ec.generate_private_key(ec.SECP256R1())
        not_before, not_after = _validity(expired)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=False,
                    crl_sign=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                critical=False,
            )
        )
        if server:
            sans: list[x509.GeneralName] = (
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
                if names is None
                else [x509.DNSName(n) for n in names]
            )
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return key, builder.sign(self.key, hashes.SHA256())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _pem_public(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def redact_key(redactor: Redactor, pem_key: bytes) -> None:
    """Give the redactor every base64 line of a PEM private key (never printed)."""
    for line in pem_key.decode().splitlines():
        if len(line) >= 32 and not line.startswith("-----"):
            redactor.add(line)


def _pem_cert(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


@dataclass
class Trust:
    """The run's trust material on disk (paths) and in memory (secrets).

    Files: `ca.pem`, `server.pem`/`server-key.pem`, `client.pem`/`client-key.pem`,
    `untrusted-client.pem`/`untrusted-client-key.pem` (from a second CA),
    `oauth-public.pem`, `workload-public.pem`.
    """

    directory: Path
    bearer_token: str
    client_secret: str
    oauth_key: ec.EllipticCurvePrivateKey
    workload_key: ec.EllipticCurvePrivateKey
    compat_secrets: dict[str, str]
    redactor: Redactor
    authority: Authority | None = None  # the run's CA (for certificates made on demand)
    stranger: Authority | None = None  # a CA nobody trusts
    issuer_endpoints: dict[str, str] = field(default_factory=dict)
    # numbers the leaves made on demand: concurrent combinations ask for the same
    # names, and each must read the pair it was given (`leaf_files`)
    _leaves: Iterator[int] = field(default_factory=itertools.count, repr=False)

    @classmethod
    def create(cls, redactor: Redactor, parent: Path | None = None) -> Trust:
        directory = Path(tempfile.mkdtemp(prefix="ahp-trust-", dir=parent))
        directory.chmod(0o700)
        authority = Authority.create("AHP Interop Run CA")
        stranger = Authority.create("AHP Interop Untrusted CA")
        files: dict[str, bytes] = {"ca.pem": _pem_cert(authority.certificate)}
        for name, issuer, is_server in (
            ("server", authority, True),
            ("client", authority, False),
            ("untrusted-client", stranger, False),
        ):
            key, certificate = issuer.issue(f"ahp-interop-{name}", server=is_server)
            files[f"{name}.pem"] = _pem_cert(certificate)
            files[f"{name}-key.pem"] = _pem_key(key)
        oauth_key = ec.generate_private_key(ec.SECP256R1())
        workload_key = ec.generate_private_key(ec.SECP256R1())
        files["oauth-public.pem"] = _pem_public(oauth_key)
        files["workload-public.pem"] = _pem_public(workload_key)
        for name, data in files.items():
            path = directory / name
            path.write_bytes(data)
            path.chmod(0o600)
        trust = cls(
            directory=directory,
            bearer_token="ahp-bearer-" + secrets.token_urlsafe(24),
            client_secret="ahp-secret-" + secrets.token_urlsafe(24),
            oauth_key=oauth_key,
            workload_key=workload_key,
            compat_secrets={
                p: "ahp-hs256-" + secrets.token_urlsafe(24) for p in ("oauth", "workload")
            },
            redactor=redactor,
            authority=authority,
            stranger=stranger,
        )
        for secret in (trust.bearer_token, trust.client_secret, *trust.compat_secrets.values()):
            redactor.add(secret)
        for name in ("server-key.pem", "client-key.pem", "untrusted-client-key.pem"):
            redact_key(redactor, files[name])
        return trust

    def path(self, name: str) -> str:
        return str(self.directory / name)

    def token(self, purpose: str, profile: str) -> str:
        """A signed token for `purpose` (`oauth` or `workload`) under `profile`."""
        claims = standard_claims(purpose)
        if profile == "compat":
            value = sign_hs256(self.compat_secrets[purpose], claims)
        else:
            key = self.oauth_key if purpose == "oauth" else self.workload_key
            value = sign_es256(key, claims)
        self.redactor.add(value)
        return value

    def credential_valid(self, mode: str, profile: str, authorization: list[str]) -> bool | None:
        """Whether the Authorization headers a client sent carry the run's valid credential
        for `mode` (a token signed by the run's issuer, for the run's audience, unexpired
        at the fixed clock; the run's bearer token), None for a mode without one."""
        if mode not in ("bearer", "oauth", "workload"):
            return None
        if len(authorization) != 1 or not authorization[0].startswith("Bearer "):
            return False
        token = authorization[0].removeprefix("Bearer ")
        if mode == "bearer":
            return hmac_compare(token, self.bearer_token)
        return self._jwt_valid(token, mode, profile)

    def _jwt_valid(self, token: str, purpose: str, profile: str) -> bool:
        parts = token.split(".")
        if len(parts) != 3:
            return False
        try:
            header, claims = (json.loads(_unb64url(p)) for p in parts[:2])
            signature = _unb64url(parts[2])
        except ValueError:
            return False
        signing_input = (parts[0] + "." + parts[1]).encode("ascii")
        if profile == "compat":
            if header.get("alg") != "HS256":
                return False
            mac = hmac.HMAC(self.compat_secrets[purpose].encode(), hashes.SHA256())
            mac.update(signing_input)
            if not hmac_compare(_b64url(mac.finalize()), parts[2]):
                return False
        else:
            if header.get("alg") != "ES256" or len(signature) != 64:
                return False
            key = self.oauth_key if purpose == "oauth" else self.workload_key
            r, s = (int.from_bytes(signature[i : i + 32], "big") for i in (0, 32))
            try:
                key.public_key().verify(
                    encode_dss_signature(r, s), signing_input, ec.ECDSA(hashes.SHA256())
                )
            except InvalidSignature:
                return False
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        exp = claims.get("exp")
        return (
            claims.get("iss") == ISSUER
            and AUDIENCE in audiences
            and isinstance(exp, int)
            and exp > CLOCK
        )

    def leaf_files(
        self, name: str, *, untrusted: bool = False, server: bool, **options: Any
    ) -> tuple[str, str]:
        """(certificate, key) paths of a leaf made now: by the run's CA, or by a CA nobody
        trusts; `options` as for `Authority.issue` (`expired`, `names`). Every call
        writes files of its own (`name-N`): combinations running at once ask for the
        same leaves, and rewriting one file under another's handshake broke it."""
        authority = self.stranger if untrusted else self.authority
        assert authority is not None, "the trust was made without its authorities"
        key, certificate = authority.issue(f"ahp-interop-{name}", server=server, **options)
        stem = f"{name}-{next(self._leaves)}"
        pem_key = _pem_key(key)
        redact_key(self.redactor, pem_key)
        paths = []
        for suffix, data in ((".pem", _pem_cert(certificate)), ("-key.pem", pem_key)):
            path = self.directory / f"{stem}{suffix}"
            path.write_bytes(data)
            path.chmod(0o600)
            paths.append(str(path))
        return paths[0], paths[1]

    def destroy(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    # -- adapter configuration -------------------------------------------------

    def server_auth(self, mode: str, profile: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The `auth` block and the `tls` block (or None) of a server config."""
        auth: dict[str, Any] = {"mode": mode, "profile": profile}
        tls = self._server_tls(mode, profile)
        if mode == "bearer":
            auth["token"] = self.bearer_token
        elif mode in ("oauth", "workload"):
            auth.update(issuer=ISSUER, audience=AUDIENCE, purpose=mode, clock=CLOCK)
            if profile == "compat":
                auth["signingKey"] = self.compat_secrets[mode]
            else:
                auth["publicKeyFile"] = self.path(f"{mode}-public.pem")
        elif mode == "mtls" and profile == "compat":
            auth.update(self._compat_tls_files("server"))
        return auth, tls

    def client_auth(self, mode: str, profile: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The `auth` block and the `tls` block (or None) of a client config."""
        auth: dict[str, Any] = {"mode": mode, "profile": profile}
        tls: dict[str, Any] | None = None
        if profile == "strict" and mode != "none":
            tls = {"caFile": self.path("ca.pem")}
            if mode == "mtls":
                tls.update(certFile=self.path("client.pem"), keyFile=self.path("client-key.pem"))
        if mode == "bearer":
            auth["token"] = self.bearer_token
        elif mode == "oauth":
            auth.update(
                tokenEndpoint=self.issuer_endpoints[profile],
                clientId=CLIENT_ID,
                clientSecret=self.client_secret,
                audience=AUDIENCE,
            )
        elif mode == "workload":
            auth["assertion"] = self.token("workload", profile)
        elif mode == "mtls" and profile == "compat":
            auth.update(self._compat_tls_files("client"))
        return auth, tls

    def _compat_tls_files(self, role: str) -> dict[str, str]:
        """The upstream wire carries mTLS files in `auth` (ours: in `tls`)."""
        return {
            "caFile": self.path("ca.pem"),
            "certFile": self.path(f"{role}.pem"),
            "keyFile": self.path(f"{role}-key.pem"),
        }

    def _server_tls(self, mode: str, profile: str) -> dict[str, Any] | None:
        if profile != "strict" or mode == "none":
            return None
        tls: dict[str, Any] = {
            "certFile": self.path("server.pem"),
            "keyFile": self.path("server-key.pem"),
        }
        if mode == "mtls":
            tls["clientCaFile"] = self.path("ca.pem")
        return tls
