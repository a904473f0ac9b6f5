"""The lifecycle suite end to end: a wrong expectation fails exactly its row (upstream
SDK checkouts: tests/test_upstream_emulator_steps.py).

Both run the real Python adapter over real sockets and pipes (one combination
each, a few seconds).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.cli import main

UPSTREAM = ROOT / "scenarios" / "upstream" / "lifecycle-scenarios.json"


def _run(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--suite", "lifecycle", "--output", str(output), "--quiet"]
    code = main([*base, "--auth", "none", *argv])
    return code, json.loads(output.read_text())


def _rows(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    statuses: dict[tuple[str, str], str] = {}
    for combination in report["combinations"]:
        key = f"{combination['transport']}"
        for set_name, block in combination["results"].items():
            for row in block["rows"]:
                statuses[(key, f"{set_name}/{row['id']}")] = row["status"]
    return statuses


def test_an_altered_expectation_fails_exactly_its_row(tmp_path: Path) -> None:
    scenarios = json.loads(UPSTREAM.read_text())
    altered = copy.deepcopy(scenarios)
    # a row of both transports, its expected input altered
    target = next(s for s in altered["scenarios"] if s["id"] == "first-staged-response-wins")
    state = target["expected"]["states"]["first-staged-response-wins:a"]
    state["input"] = {"value": "duplicate"}
    path = tmp_path / "lifecycle-scenarios.json"
    path.write_text(json.dumps(altered))
    code, report = _run(
        tmp_path,
        *("--adapters", "python", "typescript", "--transports", "http", "stdio"),
        *("--jobs", "2", "--scenarios", str(path)),
    )
    assert code == 1
    # every client x server x transport: 8 combinations, the one row failed in each
    assert len(report["combinations"]) == 8
    for combination in report["combinations"]:
        where = (combination["client"], combination["server"], combination["transport"])
        failed = [
            (name, row)
            for name, block in combination["results"].items()
            for row in block["rows"]
            if row["status"] == "failed"
        ]
        assert [(name, row["id"]) for name, row in failed] == [
            ("lifecycle-scenarios", "first-staged-response-wins")
        ], where
        assert "input" in failed[0][1]["error"], where
        assert combination["errors"] == [], where
