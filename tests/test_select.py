"""Row selection (`--scenario`, `--tag`) and the re-run command every failing row carries."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.cli import main
from interop.select import Selection

CORE = ROOT / "scenarios" / "core.json"
COMPACTION = ROOT / "scenarios" / "compaction.json"


def test_globs_and_tags_select_rows() -> None:
    assert Selection().keeps("anything")
    globs = Selection(("tool.before.*", "eli-form-accept"))
    assert globs.keeps("tool.before.decision.x") and globs.keeps("eli-form-accept")
    assert not globs.keeps("eli-form-accept-no-content")
    tagged = Selection(tags=("decision",))
    assert tagged.keeps("x", ["state", "decision"])
    assert not tagged.keeps("x", ["state"]) and not tagged.keeps("x")
    both = Selection(("tool.*",), ("decision",))
    assert both.keeps("tool.a", ["decision"]) and not both.keeps("model.a", ["decision"])


def _run(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--output", str(output), "--quiet", "--auth", "none"]
    code = main([*base, "--clients", "python", "--servers", "python", *argv])
    return code, json.loads(output.read_text()) if output.exists() else {}


def test_a_selection_runs_only_its_rows_in_every_suite_that_has_them(tmp_path: Path) -> None:
    code, report = _run(
        tmp_path,
        *("--suite", "all", "--transports", "http"),
        *("--scenario", "tool.before.decision.*", "--scenario", "eli-form-accept"),
    )
    assert code == 0
    assert report["suites"] == ["core", "elicitation"]
    assert report["selection"] == {
        "scenario": ["tool.before.decision.*", "eli-form-accept"],
        "tag": [],
    }
    sets = {(s["suite"], s["name"]): s for s in report["sets"]}
    assert set(sets) == {("core", "core"), ("elicitation", "elicitation")}
    core = sets[("core", "core")]
    assert core["file"] == "scenarios/core.json"
    assert core["sha256"] == hashlib.sha256(CORE.read_bytes()).hexdigest()
    assert all(r["id"].startswith("tool.before.decision.") for r in core["rows"])
    assert [r["id"] for r in sets[("elicitation", "elicitation")]["rows"]] == ["eli-form-accept"]
    counted = {c["suite"]: sum(c["counts"].values()) for c in report["combinations"]}
    assert counted == {"core": len(core["rows"]), "elicitation": 1}


def test_a_tag_selects_and_a_selection_of_nothing_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _run(tmp_path, "--suite", "core", "--transports", "stdio", "--tag", "flow")
    assert code == 0
    wanted = {
        r["id"]
        for path in (CORE, ROOT / "scenarios" / "upstream" / "scenarios.json")
        for r in json.loads(path.read_text())["scenarios"]
        if "flow" in r.get("tags", [])
    }
    assert wanted
    assert {r["id"] for s in report["sets"] for r in s["rows"]} == wanted
    capsys.readouterr()
    assert _run(tmp_path, "--suite", "all", "--scenario", "no-such-row-*")[0] == 2
    assert "no row of the suites" in capsys.readouterr().err


def test_a_failing_row_prints_the_command_that_reruns_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = copy.deepcopy(json.loads(COMPACTION.read_text()))
    target = next(s for s in document["scenarios"] if s["id"] == "cmp-supplied-summary-then-edit")
    target["expected"]["provenance"] = {"kind": "generated"}
    path = tmp_path / "compaction.json"
    path.write_text(json.dumps(document))
    argv = ["matrix", "--output", str(tmp_path / "o" / "r.json"), "--auth", "none"]
    argv += ["--suite", "compaction", "--scenarios", str(path), "--transports", "http"]
    assert main([*argv, "--clients", "python", "--servers", "python"]) == 1
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "re-run one:" in line)
    command = line.split("re-run one: ", 1)[1]
    # the row's repro bundle's script, which names exactly that row and pair
    assert command.startswith("sh ") and command.endswith("/rerun.sh")
    script = Path(command.removeprefix("sh ")).read_text()
    assert "--scenario cmp-supplied-summary-then-edit" in script
    assert "--clients python --servers python --transports http --auth none" in script
    assert f"--scenarios {path}" in script
    # run from any folder, it re-runs exactly that row, into the bundle
    done = subprocess.run(["sh", command.removeprefix("sh ")], cwd=tmp_path, check=False)
    assert done.returncode == 1
    output = Path(command.removeprefix("sh ")).parent / "rerun" / "report.json"
    again = json.loads(output.read_text())
    assert [r["id"] for s in again["sets"] for r in s["rows"]] == ["cmp-supplied-summary-then-edit"]
    assert again["summary"]["rows"]["failed"] == 1


def test_no_run_leaves_its_trimmed_copies_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    # suites with no selected row, a refused selection, and a run that completes
    assert _run(tmp_path, "--suite", "all", "--scenario", "no-such-row-*")[0] == 2
    code, report = _run(
        tmp_path, "--suite", "all", "--transports", "stdio", "--scenario", "eli-form-accept"
    )
    assert code == 0 and report["suites"] == ["elicitation"]
    capsys.readouterr()
    assert list(scratch.iterdir()) == []
