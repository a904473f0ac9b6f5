"""The isolation suite end to end with real processes, sockets and pipes.

The real Python and TypeScript adapters pass every case (auth none, bearer and
mtls over HTTP, none over stdio). Each leak of tests/fakes/isolation_client.py
(our Python client with its upload sender patched) fails exactly the rows where
that leak applies, naming its class, and every other row passes; no secret of
the run reaches the report or the logs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from interop.cli import main
from tests.conftest import named

FAKE = Path(__file__).parent / "fakes" / "isolation_client.py"
ADAPTER_PYTHON = Path(__file__).resolve().parents[1] / "adapters" / "python" / ".venv" / "bin"
GRID = ["--auth", "none", "bearer", "mtls", "--transports", "http", "stdio"]
PLAIN, TLS, COOKIE, REDIRECT = (
    "iso-capture-plain",
    "iso-capture-tls-client-certificate",
    "iso-capture-after-event-cookie",
    "iso-capture-redirect",
)
ALL = (PLAIN, TLS, COOKIE, REDIRECT)


def _run(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any], Path]:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--suite", "isolation", "--output", str(output), "--quiet"]
    code = main([*base, *GRID, "--jobs", "2", *argv])
    return code, json.loads(output.read_text()), output


def _rows(combination: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for block in combination["results"].values() for row in block["rows"]}


def test_the_real_adapters_pass_every_case(tmp_path: Path) -> None:
    code, report, _ = _run(tmp_path, "--adapters", "python", "typescript", "--full-report")
    assert code == 0, report["summary"]
    ran = [c for c in report["combinations"] if c["status"] != "inapplicable"]
    assert len(ran) == 16  # 2 clients x 2 servers x (3 HTTP modes + stdio none)
    for combination in ran:
        assert combination["status"] == "passed", combination
        rows = _rows(combination)
        expected = set(ALL) - ({COOKIE} if combination["transport"] == "stdio" else set())
        passed = {i for i, r in rows.items() if r["status"] == "passed"}
        assert passed == expected
        for row_id in passed:
            diagnostics = rows[row_id]["diagnostics"]
            assert diagnostics["independentUploads"] == 1
            assert diagnostics["credentialIsolationVerified"] is True
            assert diagnostics["captures"][0]["sensitive"] == {}
            assert diagnostics["captures"][0]["clientCertificate"] is None
        if combination["transport"] == "stdio":
            assert rows[COOKIE]["status"] == "inapplicable"
            assert "cookie" in rows[COOKIE]["error"]


# Which rows each leak must fail, per (transport, auth), and the class it names.
def _bearer(transport: str, auth: str) -> set[str]:
    return set(ALL) if auth == "bearer" else set()


def _no_upload(transport: str, auth: str) -> set[str]:
    return set(ALL) - ({COOKIE} if transport == "stdio" else set())


def _redirect(transport: str, auth: str) -> set[str]:
    return {REDIRECT}


def _certificate(transport: str, auth: str) -> set[str]:
    return {TLS} if auth == "mtls" else set()


def _cookie(transport: str, auth: str) -> set[str]:
    return {COOKIE} if transport == "http" else set()


LEAKS = {
    "event-bearer": (_bearer, "CaptureLeak", "the event's bearer token"),
    "no-upload": (_no_upload, "CaptureMissing", "a missing upload is never isolation"),
    "follow-redirect": (_redirect, "RedirectFollowed", "the redirect target received"),
    "event-certificate": (_certificate, "CaptureLeak", "the event's client certificate"),
    "cookie-jar": (_cookie, "CaptureLeak", "the event server's cookie"),
}


def _fake(root: Path, leak: str) -> Path:
    directory = root / leak
    directory.mkdir(parents=True)
    python = str(ADAPTER_PYTHON / "python")
    role = [python, str(FAKE)]
    manifest = {
        "language": "python",
        "client": [sys.executable, "-c", "pass"],
        "server": [sys.executable, "-c", "pass"],
        "lifecycleClient": [*role, "client", "--leak", leak],
        "lifecycleServer": [*role, "server"],
        "extensions": {"blind": True, "profiles": ["strict", "compat"]},
    }
    (directory / "adapter.json").write_text(json.dumps(manifest))
    return directory


def test_each_leak_fails_exactly_its_rows_naming_its_class(tmp_path: Path) -> None:
    dirs = [_fake(tmp_path / "adapters", leak) for leak in LEAKS]
    argv = ["--adapters-root", str(tmp_path / "no-builtin-adapters")]
    for directory in dirs:
        argv += ["--adapter-dir", named(directory)]
    code, report, output = _run(tmp_path, *argv, "--servers", "event-bearer")
    assert code == 1
    ran = [c for c in report["combinations"] if c["status"] != "inapplicable"]
    assert len(ran) == len(LEAKS) * 4
    for combination in ran:
        leak, transport, auth = combination["client"], combination["transport"], combination["auth"]
        where, error_class, words = LEAKS[leak]
        assert combination["errors"] == [], combination["errors"]
        rows = _rows(combination)
        failed = {i for i, r in rows.items() if r["status"] == "failed"}
        assert failed == where(transport, auth), (leak, transport, auth, failed)
        for row_id in failed:
            error = rows[row_id]["error"]
            assert error.startswith(f"{error_class}:") and words in error, (leak, error)
            assert rows[row_id]["diagnostics"]["credentialIsolationVerified"] is False
    # the run's secrets (bearer token, upload token, cookie, keys) are in no file written
    written = [output, *output.parent.glob("report.*"), *output.parent.rglob("*.log")]
    text = "\n".join(p.read_text(errors="replace") for p in written if p.is_file())
    assert "ahp-bearer-" not in text
    assert re.search(r"ahp-isolation=(?!\[REDACTED\])", text) is None
    assert re.search(r"Bearer (?!\[REDACTED\])[A-Za-z0-9_-]{16,}", text) is None


def test_ctrl_c_in_an_isolation_run_kills_every_process(tmp_path: Path) -> None:
    """Both transports, each client hung in its first upload: SIGINT ends the run, every
    process (event servers, clients, the stdio server a client spawned) and the run's
    temporary directory go, and the report is marked incomplete."""
    import os
    import signal
    import subprocess

    from interop import ROOT
    from tests.test_interrupt import _processes_mentioning, wait_for_files

    adapter = _fake(tmp_path / "adapters", "hang")
    signals = tmp_path / "signals"
    signals.mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "ISOLATION_SIGNAL_DIR": str(signals), "TMPDIR": str(temp)}
    argv = ["matrix", "--suite", "isolation", "--quiet", "--auth", "none"]
    argv += ["--adapters-root", str(tmp_path / "none"), "--adapter-dir", named(adapter)]
    argv += ["--output", str(tmp_path / "out" / "report.json")]
    harness = subprocess.Popen(
        [sys.executable, "-m", "interop", *argv],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_files(signals, 2, 60)
        assert len(_processes_mentioning(str(temp))) >= 3, "servers and clients should be running"
        harness.send_signal(signal.SIGINT)
        _, stderr = harness.communicate(timeout=30)
    finally:
        if harness.poll() is None:
            harness.kill()
    assert harness.returncode == 130, stderr
    assert not _processes_mentioning(str(temp))
    assert not list(temp.iterdir()), "the run's temp and trust directories must be gone"
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["incomplete"] is True
    assert report["summary"]["combinations"]["not-run"] == 2
