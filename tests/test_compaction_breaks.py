"""The compaction suite end to end with a host that ignores fail-closed, and an altered row.

tests/fakes/compaction_host.py runs our Python adapter and reports every run a
fail-closed before failure stopped as compacted: exactly those rows fail,
naming `CompactionResult`, on HTTP and stdio. A copy of our set with one
expectation altered fails exactly that row.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.cli import main
from tests.conftest import named

HOST = Path(__file__).parent / "fakes" / "compaction_host.py"
OURS = ROOT / "scenarios" / "compaction.json"
FAIL_CLOSED_BEFORE = {  # written from the rows: a fail-closed before failure, nothing compacted
    "cmp-before-fail-closed-nothing-compacted",
    "cmp-before-summary-edit-fail-closed",
    "cmp-server-error-after-return-fail-closed",
    "cmp-malformed-fail-closed",
    "cmp-ask-unadvertised-fail-closed",
}


def _matrix(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--suite", "compaction", "--output", str(output), "--quiet"]
    code = main([*base, "--auth", "none", "--transports", "http", "stdio", "--jobs", "2", *argv])
    return code, json.loads(output.read_text())


def _failed(combination: dict[str, Any]) -> dict[str, str]:
    return {
        row["id"]: row["error"]
        for block in combination["results"].values()
        for row in block["rows"]
        if row["status"] == "failed"
    }


def test_a_host_publishing_after_a_fail_closed_failure_fails_those_rows(tmp_path: Path) -> None:
    directory = tmp_path / "host"
    directory.mkdir()
    command = [sys.executable, str(HOST)]
    manifest = {
        "language": "python",
        "client": [*command, "client"],
        "server": [*command, "server"],
        "lifecycleClient": [*command, "lifecycle-client"],
        "lifecycleServer": [*command, "lifecycle-server"],
        "extensions": {"blind": True, "profiles": ["strict", "compat"]},
    }
    (directory / "adapter.json").write_text(json.dumps(manifest))
    code, report = _matrix(
        tmp_path,
        *("--adapter-dir", named(directory), "--adapters-root", str(tmp_path / "none")),
    )
    assert code == 1
    assert len(report["combinations"]) == 2
    for combination in report["combinations"]:
        failed = _failed(combination)
        assert set(failed) == FAIL_CLOSED_BEFORE, (combination["transport"], failed)
        assert all(e.startswith("CompactionResult") for e in failed.values()), failed


def test_an_altered_expectation_fails_exactly_its_row(tmp_path: Path) -> None:
    document = copy.deepcopy(json.loads(OURS.read_text()))
    target = next(s for s in document["scenarios"] if s["id"] == "cmp-supplied-summary-then-edit")
    target["expected"]["provenance"] = {"kind": "generated"}
    path = tmp_path / "compaction.json"
    path.write_text(json.dumps(document))
    code, report = _matrix(tmp_path, "--adapters", "python", "typescript", "--scenarios", str(path))
    assert code == 1
    assert len(report["combinations"]) == 8
    for combination in report["combinations"]:
        failed = _failed(combination)
        assert list(failed) == ["cmp-supplied-summary-then-edit"], failed
        assert failed["cmp-supplied-summary-then-edit"].startswith("CompactionResult")
