"""Config files -> typed settings (docs/CONTRACT.md: server, client, replay).

Every problem is a ``ConfigError`` naming the config file and the field; the
command line turns it into one stderr line and exit code 2. Keys this adapter
does not know are ignored. Scenario files are read here too (a bad one is a
problem of the config's ``scenarioFile``).
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sdk import codec
from ..sdk.auth import AUTH_MODES, JWT_MODES, ClientCredentials, ServerPolicy
from ..sdk.record import field, record
from ..sdk.tls import TlsFiles

if TYPE_CHECKING:
    from ..sdk.schemas import SchemaSet

PROFILES = ("strict", "compat")
TRANSPORTS = ("http", "stdio")
DEFAULT_LANGUAGE = "python"


class ConfigError(ValueError):
    """The config file is unreadable, malformed, or has a missing or wrong field."""

    def __init__(self, file: str, field_name: str | None, message: str) -> None:
        self.file = file
        self.field = field_name
        where = f"{file}: field {field_name}" if field_name else file
        super().__init__(f"{where}: {message}")


class ScenarioFileError(ValueError):
    """A scenario file is unreadable, malformed, or not ``{"scenarios": [...]}``."""


def read_json(path: str | Path) -> Any:
    """One strict JSON text from a file; ValueError says what is wrong."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return codec.loads(data)
    except codec.JsonDecodeError as exc:
        raise ValueError(f"{path} is not strict JSON: {exc}") from None


def read_scenarios(path: str) -> list[dict[str, Any]]:
    """The rows of a scenario file, each an object with a non-empty string ``id``."""
    try:
        document = read_json(path)
    except ValueError as exc:
        raise ScenarioFileError(str(exc)) from None
    rows = document.get("scenarios") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        raise ScenarioFileError(f"{path} has no scenarios array")
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not row["id"]:
            raise ScenarioFileError(f"{path}: scenarios[{index}] has no non-empty string id")
    return rows


class Fields:
    """Typed access to one object of a config file; errors name file and field."""

    def __init__(self, data: dict[str, Any], file: str, prefix: str = "") -> None:
        self.data = data
        self.file = file
        self.prefix = prefix

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(self.file, self.prefix + key, message)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def string(self, key: str) -> str:
        value = self.data.get(key)
        if value is None:
            raise self.error(key, "is missing")
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, "must be a non-empty string")
        return value

    def optional_string(self, key: str) -> str | None:
        return self.string(key) if self.has(key) else None

    def path(self, key: str) -> str:
        value = self.string(key)
        if not value.startswith("/"):
            raise self.error(key, "must be an absolute path")
        return value

    def optional_path(self, key: str) -> str | None:
        return self.path(key) if self.has(key) else None

    def choice(self, key: str, choices: tuple[str, ...], default: str | None = None) -> str:
        value = self.data.get(key, default)
        if value is None:
            raise self.error(key, "is missing")
        if value not in choices:
            raise self.error(key, f"{value!r} is not one of {', '.join(choices)}")
        return str(value)

    def command(self, key: str) -> list[str]:
        value = self.data.get(key)
        if value is None:
            raise self.error(key, "is missing")
        if not (
            isinstance(value, list)
            and value
            and all(isinstance(part, str) and part for part in value)
        ):
            raise self.error(key, "must be a non-empty array of non-empty strings")
        return list(value)

    def positive_integer(self, key: str) -> int:
        value = self.data.get(key)
        if value is None:
            raise self.error(key, "is missing")
        if not codec.is_positive_integer(value):
            raise self.error(key, "must be a positive integer")
        return int(value)

    def optional_number(self, key: str) -> float | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not codec.is_number(value):
            raise self.error(key, "must be a number")
        return float(value)

    def section(self, key: str, required: bool = False) -> Fields | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.error(key, "is missing")
            return None
        if not isinstance(value, dict):
            raise self.error(key, "must be an object")
        return Fields(value, self.file, f"{self.prefix}{key}.")

    def scenarios(self, key: str = "scenarioFile") -> list[dict[str, Any]]:
        try:
            return read_scenarios(self.path(key))
        except ScenarioFileError as exc:
            raise self.error(key, str(exc)) from None


def load_fields(path: str) -> Fields:
    """The top-level object of a config file."""
    try:
        value = read_json(path)
    except ValueError as exc:
        raise ConfigError(path, None, str(exc)) from None
    if not isinstance(value, dict):
        raise ConfigError(path, None, "must hold a JSON object")
    return Fields(value, path)


