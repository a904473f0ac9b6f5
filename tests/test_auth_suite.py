"""The auth suite: its verdicts, its wire probe against real TLS stacks, and real adapters.

- a bare EOF or reset is never a refusal; an alert or an allowed status is;
- the probe names the alert a TLS 1.3 server sends after the client's handshake;
- the real Python adapter passes its bearer and mTLS rows; a server that
  accepts a token in the query string fails exactly those rows.
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from interop.cli import main
from interop.redact import Redactor
from interop.results import Status
from interop.runtime.probe import Observation, TlsOptions, observe
from interop.suites.auth.cases import CASES, Material, applicable
from interop.suites.auth.verify import judge_negative
from interop.trust import Trust
from tests.conftest import named

FORGER = Path(__file__).parent / "fakes" / "auth_forger.py"


def _case(name: str) -> Any:
    return next(c for c in CASES if c.name == name)


@pytest.mark.parametrize(
    ("seen", "status"),
    [
        (Observation("http", "HTTP 401", status=401), Status.PASSED),
        (Observation("http", "HTTP 200", status=200), Status.FAILED),
        (Observation("http", "HTTP 500", status=500), Status.FAILED),
        (Observation("eof", "EOF before an answer"), Status.FAILED),
        (Observation("reset", "connection reset"), Status.FAILED),
        (
            Observation("tls-alert", "TLS X", alert="TLSV13_ALERT_CERTIFICATE_REQUIRED"),
            Status.PASSED,
        ),
        (Observation("tls-alert", "TLS X", alert="SSLV3_ALERT_ILLEGAL_PARAMETER"), Status.FAILED),
    ],
)
def test_only_a_named_refusal_passes_a_negative(seen: Observation, status: Status) -> None:
    row = judge_negative("r", _case("no-client-certificate-tls1.3"), seen, True, False)
    assert row.status == status, row.error


def test_a_refusal_that_left_a_receipt_or_a_dead_server_fails() -> None:
    refused = Observation("http", "HTTP 401", status=401)
    case = _case("wrong-token")
    assert judge_negative("r", case, refused, True, True).error.startswith("ReceiptChanged")
    assert judge_negative("r", case, refused, False, False).error.startswith("ServerUnhealthy")
    accepted = Observation("http", "HTTP 200", status=200)
    assert judge_negative("r", case, accepted, True, False).error.startswith("AuthAccepted")


def test_the_table_has_over_150_rows_per_server_language() -> None:
    count = sum(
        len(applicable(mode, profile, mode == "mtls" or (profile == "strict" and mode != "none")))
        for mode in ("none", "bearer", "oauth", "workload", "mtls")
        for profile in ("strict", "compat")
    )
    assert count * 2 >= 150  # two routes per case


@pytest.fixture(scope="module")
def trust(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trust]:
    made = Trust.create(Redactor(), tmp_path_factory.mktemp("trust"))
    yield made
    made.destroy()


@contextmanager
def _tls_server(trust: Trust, version: ssl.TLSVersion) -> Iterator[int]:
    """A real TLS server that requires a client certificate of the run's CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(trust.path("server.pem"), trust.path("server-key.pem"))
    context.load_verify_locations(trust.path("ca.pem"))
    context.verify_mode = ssl.CERT_REQUIRED
    context.minimum_version = context.maximum_version = version
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(raw, server_side=True) as sock:
                    sock.recv(65536)
                    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            except (ssl.SSLError, OSError):
                raw.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_2])
def test_the_probe_names_the_alert_of_a_refused_client_certificate(
    trust: Trust, version: ssl.TLSVersion
) -> None:
    pinned = "1.3" if version == ssl.TLSVersion.TLSv1_3 else "1.2"
    with _tls_server(trust, version) as port:
        url = f"https://127.0.0.1:{port}/intercept"
        refused = observe(
            url,
            method="POST",
            path="/intercept",
            headers=[],
            body=b"{}",
            tls=TlsOptions(trust.path("ca.pem"), version=pinned),
        )
        assert refused.kind == "tls-alert", refused
        untrusted = observe(
            url,
            method="POST",
            path="/intercept",
            headers=[],
            body=b"{}",
            tls=TlsOptions(
                trust.path("ca.pem"),
                trust.path("untrusted-client.pem"),
                trust.path("untrusted-client-key.pem"),
                pinned,
            ),
        )
        assert untrusted.kind == "tls-alert", untrusted
        honest = observe(
            url,
            method="POST",
            path="/intercept",
            headers=[],
            body=b"{}",
            tls=TlsOptions(
                trust.path("ca.pem"), trust.path("client.pem"), trust.path("client-key.pem"), pinned
            ),
        )
        assert (honest.kind, honest.status) == ("http", 200), honest


def test_a_silent_close_is_observed_as_eof() -> None:
    listener = socket.create_server(("127.0.0.1", 0))

    def close_at_once() -> None:
        raw, _ = listener.accept()
        raw.recv(65536)
        raw.close()

    threading.Thread(target=close_at_once, daemon=True).start()
    port = listener.getsockname()[1]
    seen = observe(f"http://127.0.0.1:{port}/x", method="POST", path="/x", headers=[], body=b"{}")
    listener.close()
    assert seen.kind in ("eof", "reset"), seen


def test_material_builds_tokens_the_profile_verifies(trust: Trust) -> None:
    for profile in ("strict", "compat"):
        material = Material(trust, "oauth", profile)
        built = _case("jwt-wrong-issuer").build(material)
        token = built.headers[0][1].removeprefix("Bearer ")
        assert token.count(".") == 2 and token != material.token()


def _adapter(root: Path) -> Path:
    directory = root / "forger"
    directory.mkdir()
    command = [sys.executable, str(FORGER)]
    manifest = {
        "language": "python",
        "client": [*command, "client"],
        "server": [*command, "server"],
        "extensions": {"blind": True, "receiptLog": False, "profiles": ["strict", "compat"]},
    }
    (directory / "adapter.json").write_text(json.dumps(manifest))
    return directory


def _failed(report: dict[str, Any]) -> dict[str, str]:
    return {
        row["id"]: row["error"]
        for combination in report["combinations"]
        for block in combination["results"].values()
        for row in block["rows"]
        if row["status"] == "failed"
    }


def test_the_real_adapter_passes_and_a_server_taking_query_tokens_fails_those_rows(
    tmp_path: Path,
) -> None:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--suite", "auth", "--output", str(output), "--quiet", "--jobs", "2"]
    code = main([*base, "--adapters", "python", "--auth", "bearer", "mtls"])
    honest = json.loads(output.read_text())
    assert code == 0, _failed(honest)
    assert honest["summary"]["rows"]["passed"] >= 60
    forged_out = tmp_path / "forged" / "report.json"
    code = main(
        [
            *("matrix", "--suite", "auth", "--output", str(forged_out), "--quiet"),
            *("--auth", "bearer", "--adapters-root", str(tmp_path / "none")),
            *("--adapter-dir", named(_adapter(tmp_path))),
        ]
    )
    assert code == 1
    failed = _failed(json.loads(forged_out.read_text()))
    wanted = {
        "compat/token-in-the-query-string@intercept",
        "compat/token-in-the-query-string@capabilities",
    }
    assert set(failed) == wanted, failed
    assert all(error.startswith("AuthAccepted") for error in failed.values()), failed
