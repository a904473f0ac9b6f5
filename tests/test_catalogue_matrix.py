"""The catalogue suite end to end: an altered upstream expectation fails exactly its row.

Runs the real Python and TypeScript adapters, both roles, over real sockets
and pipes (8 combinations, auth none).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.cli import main

UPSTREAM = ROOT / "scenarios" / "upstream" / "catalogue-scenarios.json"


def _run(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--suite", "catalogue", "--output", str(output), "--quiet"]
    base += ["--auth", "none", "--adapters", "python", "typescript"]
    code = main([*base, "--transports", "http", "stdio", "--jobs", "2", *argv])
    return code, json.loads(output.read_text())


def _failed(combination: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (name, row["id"], row.get("error", ""))
        for name, block in combination["results"].items()
        for row in block["rows"]
        if row["status"] == "failed"
    ]


@pytest.mark.parametrize(
    ("sid", "change", "error_class"),
    [
        # a delivery verdict: the schema-invalid model.error claimed accepted
        (
            "typed-model-error-required",
            lambda s: s["expected"]["deliveries"].__setitem__(
                0, {"accepted": True, "errorKind": None}
            ),
            "DeliveryMismatch",
        ),
        # a registration verdict: the duplicate backend claimed accepted
        (
            "registration-duplicate-backend",
            lambda s: s["expected"]["registrations"].__setitem__(0, {"accepted": True}),
            "CatalogueResult",
        ),
    ],
)
def test_an_altered_expectation_fails_exactly_its_row(
    tmp_path: Path, sid: str, change: Any, error_class: str
) -> None:
    altered = copy.deepcopy(json.loads(UPSTREAM.read_text()))
    change(next(s for s in altered["scenarios"] if s["id"] == sid))
    path = tmp_path / "catalogue-scenarios.json"
    path.write_text(json.dumps(altered))
    code, report = _run(tmp_path, "--scenarios", str(path))
    assert code == 1
    assert len(report["combinations"]) == 8
    for combination in report["combinations"]:
        where = (combination["client"], combination["server"], combination["transport"])
        assert combination["errors"] == [], where
        failed = _failed(combination)
        assert [(name, row) for name, row, _ in failed] == [("catalogue-scenarios", sid)], where
        assert failed[0][2].startswith(error_class), (where, failed[0][2])