# Authentication and TLS -------------------------------------------------------


@record
class ServerAuth:
    mode: str
    profile: str
    policy: ServerPolicy = field(repr=False)
    tls: TlsFiles | None  # None: plain HTTP


@record
class ClientAuth:
    mode: str
    profile: str
    credentials: ClientCredentials = field(repr=False)
    tls: TlsFiles  # trust anchor and optional client certificate for HTTPS


def _mode_profile(config: Fields) -> tuple[Fields, str, str]:
    auth = config.section("auth", required=True)
    assert auth is not None
    mode = auth.choice("mode", tuple(sorted(AUTH_MODES)))
    profile = auth.choice("profile", PROFILES, default="strict")
    return auth, mode, profile


def _compat_mtls_files(auth: Fields) -> TlsFiles:
    return TlsFiles(
        ca_file=auth.path("caFile"), cert_file=auth.path("certFile"), key_file=auth.path("keyFile")
    )


def server_auth(config: Fields) -> ServerAuth:
    """The server's policy and TLS material (for an HTTP server)."""
    _, mode, profile = _mode_profile(config)
    return ServerAuth(
        mode=mode, profile=profile, policy=server_policy(config), tls=server_tls(config)
    )


def server_tls(config: Fields) -> TlsFiles | None:
    """The listener's certificate (and client CA), or None for plain HTTP."""
    auth, mode, profile = _mode_profile(config)
    if profile == "compat" and mode == "mtls":
        return _compat_mtls_files(auth)
    section = config.section("tls")
    if section is not None:
        tls = TlsFiles(
            ca_file=section.optional_path("clientCaFile"),
            cert_file=section.path("certFile"),
            key_file=section.path("keyFile"),
        )
        if mode == "mtls" and tls.ca_file is None:
            raise section.error("clientCaFile", "is needed for auth.mode mtls")
        return tls
    if profile == "strict" and mode != "none":
        raise config.error("tls", f"is needed for auth.mode {mode} in profile strict")
    return None


def server_policy(config: Fields) -> ServerPolicy:
    """What the server accepts in the Authorization header."""
    from ..sdk.auth import load_p256_public_key

    auth, mode, profile = _mode_profile(config)
    if mode == "bearer":
        return ServerPolicy(mode=mode, token=auth.string("token"))
    if mode not in JWT_MODES:
        return ServerPolicy(mode=mode)
    if profile == "strict":
        key_file = auth.path("publicKeyFile")
        try:
            key: Any = load_p256_public_key(key_file)
        except ValueError as exc:
            raise auth.error("publicKeyFile", str(exc)) from None
    else:
        key = auth.string("signingKey").encode("utf-8")
    return ServerPolicy(
        mode=mode,
        algorithm="ES256" if profile == "strict" else "HS256",
        key=key,
        issuer=auth.string("issuer"),
        audience=auth.string("audience"),
        purpose=auth.string("purpose") if "purpose" in auth.data else mode,
        clock=auth.optional_number("clock"),
    )


def client_auth(config: Fields) -> ClientAuth:
    auth, mode, profile = _mode_profile(config)
    if profile == "compat" and mode == "mtls":
        tls = _compat_mtls_files(auth)
    else:
        section = config.section("tls")
        tls = TlsFiles()
        if section is not None:
            tls = TlsFiles(
                ca_file=section.path("caFile"),
                cert_file=section.optional_path("certFile"),
                key_file=section.optional_path("keyFile"),
            )
        if mode == "mtls":
            if section is None:
                raise config.error("tls", "is needed for auth.mode mtls")
            for key, value in (("certFile", tls.cert_file), ("keyFile", tls.key_file)):
                if value is None:
                    raise section.error(key, "is needed for auth.mode mtls")
    credentials = ClientCredentials(mode=mode, tls=tls, https_only=profile == "strict")
    if mode == "bearer":
        credentials = ClientCredentials(mode=mode, token=auth.string("token"), tls=tls)
    elif mode == "workload":
        credentials = ClientCredentials(mode=mode, token=auth.string("assertion"), tls=tls)
    elif mode == "oauth":
        credentials = ClientCredentials(
            mode=mode,
            token_endpoint=auth.string("tokenEndpoint"),
            client_id=auth.string("clientId"),
            client_secret=auth.string("clientSecret"),
            audience=auth.string("audience"),
            https_only=profile == "strict",
            tls=tls,
        )
    return ClientAuth(mode=mode, profile=profile, credentials=credentials, tls=tls)


