"""Ctrl-C in the middle of a run: every adapter process and the trust directory go."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from interop import ROOT
from interop.runtime.process import wait_for_file
from tests.conftest import matrix_argv, named


def _processes_mentioning(text: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            mentions = any(text in part for part in process.info["cmdline"] or [])
            if mentions and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


def test_ctrl_c_kills_everything_and_removes_trust(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    adapter = fake_adapter("fake", client="hang")
    signals = tmp_path / "signals"
    signals.mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "FAKE_SIGNAL_DIR": str(signals), "TMPDIR": str(temp)}
    harness = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "interop",
            *matrix_argv([adapter], small_set, tmp_path / "out" / "report.json"),
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Two jobs (http and stdio) each hang in their client; wait for both.
        wait_for_files(signals, 2, 30)
        assert _processes_mentioning(str(temp)), "the hanging clients should be running"
        harness.send_signal(signal.SIGINT)
        _, stderr = harness.communicate(timeout=30)
    finally:
        if harness.poll() is None:
            harness.kill()
    assert harness.returncode == 130, stderr
    assert "interrupted" in stderr
    assert not _processes_mentioning(str(temp))
    assert not list(temp.iterdir()), "the run's temp and trust directories must be gone"
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["incomplete"] is True
    assert report["summary"]["combinations"]["not-run"] == 2
    assert all("interrupted" in c["reason"] for c in report["combinations"])


def wait_for_files(directory: Path, count: int, timeout: float) -> None:
    """Block until `directory` holds `count` files (woken by inotify, not by sleeps)."""

    deadline = time.monotonic() + timeout
    while len(list(directory.iterdir())) < count:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"only {sorted(directory.iterdir())} appeared in time"
        with contextlib.suppress(TimeoutError):
            wait_for_file(directory / ".never", min(remaining, 1.0))


def _stuck_lifecycle() -> dict[str, Any]:
    upstream = json.loads(
        (ROOT / "scenarios" / "upstream" / "lifecycle-scenarios.json").read_text()
    )
    stuck = next(s for s in upstream["scenarios"] if s["id"] == "cancel-before-reply")
    stuck["steps"] = [*stuck["steps"][:1], {"op": "wait", "key": "a", "count": 2}]
    return {"version": 1, "scenarios": [stuck]}


def _stuck_catalogue() -> dict[str, Any]:
    # a notification of another method is never recorded: the client's
    # /wait-observed for it blocks (up to the server's 30 s bound)
    upstream = json.loads(
        (ROOT / "scenarios" / "upstream" / "catalogue-scenarios.json").read_text()
    )
    stuck = next(s for s in upstream["scenarios"] if s["id"] == "typed-model-error-required")
    stuck["steps"][0]["message"]["method"] = "hooks/unknown"
    stuck["expected"]["sent"] = [stuck["steps"][0]["message"]]
    return {"version": 1, "suite": "catalogue", "scenarios": [stuck]}


@pytest.mark.parametrize(
    ("suite", "stuck"), [("lifecycle", _stuck_lifecycle), ("catalogue", _stuck_catalogue)]
)
def test_ctrl_c_in_a_suite_run_kills_every_process(
    tmp_path: Path, suite: str, stuck: Callable[[], dict[str, Any]]
) -> None:
    """Both transports: the harness's HTTP server, the client and the stdio server it spawned."""
    breaker = ROOT / "tests" / "fakes" / "lifecycle_breaker.py"
    adapter = tmp_path / "adapters" / "breaker"
    adapter.mkdir(parents=True)
    command = [sys.executable, str(breaker)]
    manifest = {
        "language": "python",
        "client": [*command, "core", "client"],
        "server": [*command, "core", "server"],
        "lifecycleClient": [*command, "client"],
        "lifecycleServer": [*command, "server"],
        "extensions": {"blind": True, "profiles": ["strict"]},
    }
    (adapter / "adapter.json").write_text(json.dumps(manifest))
    scenarios = tmp_path / "stuck.json"
    scenarios.write_text(json.dumps(stuck()))
    signals = tmp_path / "signals"
    signals.mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "BREAKER_SIGNAL_DIR": str(signals), "TMPDIR": str(temp)}
    argv = ["matrix", "--suite", suite, "--scenarios", str(scenarios), "--quiet"]
    argv += ["--auth", "none", "--adapters-root", str(tmp_path / "none")]
    argv += ["--adapter-dir", named(adapter), "--output", str(tmp_path / "out" / "report.json")]
    harness = subprocess.Popen(
        [sys.executable, "-m", "interop", *argv],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_files(signals, 2, 60)
        time.sleep(0.5)  # not for correctness: lets the clients reach their blocking wait
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
