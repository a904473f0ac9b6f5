"""Every lifecycle verification rule, broken by a real adapter process, fails with its class.

tests/fakes/lifecycle_breaker.py runs our Python adapter behind a control
proxy that plants one break per targeted upstream scenario; each targeted row
must fail naming its rule, every other row must pass, and a break only a
receiver probe can see fails that probe.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.cli import main
from tests.conftest import named
from tests.fakes.lifecycle_breaker import BREAKS, OWN_BREAKS, REPORT_BREAKS

BREAKER = Path(__file__).parent / "fakes" / "lifecycle_breaker.py"
UPSTREAM = ROOT / "scenarios" / "upstream" / "lifecycle-scenarios.json"
OURS = ROOT / "scenarios" / "lifecycle.json"


def _adapter(root: Path, name: str, server: list[str], client: list[str]) -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    command = [sys.executable, str(BREAKER)]
    manifest = {
        "language": "python",
        "client": [*command, "core", "client"],
        "server": [*command, "core", "server"],
        "lifecycleServer": [*command, "server", *server],
        "lifecycleClient": [*command, "client", *client],
        "extensions": {"blind": True, "profiles": ["strict", "compat"]},
    }
    (directory / "adapter.json").write_text(json.dumps(manifest))
    return directory


def _matrix(tmp_path: Path, dirs: list[Path], *argv: str) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--suite", "lifecycle", "--output", str(output), "--quiet"]
    base += ["--auth", "none", "--adapters-root", str(tmp_path / "no-builtin-adapters")]
    for directory in dirs:
        base += ["--adapter-dir", named(directory)]
    code = main([*base, *argv])
    return code, json.loads(output.read_text())


def _failed(combination: dict[str, Any]) -> dict[str, str]:
    return {
        row["id"]: row["error"]
        for block in combination["results"].values()
        for row in block["rows"]
        if row["status"] == "failed"
    }


def test_each_planted_break_fails_its_row_with_its_class(tmp_path: Path) -> None:
    breaker = _adapter(tmp_path, "breaker", ["--break", ",".join(BREAKS)], [])
    code, report = _matrix(
        tmp_path, [breaker], "--scenarios", str(UPSTREAM), "--transports", "http", "stdio"
    )
    assert code == 1
    for combination in report["combinations"]:
        transport = combination["transport"]
        assert combination["errors"] == []
        failed = _failed(combination)
        runs_here = {
            s["id"]
            for s in json.loads(UPSTREAM.read_text())["scenarios"]
            if transport in s.get("transports", ["http", "stdio"])
        }
        wanted = {sid: cls for cls, sid, _ in BREAKS.values() if sid in runs_here}
        assert sorted(failed) == sorted(wanted), (transport, failed)
        for sid, error_class in wanted.items():
            assert error_class in failed[sid], (transport, sid, failed[sid])
        probes = combination["results"].get("receiver-probes", {}).get("rows", [])
        assert all(r["status"] in ("not-run", "inapplicable") for r in probes)


def test_the_breaks_of_our_operational_failure_rules_fail_their_rows(tmp_path: Path) -> None:
    # [ext]: a reply to a scripted timeout, a receipt for the unreachable backend
    breaker = _adapter(tmp_path, "own-breaker", ["--break", ",".join(OWN_BREAKS)], [])
    code, report = _matrix(
        tmp_path, [breaker], "--scenarios", str(OURS), "--transports", "http", "stdio"
    )
    assert code == 1
    wanted = {BREAKS[name][1]: BREAKS[name][0] for name in OWN_BREAKS}
    for combination in report["combinations"]:
        assert combination["errors"] == []
        failed = _failed(combination)
        assert sorted(failed) == sorted(wanted), (combination["transport"], failed)
        for sid, error_class in wanted.items():
            assert error_class in failed[sid], (combination["transport"], sid, failed[sid])


def test_a_receiver_only_a_probe_sees_fails_that_probe(tmp_path: Path) -> None:
    breaker = _adapter(tmp_path, "probe-breaker", ["--break", "probe"], [])
    code, report = _matrix(
        tmp_path, [breaker], "--scenarios", str(UPSTREAM), "--transports", "http"
    )
    assert code == 1
    failed = _failed(report["combinations"][0])
    wanted = [
        "upload-with-two-authorization-headers-400",
        "upload-content-encoded-400",
        "upload-over-the-limit-413",
    ]
    assert sorted(failed) == sorted(wanted), failed
    assert all(failed[name].startswith("ProbeFailed") for name in wanted), failed


@pytest.mark.parametrize("name", sorted(REPORT_BREAKS))
def test_a_broken_report_is_named(tmp_path: Path, name: str) -> None:
    subset = json.loads(UPSTREAM.read_text())
    keep = ("cancel-before-reply", "duplicate-reply-ignored", "observation-chain-deny")
    subset["scenarios"] = [s for s in subset["scenarios"] if s["id"] in keep]
    path = tmp_path / "subset.json"
    path.write_text(json.dumps(subset))
    breaker = _adapter(tmp_path, "report-breaker", [], ["--break-report", name])
    code, report = _matrix(tmp_path, [breaker], "--scenarios", str(path), "--transports", "http")
    assert code == 1
    combination = report["combinations"][0]
    classes = {e["class"] for e in combination["errors"]} | {
        c for error in _failed(combination).values() for c in [error.split(":")[0]]
    }
    assert REPORT_BREAKS[name] in classes, (classes, combination["errors"])
