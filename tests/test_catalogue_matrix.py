"""The catalogue suite end to end: an altered upstream expectation fails exactly its row.

Runs the real Python and TypeScript adapters, both roles, over real sockets
and pipes (8 combinations, auth none).
"""

from __future__ import annotations

import copy
import json
import sys
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


def test_an_upstream_shaped_checkout_passes_the_upstream_file_under_compat(tmp_path: Path) -> None:
    """interop/adapter.json with the upstream keys only (not blind, compat), as for lifecycle."""
    wrapper = Path(__file__).parent / "fakes" / "upstream_checkout.py"
    checkout = tmp_path / "sdk-checkout"
    (checkout / "interop").mkdir(parents=True)
    roles = {
        "client": "client",
        "server": "server",
        "lifecycleClient": "lifecycle-client",
        "lifecycleServer": "lifecycle-server",
    }
    manifest: dict[str, Any] = {"language": "upstream-shaped"}
    manifest.update({key: [sys.executable, str(wrapper), role] for key, role in roles.items()})
    (checkout / "interop" / "adapter.json").write_text(json.dumps(manifest))
    output = tmp_path / "out" / "report.json"
    code = main(
        [
            *("matrix", "--suite", "catalogue", "--output", str(output), "--quiet"),
            *("--auth", "none", "--profile", "compat", "--scenarios", str(UPSTREAM)),
            *("--adapter-dir", str(checkout)),
            *("--adapters-root", str(tmp_path / "no-builtin-adapters")),
        ]
    )
    report = json.loads(output.read_text())
    assert code == 0, report["summary"]
    assert report["summary"]["combinations"]["passed"] == 2
    assert report["summary"]["rows"]["failed"] == 0
