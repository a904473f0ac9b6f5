"""Throwaway trust material for tests: a P-256 CA, server and client certificates,
and ES256 token keys. Everything is written under a temporary directory."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CLOCK = 1_900_000_000  # the fixed verification time handed to servers


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # a CA nobody chains to
    other_client_cert: Path
    other_client_key: Path
    token_private: Any
    token_public: Path
    wrong_token_private: Any


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(
        now + datetime.timedelta(days=2)
    )


Extension = tuple[x509.ExtensionType, bool]  # (extension, critical)


def _certificate(
    key: ec.EllipticCurvePrivateKey,
    subject: x509.Name,
    issuer: x509.Name,
    signer: ec.EllipticCurvePrivateKey,
    ca: bool,
    extensions: list[Extension],
) -> x509.Certificate:
    """A certificate for ``key``: CA or end entity, then ``extensions`` in order."""
    builder = (
        _validity(x509.CertificateBuilder())
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(signer, hashes.SHA256())


def _make_ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    name = _name(common_name)
    subject_key_id = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    return key, _certificate(key, name, name, key, True, [(subject_key_id, False)])


def _make_leaf(
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    common_name: str,
    usage: x509.ObjectIdentifier,
    server: bool,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    authority = x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key())
    extensions: list[Extension] = [
        (x509.ExtendedKeyUsage([usage]), False),
        (x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False),
        (authority, False),
    ]
    if server:
        addresses = [
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.DNSName("localhost"),
        ]
        extensions.append((x509.SubjectAlternativeName(addresses), False))
    cert = _certificate(key, _name(common_name), ca_cert.subject, ca_key, False, extensions)
    return key, cert


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def make_pki(directory: Path) -> Pki:
    ca_key, ca_cert = _make_ca("ahp-py test CA")
    other_key, other_cert = _make_ca("ahp-py unrelated CA")
    server_key, server_cert = _make_leaf(
        ca_key,
        ca_cert,
        "ahp-py test server",
        ExtendedKeyUsageOID.SERVER_AUTH,
        server=True,
    )
    client_key, client_cert = _make_leaf(
        ca_key,
        ca_cert,
        "ahp-py test client",
        ExtendedKeyUsageOID.CLIENT_AUTH,
        server=False,
    )
    stray_key, stray_cert = _make_leaf(
        other_key,
        other_cert,
        "ahp-py stray client",
        ExtendedKeyUsageOID.CLIENT_AUTH,
        server=False,
    )
    paths = {
        "ca": directory / "ca.pem",
        "other_ca": directory / "other-ca.pem",
        "server_cert": directory / "server.pem",
        "server_key": directory / "server-key.pem",
        "client_cert": directory / "client.pem",
        "client_key": directory / "client-key.pem",
        "other_client_cert": directory / "stray.pem",
        "other_client_key": directory / "stray-key.pem",
        "token_public": directory / "token-public.pem",
    }
    _write_cert(paths["ca"], ca_cert)
    _write_cert(paths["other_ca"], other_cert)
    _write_cert(paths["server_cert"], server_cert)
    _write_key(paths["server_key"], server_key)
    _write_cert(paths["client_cert"], client_cert)
    _write_key(paths["client_key"], client_key)
    _write_cert(paths["other_client_cert"], stray_cert)
    _write_key(paths["other_client_key"], stray_key)
    token_key = _key()
    paths["token_public"].write_bytes(
        token_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return Pki(token_private=token_key, wrong_token_private=_key(), **paths)


def sign_token(key: Any, algorithm: str = "ES256", **overrides: Any) -> str:
    """A JWT with claims valid at CLOCK unless overridden (None removes a claim)."""
    import jwt

    claims: dict[str, Any] = {
        "iss": "https://issuer.test",
        "aud": "ahp-backend",
        "sub": "harness-client",
        "purpose": "oauth",
        "iat": CLOCK - 60,
        "exp": CLOCK + 600,
    }
    for name, value in overrides.items():
        if value is None:
            claims.pop(name, None)
        else:
            claims[name] = value
    return jwt.encode(claims, key, algorithm=algorithm)
