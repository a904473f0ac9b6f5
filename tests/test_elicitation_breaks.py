"""The elicitation suite end to end with a receiver that accepts wrong-session results,
and an altered row.

tests/fakes/elicitation_receiver.py runs our Python adapter behind a relay
that moves every result into its parent's session: the receiver then accepts
the results it had to refuse, and exactly the rows that send a result from
another session fail, naming them, on HTTP and stdio. A copy of our set with
one expectation altered fails exactly that row in every combination.
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

RECEIVER = Path(__file__).parent / "fakes" / "elicitation_receiver.py"
OURS = ROOT / "scenarios" / "elicitation.json"
WRONG_SESSION = {  # written from the rows: each sends a result from another session
    "eli-corr-body-wrong-session",
    "eli-corr-metadata-wrong-session",
    "eli-corr-omit-wrong-session",
    "eli-concurrent-two-live",
}


def _matrix(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--suite", "elicitation", "--output", str(output), "--quiet"]
    code = main([*base, "--auth", "none", "--transports", "http", "stdio", "--jobs", "2", *argv])
    return code, json.loads(output.read_text())


def _failed(combination: dict[str, Any]) -> dict[str, str]:
    return {
        row["id"]: row["error"]
        for block in combination["results"].values()
        for row in block["rows"]
        if row["status"] == "failed"
    }


def test_a_receiver_accepting_a_wrong_session_result_fails_those_rows(tmp_path: Path) -> None:
    directory = tmp_path / "receiver"
    directory.mkdir()
    command = [sys.executable, str(RECEIVER)]
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
        assert set(failed) == WRONG_SESSION, (combination["transport"], failed)
        assert all(e.startswith("ElicitationOutcome") for e in failed.values()), failed


def test_an_altered_expectation_fails_exactly_its_row(tmp_path: Path) -> None:
    document = copy.deepcopy(json.loads(OURS.read_text()))
    target = next(s for s in document["scenarios"] if s["id"] == "eli-atomic-result-merge")
    target["expected"]["actual"]["provenance"] = "user"
    path = tmp_path / "elicitation.json"
    path.write_text(json.dumps(document))
    code, report = _matrix(tmp_path, "--adapters", "python", "typescript", "--scenarios", str(path))
    assert code == 1
    assert len(report["combinations"]) == 8
    for combination in report["combinations"]:
        failed = _failed(combination)
        assert list(failed) == ["eli-atomic-result-merge"], failed
        assert failed["eli-atomic-result-merge"].startswith("ElicitationResult")