def server_ssl_context(settings: ServerSettings) -> ssl.SSLContext | None:
    """The listener's TLS context, or None for plain HTTP."""
    files = settings.auth.tls if settings.auth is not None else None
    if files is None:
        return None
    from ..sdk.tls import server_context

    try:
        return server_context(files)
    except (OSError, ssl.SSLError, ValueError) as exc:
        where = "auth" if settings.auth and settings.auth.profile == "compat" else "tls"
        raise ConfigError(settings.file, where, f"unusable certificate material: {exc}") from None


def client_ssl_context(settings: ClientSettings) -> ssl.SSLContext:
    from ..sdk.tls import client_context

    try:
        return client_context(settings.auth.tls)
    except (OSError, ssl.SSLError, ValueError) as exc:
        where = "auth" if settings.auth.profile == "compat" else "tls"
        raise ConfigError(settings.file, where, f"unusable certificate material: {exc}") from None


# The three configs ------------------------------------------------------------


@record
class ServerSettings:
    file: str
    transport: str
    readiness_file: str
    scenario_file: str
    scenarios: list[dict[str, Any]] = field(repr=False)
    receipt_log: str | None
    schema_dir: str | None
    auth: ServerAuth | None  # None over stdio (process trust)


@record
class ClientSettings:
    file: str
    transport: str
    scenarios: list[dict[str, Any]] = field(repr=False)
    report_file: str
    timeout: float  # seconds
    auth: ClientAuth
    endpoint: str | None = None
    server_command: list[str] = field(default_factory=list)
    server_cwd: str | None = None
    server_config: str | None = None
    schema_dir: str | None = None
    language: str = DEFAULT_LANGUAGE


@record
class ReplaySettings:
    file: str
    scenarios: list[dict[str, Any]] = field(repr=False)
    report_file: str
    schema_dir: str | None = None
    language: str = DEFAULT_LANGUAGE


def _language(config: Fields) -> str:
    return config.optional_string("language") or DEFAULT_LANGUAGE


def load_server(path: str) -> ServerSettings:
    config = load_fields(path)
    transport = config.choice("transport", TRANSPORTS)
    readiness = config.path("readinessFile")
    scenario_file = config.path("scenarioFile")
    scenarios = config.scenarios()
    receipt_log = config.optional_path("receiptLog")
    schema_dir = config.optional_path("schemaDir")
    if transport == "http":
        auth: ServerAuth | None = server_auth(config)
    else:
        _mode_profile(config)
        auth = None
    return ServerSettings(
        file=path,
        transport=transport,
        readiness_file=readiness,
        scenario_file=scenario_file,
        scenarios=scenarios,
        receipt_log=receipt_log,
        schema_dir=schema_dir,
        auth=auth,
    )


def load_client(path: str) -> ClientSettings:
    config = load_fields(path)
    transport = config.choice("transport", TRANSPORTS)
    scenarios = config.scenarios()
    report_file = config.path("reportFile")
    timeout_ms = config.positive_integer("timeoutMs")
    common: dict[str, Any] = {
        "file": path,
        "transport": transport,
        "scenarios": scenarios,
        "report_file": report_file,
        "timeout": timeout_ms / 1000.0,
        "schema_dir": config.optional_path("schemaDir"),
        "language": _language(config),
    }
    if transport == "http":
        endpoint = config.string("endpoint")
        from urllib.parse import urlsplit

        url = urlsplit(endpoint)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise config.error("endpoint", "must be an http(s) URL")
        return ClientSettings(auth=client_auth(config), endpoint=endpoint, **common)
    return ClientSettings(
        auth=client_auth(config),
        server_command=config.command("serverCommand"),
        server_cwd=config.path("serverCwd"),
        server_config=config.path("serverConfig"),
        **common,
    )


def load_replay(path: str) -> ReplaySettings:
    config = load_fields(path)
    return ReplaySettings(
        file=path,
        scenarios=config.scenarios(),
        report_file=config.path("reportFile"),
        schema_dir=config.optional_path("schemaDir"),
        language=_language(config),
    )


