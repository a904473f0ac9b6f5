"""The suite registry (``contract/registry.py``, ``suites/__init__.py``): every
suite module declares its ``SUITE`` under its own name, the commands it serves
are the contract's, and the entry point reaches each command through it.
Which modules may import which is ``.importlinter``'s (``lint-imports``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ahp_py import suites
from ahp_py.__main__ import main
from ahp_py.contract import registry

LIFECYCLE_COMMANDS = {registry.LIFECYCLE_CLIENT, registry.LIFECYCLE_SERVER}


def test_every_suite_in_the_table_declares_itself_under_its_name() -> None:
    served: dict[str, set[str]] = {}
    for name in suites.SUITES:
        suite = suites.find(name)
        assert suite is not None and suite.name == name
        assert set(suite.commands) <= set(registry.COMMANDS), name
        served[name] = set(suite.commands)
    assert served == {
        "core": {"client", "server", "replay"},
        "lifecycle": LIFECYCLE_COMMANDS,
        "catalogue": LIFECYCLE_COMMANDS,
        "compaction": LIFECYCLE_COMMANDS,
        "elicitation": LIFECYCLE_COMMANDS,
    }
    assert suites.find("isolation") is None  # it runs the lifecycle suite's module


def test_the_core_commands_run_the_core_suite() -> None:
    assert {c: s for c, s in registry.COMMANDS.items() if s is not None} == {
        "client": "core",
        "server": "core",
        "replay": "core",
    }


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value))
    return path


def test_a_lifecycle_server_of_a_suite_it_lacks_exits_2_naming_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("core", "isolation"):
        config = write(tmp_path / "server.json", {"suite": name})
        assert main(["lifecycle-server", "--config", str(config)]) == 2
        err = capsys.readouterr().err
        assert f"field suite: {name!r} is not a suite this server implements" in err


def test_a_lifecycle_client_of_the_core_suite_reports_every_row_unsupported(
    tmp_path: Path,
) -> None:
    rows = write(tmp_path / "rows.json", {"version": 1, "scenarios": [{"id": "a"}, {"id": "b"}]})
    config = {
        "suite": "core",
        "transport": "http",
        "scenarioFile": str(rows),
        "reportFile": str(tmp_path / "report.json"),
    }
    path = write(tmp_path / "client.json", config)
    assert main(["lifecycle-client", "--config", str(path)]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(r["id"], r["status"]) for r in report["results"]] == [
        ("a", "unsupported"),
        ("b", "unsupported"),
    ]
    assert "'core' is not implemented by ahp_py" in report["results"][0]["error"]
    assert report["contentUploads"] == []
