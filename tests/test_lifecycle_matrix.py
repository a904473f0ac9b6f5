"""The lifecycle suite end to end: an upstream checkout plugs in, a wrong expectation fails its row.

Both run the real Python adapter over real sockets and pipes (one combination
each, a few seconds).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.cli import main

UPSTREAM = ROOT / "scenarios" / "upstream" / "lifecycle-scenarios.json"
WRAPPER = Path(__file__).parent / "fakes" / "upstream_checkout.py"


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


def test_upstream_shaped_checkout_passes_under_compat(tmp_path: Path) -> None:
    """interop/adapter.json with the upstream keys only, no extensions: not blind, compat."""
    checkout = tmp_path / "sdk-checkout"
    (checkout / "interop").mkdir(parents=True)
    roles = {
        "client": "client",
        "server": "server",
        "lifecycleClient": "lifecycle-client",
        "lifecycleServer": "lifecycle-server",
    }
    manifest = {"language": "upstream-shaped"}
    manifest.update({key: [sys.executable, str(WRAPPER), role] for key, role in roles.items()})
    (checkout / "interop" / "adapter.json").write_text(json.dumps(manifest))
    code, report = _run(
        tmp_path,
        "--adapter-dir",
        str(checkout),
        "--adapters-root",
        str(tmp_path / "no-builtin-adapters"),
        "--profile",
        "compat",
    )
    assert code == 0, report["summary"]
    # our [ext] rows are unsupported for a v1 adapter, naming the extension; no row fails
    assert report["summary"]["combinations"]["unsupported"] == 2
    assert report["summary"]["rows"]["failed"] == 0
    unsupported = [
        row
        for combination in report["combinations"]
        for block in combination["results"].values()
        for row in block["rows"]
        if row["status"] == "unsupported"
    ]
    assert unsupported and all("operational failures" in row["error"] for row in unsupported)
    assert report["adapters"]["upstream-shaped"]["language"] == "upstream-shaped"
    assert report["adapters"]["upstream-shaped"]["contract"] == "v1"


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