def schema_set(file: str, schema_dir: str | None) -> SchemaSet:
    """The canonical schemas: the config's ``schemaDir``, else ``$AHP_SCHEMA_DIR``,
    else the repository's ``schemas/draft``. Only a bad ``schemaDir`` is a config
    problem; the others raise ``SchemaError``."""
    from ..sdk import schemas

    if schema_dir is None:
        return schemas.load()
    try:
        return schemas.load(schema_dir)
    except schemas.SchemaError as exc:
        raise ConfigError(file, "schemaDir", str(exc)) from None


# Suites beyond the core (docs/LIFECYCLE.md) ----------------------------------


def suite_of(config: Fields) -> str:
    """The config's ``suite`` (a non-empty string; whether it is known is the
    caller's business)."""
    return config.string("suite")


@record
class SuiteSpec:
    """What the configs of one suite run by the lifecycle commands carry beyond
    the keys every such config has: the client's ``upload`` block, its
    ``contentSources`` and its ``backends`` [ext], and the server's
    ``uploadAuth``. A block the suite does not carry is never read (so it is
    never a config problem). Each suite module declares its own."""

    name: str
    upload: bool = False
    content_sources: bool = False
    backends: bool = False
    upload_auth: bool = False


def not_implemented(config: Fields, suite: str) -> ConfigError:
    """The config problem of a server asked for a suite it does not implement."""
    return config.error("suite", f"{suite!r} is not a suite this server implements")


@record
class SuiteServerSettings:
    """A lifecycle-style server: the core settings plus the suite and the
    accepted upload token (``""`` for a suite that receives no uploads and never
    reads ``uploadAuth``)."""

    suite: str
    server: ServerSettings
    upload_token: str = field(repr=False)


def load_suite_server(path: str, spec: SuiteSpec) -> SuiteServerSettings:
    """The server config of the suite ``spec`` (another ``suite`` is a config
    problem naming the field)."""
    config = load_fields(path)
    suite = suite_of(config)
    if suite != spec.name:
        raise not_implemented(config, suite)
    server = load_server(path)
    if not spec.upload_auth:
        return SuiteServerSettings(suite=suite, server=server, upload_token="")
    upload = config.section("uploadAuth", required=True)
    assert upload is not None
    return SuiteServerSettings(suite=suite, server=server, upload_token=upload.string("token"))


@record
class UploadSettings:
    """How a client uploads content: the environment variable holding the bearer
    token, the timeout, the size limit, and the endpoint (None: the server's)."""

    token_env: str
    timeout: float
    max_bytes: int
    endpoint: str | None = None


def upload_settings(section: Fields, default_endpoint: str | None = None) -> UploadSettings:
    auth = section.section("auth", required=True)
    assert auth is not None
    if auth.choice("type", ("bearer",)) != "bearer":  # pragma: no cover - choice() refuses
        raise auth.error("type", "must be bearer")
    max_bytes = section.data.get("maxBytes")
    if max_bytes is None or not codec.is_integer(max_bytes) or max_bytes < 0:
        raise section.error("maxBytes", "must be a non-negative integer")
    endpoint = section.optional_string("endpoint") or default_endpoint
    return UploadSettings(
        token_env=auth.string("tokenEnv"),
        timeout=section.positive_integer("timeoutMs") / 1000.0,
        max_bytes=int(max_bytes),
        endpoint=endpoint,
    )


@record
class ContentSource:
    """Bytes a message may refer to by the alias ``ref`` (uploaded when no step did)."""

    ref: str
    size: int
    sha256: str
    data: bytes = field(repr=False)


def _content_sources(config: Fields) -> list[ContentSource]:
    import base64
    import binascii

    value = config.data.get("contentSources", [])
    if not isinstance(value, list):
        raise config.error("contentSources", "must be an array")
    sources = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise config.error(f"contentSources[{index}]", "must be an object")
        entry = Fields(item, config.file, f"contentSources[{index}].")
        descriptor = entry.section("descriptor", required=True)
        assert descriptor is not None
        size = descriptor.data.get("size")
        if size is None or not codec.is_integer(size) or size < 0:
            raise descriptor.error("size", "must be a non-negative integer")
        encoded = item.get("bytes")
        if not isinstance(encoded, str):
            raise entry.error("bytes", "must be a base64 string")
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise entry.error("bytes", "is not base64") from None
        sources.append(
            ContentSource(descriptor.string("ref"), int(size), descriptor.string("sha256"), data)
        )
    return sources


