"""Reading the contract's config files and the auth/TLS settings they carry."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import codec

AUTH_MODES = frozenset({"none", "bearer", "oauth", "mtls", "workload"})
PROFILES = frozenset({"strict", "compat"})


class ConfigError(ValueError):
    """The config file is missing, malformed, or asks for something unsupported."""


def load_json_file(path: str | Path) -> Any:
    try:
        return codec.loads(Path(path).read_bytes())
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except codec.JsonDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from None


def load_config(path: str | Path) -> dict[str, Any]:
    config = load_json_file(path)
    if not isinstance(config, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return config


def write_json_atomic(path: str | Path, value: Any) -> None:
    """Write a temporary file in the same directory, then rename it into place."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(codec.dump_bytes(value) + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _string(section: dict[str, Any], key: str, where: str) -> str:
    value = section.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}.{key} must be a non-empty string")
    return value


def _optional_string(section: dict[str, Any], key: str, where: str) -> str | None:
    if section.get(key) is None:
        return None
    return _string(section, key, where)


@dataclass(frozen=True)
class TlsFiles:
    """Certificate material for one side of a TLS connection."""

    ca_file: str | None = None  # client: trust anchor; server: client-certificate CA
    cert_file: str | None = None
    key_file: str | None = None


@dataclass(frozen=True)
class AuthSettings:
    mode: str
    profile: str
    section: dict[str, Any] = field(repr=False)
    tls: dict[str, Any] | None = field(default=None, repr=False)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> AuthSettings:
        auth = config.get("auth")
        auth = auth if isinstance(auth, dict) else {}
        mode = auth.get("mode", "none")
        profile = auth.get("profile", "strict")
        if mode not in AUTH_MODES:
            raise ConfigError(f"auth.mode {mode!r} is not supported")
        if profile not in PROFILES:
            raise ConfigError(f"auth.profile {profile!r} is not supported")
        tls = config.get("tls")
        if tls is not None and not isinstance(tls, dict):
            raise ConfigError("tls must be an object")
        return cls(mode=mode, profile=profile, section=auth, tls=tls)

    def string(self, key: str) -> str:
        return _string(self.section, key, "auth")

    def server_tls(self) -> TlsFiles | None:
        """The server's certificate (and client CA) or None for plain HTTP."""
        if self.profile == "compat" and self.mode == "mtls":
            return TlsFiles(
                ca_file=self.string("caFile"),
                cert_file=self.string("certFile"),
                key_file=self.string("keyFile"),
            )
        if self.tls is not None:
            files = TlsFiles(
                ca_file=_optional_string(self.tls, "clientCaFile", "tls"),
                cert_file=_string(self.tls, "certFile", "tls"),
                key_file=_string(self.tls, "keyFile", "tls"),
            )
            if self.mode == "mtls" and files.ca_file is None:
                raise ConfigError("auth.mode mtls needs tls.clientCaFile")
            return files
        if self.profile == "strict" and self.mode != "none":
            raise ConfigError(
                f"profile strict needs a tls block for auth.mode {self.mode}"
            )
        return None

    def client_tls(self) -> TlsFiles:
        """Trust anchor and optional client certificate for HTTPS connections."""
        if self.profile == "compat" and self.mode == "mtls":
            return TlsFiles(
                ca_file=self.string("caFile"),
                cert_file=self.string("certFile"),
                key_file=self.string("keyFile"),
            )
        tls = self.tls or {}
        files = TlsFiles(
            ca_file=_optional_string(tls, "caFile", "tls"),
            cert_file=_optional_string(tls, "certFile", "tls"),
            key_file=_optional_string(tls, "keyFile", "tls"),
        )
        if self.mode == "mtls" and (files.cert_file is None or files.key_file is None):
            raise ConfigError("auth.mode mtls needs tls.certFile and tls.keyFile")
        return files
