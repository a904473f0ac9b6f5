"""Coverage charges only the guilty side, on the evidence of a recheck's capture
(docs/blame.md): real processes, our Python adapter as the honest peer, a fake
(tests/fakes/fake_adapter.py) as the wrong one.

- A client that merges deeply: charged the edit rule it broke; the server keeps
  its pass.
- A server that answers another response than its script: the honest client
  derives something else, the recheck's capture shows the altered answer, and the
  server is charged (a contract failure: no protocol requirement states "answer
  your script"); the client keeps its pass.
- A server that refuses one auth mode: the honest client cannot deliver, the
  capture shows the run's valid credential refused, and the server is charged the
  authentication requirement; the client keeps its pass.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from interop.blame import EDITS
from interop.cli import main
from tests.conftest import named


def _run(
    tmp_path: Path, clients: list[str], servers: list[str], dirs: list[Path], scenarios: Path,
    *extra: str,
) -> dict[str, Any]:  # fmt: skip
    output = tmp_path / "out" / "report.json"
    argv = ["matrix", "--suite", "core", "--scenarios", str(scenarios), "--output", str(output)]
    argv += ["--quiet", "--transports", "http", "--clients", *clients, "--servers", *servers]
    for directory in dirs:
        argv += ["--adapter-dir", named(directory)]
    assert main([*argv, *extra]) == 1
    report: dict[str, Any] = json.loads(output.read_text())
    return report


def _failed(report: dict[str, Any], adapter: str, role: str) -> list[str]:
    judged = report["coverage"]["byAdapter"][adapter][role]["requirements"]
    return sorted(r for r, v in judged.items() if v == "failed")


def test_a_client_that_merges_deeply_is_charged_the_edit_rule_and_its_server_keeps_its_pass(
    tmp_path: Path,
    fake_adapter: Callable[..., Path],
    small_set: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    deep = fake_adapter("deep", client="deep-merge")
    report = _run(tmp_path, ["deep"], ["python"], [deep], small_set, "--auth", "none")
    printed = capsys.readouterr().err  # the terminal names the rule and whom it charged
    assert "  rule ClientResult judges the client (deep): AHP-EDIT-001" in printed, printed
    failed = _failed(report, "deep", "client")
    assert "AHP-EDIT-001" in failed and set(failed) <= set(EDITS), failed
    assert _failed(report, "python", "server") == []
    assert report["coverage"]["byAdapter"]["python"]["server"]["contractFailures"] == 0
    (charge,) = report["coverage"]["charges"]
    assert (charge["rule"], charge["judges"], charge["adapters"]) == (
        "ClientResult",
        "client",
        ["deep"],
    )
    assert charge["row"] == "modify-merge-shallow-null-literal"


def test_a_server_that_alters_its_answer_is_charged_and_the_honest_client_keeps_its_pass(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    altering = fake_adapter("altering", server="alter-first")
    report = _run(tmp_path, ["python"], ["altering"], [altering], small_set, "--auth", "none")
    rows = [
        r
        for c in report["combinations"]
        for block in c["results"].values()
        for r in block["rows"]
        if r["status"] == "failed"
    ]
    assert len(rows) == 1, rows
    assert rows[0]["diagnostics"]["classes"] == ["ServerAltered"]  # the recheck's capture
    assert (
        rows[0]["diagnostics"]["capture"]
        == "report-logs/python--altering--http--none/capture-small.json"
    )
    assert _failed(report, "python", "client") == []
    byadapter = report["coverage"]["byAdapter"]
    assert byadapter["python"]["client"]["contractFailures"] == 0
    assert byadapter["altering"]["server"]["contractFailures"] == 1
    (charge,) = report["coverage"]["charges"]
    assert (charge["rule"], charge["adapters"]) == ("ServerAltered", ["altering"])
    capture = report_logs(tmp_path) / "python--altering--http--none" / "capture-small.json"
    frames = json.loads(capture.read_text())
    assert frames and all("answer" in f and "request" in f for f in frames)


def test_a_server_that_refuses_an_auth_mode_is_charged_authentication_not_the_client(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    # compat: bearer over plain HTTP, as the fake serves no TLS
    refusing = fake_adapter("refusing", server="refuse-auth", profiles=["strict", "compat"])
    argv = ("--auth", "bearer", "--profile", "compat")
    report = _run(tmp_path, ["python"], ["refusing"], [refusing], small_set, *argv)
    assert _failed(report, "python", "client") == []
    failed = _failed(report, "refusing", "server")
    assert failed == ["AHP-AUTH-001"], failed
    rules = {c["rule"] for c in report["coverage"]["charges"]}
    assert rules == {"ServerRefusedCredential"}
    paths = list((report_logs(tmp_path) / "python--refusing--http--bearer").glob("capture-*.json"))
    assert paths
    for path in paths:  # the evidence names the credential's verdict, never the secret
        frames = json.loads(path.read_text())
        headers = [h for f in frames for h in f["request"]["headers"]]
        assert ["Authorization", "<the run's credential>"] in headers


def report_logs(tmp_path: Path) -> Path:
    return tmp_path / "out" / "report-logs"


def test_a_failed_row_gets_a_bundle_that_reruns_from_a_fresh_shell_and_replays_to_a_client(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    """The deep-merging client's failed row: its bundle's `rerun.sh` reproduces the
    failure from a shell with nothing set, into the bundle, leaving the full run's
    report as it was; `repro --client python` replays the captured answer to our
    Python client, which derives the expected outcome from those bytes (and the
    bundle's own client does not)."""
    deep = fake_adapter("deep", client="deep-merge")
    report = _run(tmp_path, ["deep"], ["python"], [deep], small_set, "--auth", "none")
    (row,) = [
        r
        for c in report["combinations"]
        for block in c["results"].values()
        for r in block["rows"]
        if r["status"] == "failed"
    ]
    bundle = tmp_path / "out" / row["diagnostics"]["bundle"]
    assert {"row.json", "rerun.sh", "capture.json", "logs"} <= {p.name for p in bundle.iterdir()}
    recorded = json.loads((bundle / "row.json").read_text())
    assert recorded["scenario"]["id"] == row["id"]
    assert [c["rule"] for c in recorded["charges"]] == ["ClientResult"]
    main_report = (tmp_path / "out" / "report.json").read_bytes()
    fresh = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        ["sh", str(bundle / "rerun.sh")], env=fresh, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr[-2000:]
    again = json.loads((bundle / "rerun" / "report.json").read_text())
    ((combination, rerun_row),) = [
        (c, r)
        for c in again["combinations"]
        for block in c["results"].values()
        for r in block["rows"]
    ]
    assert (combination["client"], combination["server"]) == ("deep", "python")
    assert (rerun_row["id"], rerun_row["status"]) == (row["id"], "failed")
    assert (tmp_path / "out" / "report.json").read_bytes() == main_report
    assert main(["repro", str(bundle), "--client", "python"]) == 0
    assert main(["repro", str(bundle)]) == 1