UNREACHABLE = "unreachable"  # the one backend name not served by the run's server


@record
class BackendSettings:
    """Where a chain subscription's ``backend`` is, when not the run's server
    (``backends`` [ext]): an HTTP ``endpoint``, or a stdio ``command`` (run in
    ``serverCwd``). Either may be absent; a call needing the missing one fails."""

    endpoint: str | None = None
    command: list[str] = field(default_factory=list)


def _backends(config: Fields) -> dict[str, BackendSettings]:
    """``backends`` (optional): only ``unreachable`` is read; other names are
    unknown keys (ignored, like every key this adapter does not know)."""
    section = config.section("backends")
    if section is None:
        return {}
    entry = section.section(UNREACHABLE)
    if entry is None:
        return {}
    endpoint = _http_url(entry, "endpoint") if entry.has("endpoint") else None
    command = entry.command("command") if entry.has("command") else []
    return {UNREACHABLE: BackendSettings(endpoint=endpoint, command=command)}


@record
class SuiteClientSettings:
    file: str
    suite: str
    transport: str
    scenarios: list[dict[str, Any]] = field(repr=False)
    report_file: str
    language: str
    timeout: float = 10.0
    auth: ClientAuth | None = None
    child_pid_file: str | None = None
    upload: UploadSettings | None = None
    content_sources: list[ContentSource] = field(default_factory=list, repr=False)
    endpoint: str | None = None
    control_endpoint: str | None = None
    server_command: list[str] = field(default_factory=list)
    server_cwd: str | None = None
    server_config: str | None = None
    schema_dir: str | None = None
    backends: dict[str, BackendSettings] = field(default_factory=dict)

    def client_settings(self) -> ClientSettings:
        """The core view of these settings (for the peer and TLS helpers)."""
        assert self.auth is not None
        return ClientSettings(
            file=self.file,
            transport=self.transport,
            scenarios=self.scenarios,
            report_file=self.report_file,
            timeout=self.timeout,
            auth=self.auth,
            endpoint=self.endpoint,
            server_command=self.server_command,
            server_cwd=self.server_cwd,
            server_config=self.server_config,
            schema_dir=self.schema_dir,
            language=self.language,
        )


def _http_url(config: Fields, key: str) -> str:
    from urllib.parse import urlsplit

    value = config.string(key)
    url = urlsplit(value)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise config.error(key, "must be an http(s) URL")
    return value


def load_suite_client(path: str, spec: SuiteSpec | None) -> SuiteClientSettings:
    """A lifecycle-style client config of the suite ``spec``. With None (a
    ``suite`` this client does not implement, which is not a config problem)
    only what the report needs is read (the caller reports every row
    unsupported); the blocks read are the ones ``spec`` says its configs carry,
    in the order ``upload``, ``contentSources``, ``backends``."""
    config = load_fields(path)
    suite = suite_of(config)
    if spec is not None and suite != spec.name:
        raise config.error("suite", f"{suite!r} is not the {spec.name} suite")
    common: dict[str, Any] = {
        "file": path,
        "suite": suite,
        "transport": config.choice("transport", TRANSPORTS),
        "scenarios": config.scenarios(),
        "report_file": config.path("reportFile"),
        "language": _language(config),
    }
    if spec is None:
        return SuiteClientSettings(**common)
    common.update(
        timeout=config.positive_integer("timeoutMs") / 1000.0,
        auth=client_auth(config),
        child_pid_file=config.path("childPidFile"),
        schema_dir=config.optional_path("schemaDir"),
    )
    if spec.upload:
        upload = config.section("upload", required=True)
        assert upload is not None
        common.update(upload=upload_settings(upload))
    if spec.content_sources:
        common.update(content_sources=_content_sources(config))
    if spec.backends:
        common.update(backends=_backends(config))
    if common["transport"] == "http":
        return SuiteClientSettings(
            endpoint=_http_url(config, "endpoint"),
            control_endpoint=_http_url(config, "controlEndpoint"),
            **common,
        )
    return SuiteClientSettings(
        server_command=config.command("serverCommand"),
        server_cwd=config.path("serverCwd"),
        server_config=config.path("serverConfig"),
        **common,
    )
