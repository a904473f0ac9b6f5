"""Every catalogue verification rule, broken by a real adapter process, fails with its class.

tests/fakes/lifecycle_breaker.py runs our Python adapter (its catalogue roles)
behind a control proxy that plants breaks in the receipts, or rewrites the
client's report; each targeted row (or the combination, for a run-wide rule)
must fail naming its rule, on HTTP and on stdio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.cli import main
from interop.report.document import rows_of
from tests.conftest import named
from tests.fakes.lifecycle_breaker import (
    CATALOGUE_BREAKS,
    CATALOGUE_REPORT_BREAKS,
    CATALOGUE_RUN_BREAKS,
)

BREAKER = Path(__file__).parent / "fakes" / "lifecycle_breaker.py"
UPSTREAM = ROOT / "scenarios" / "upstream" / "catalogue-scenarios.json"


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


def _matrix(tmp_path: Path, directory: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    code = main(
        [
            *("matrix", "--suite", "catalogue", "--output", str(output), "--quiet"),
            *("--auth", "none", "--adapters-root", str(tmp_path / "no-builtin-adapters")),
            *("--adapter-dir", named(directory), "--scenarios", str(UPSTREAM)),
            *("--transports", "http", "stdio", "--jobs", "2", *argv),
        ]
    )
    return code, json.loads(output.read_text())


def _failed(combination: dict[str, Any]) -> dict[str, str]:
    return {
        row["id"]: row["error"]
        for block in combination["results"].values()
        for row in block["rows"]
        if row["status"] == "failed"
    }


def test_each_planted_delivery_break_fails_its_row_with_its_class(tmp_path: Path) -> None:
    breaker = _adapter(tmp_path, "breaker", ["--break", ",".join(CATALOGUE_BREAKS)], [])
    code, report = _matrix(tmp_path, breaker)
    assert code == 1
    wanted = {sid: cls for cls, sid, _ in CATALOGUE_BREAKS.values()}
    assert len(report["combinations"]) == 2
    for combination in report["combinations"]:
        assert combination["errors"] == [], combination["transport"]
        failed = _failed(combination)
        assert sorted(failed) == sorted(wanted), (combination["transport"], failed)
        for sid, error_class in wanted.items():
            assert failed[sid].startswith(error_class), (combination["transport"], failed[sid])
    # the probes judge the receiver alone: rows that failed do not keep them from running
    (http,) = [c for c in report["combinations"] if c["transport"] == "http"]
    probes = [r for r in rows_of(report, http) if r["set"] == "catalogue-receiver-probes"]
    assert probes and all(row["status"] == "passed" for row in probes), probes


@pytest.mark.parametrize("name", sorted(CATALOGUE_RUN_BREAKS))
def test_a_run_wide_break_fails_the_combination(tmp_path: Path, name: str) -> None:
    breaker = _adapter(tmp_path, "run-breaker", ["--break", name], [])
    code, report = _matrix(tmp_path, breaker)
    assert code == 1
    for combination in report["combinations"]:
        classes = [e["class"] for e in combination["errors"]]
        assert classes == [CATALOGUE_RUN_BREAKS[name][0]], (combination["transport"], classes)


@pytest.mark.parametrize("name", sorted(CATALOGUE_REPORT_BREAKS))
def test_a_broken_report_is_named(tmp_path: Path, name: str) -> None:
    breaker = _adapter(tmp_path, "report-breaker", [], ["--break-report", name])
    code, report = _matrix(tmp_path, breaker, "--transports", "http")
    assert code == 1
    combination = report["combinations"][0]
    classes = {e["class"] for e in combination["errors"]} | {
        error.split(":")[0] for error in _failed(combination).values()
    }
    assert CATALOGUE_REPORT_BREAKS[name] in classes, (classes, combination["errors"])


def test_a_receiver_hiding_its_lineage_verdicts_fails_those_probes(tmp_path: Path) -> None:
    breaker = _adapter(tmp_path, "probe-breaker", ["--break", "cat-probe"], [])
    code, report = _matrix(tmp_path, breaker, "--transports", "http")
    assert code == 1
    failed = _failed(report["combinations"][0])
    wanted = [
        "observe-self-parent-409",
        "observe-identity-reused-409",
        "observe-no-op-actual-change-409",
    ]
    assert sorted(failed) == sorted(wanted), failed
    assert all(failed[name].startswith("ProbeFailed") for name in wanted), failed
