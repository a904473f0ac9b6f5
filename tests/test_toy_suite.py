"""A toy eighth suite plugs in by adding files under its own folder, touching nothing else.

The suite (tests/fakes/suites/toy) and its fake adapter (tests/fakes/toy_adapter.py) live
in the test tree; the harness finds the suite through AHP_INTEROP_SUITE_PATH. These tests
run the real command line as a child process and find the suite in the run, the report,
coverage, selection (`--scenario`, `--tag`), the HTML, the JUnit XML and the help, and
its rule failing when the adapter answers wrong.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from interop import ROOT

SUITES = ROOT / "tests" / "fakes" / "suites"
ADAPTER = ROOT / "tests" / "fakes" / "toy_adapter.py"


def _adapter(tmp_path: Path, *behaviour: str) -> Path:
    directory = tmp_path / "toy"
    directory.mkdir()
    command = [sys.executable, str(ADAPTER), *behaviour]
    manifest = {"language": "toy", "client": command, "server": command}
    manifest["extensions"] = {"profiles": ["strict"]}
    (directory / "adapter.json").write_text(json.dumps(manifest), encoding="utf-8")
    return directory


def _interop(*argv: str, suites: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AHP_INTEROP_SUITE_PATH"}
    if suites:
        env["AHP_INTEROP_SUITE_PATH"] = str(SUITES)
    return subprocess.run(
        [sys.executable, "-m", "interop", *argv],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _run(tmp_path: Path, *extra: str, behaviour: tuple[str, ...] = ()) -> tuple[int, Path]:
    output = tmp_path / "out" / "report.json"
    done = _interop(
        "matrix", "--suite", "toy", "--adapters-root", str(tmp_path / "none"),
        "--adapter-dir", f"toy={_adapter(tmp_path, *behaviour)}",
        "--output", str(output), "--quiet", *extra,
    )  # fmt: skip
    assert output.exists(), done.stderr
    return done.returncode, output


def _rows(report: dict[str, Any]) -> dict[str, str]:
    (combination,) = [c for c in report["combinations"] if c["status"] != "inapplicable"]
    assert combination["suite"] == "toy"
    (result,) = combination["results"].values()
    listed = {r["id"]: r["status"] for r in result["rows"]}
    (described,) = [s for s in report["sets"] if s["suite"] == "toy"]
    return {r["id"]: listed.get(r["id"], "passed") for r in described["rows"]}


def test_the_toy_suite_runs_and_appears_everywhere(tmp_path: Path) -> None:
    code, output = _run(tmp_path)
    assert code == 0
    report = json.loads(output.read_text(encoding="utf-8"))
    assert report["suites"] == ["toy"]
    assert _rows(report) == {
        "toy-two-three": "passed",
        "toy-negative": "passed",
        "toy-zero": "passed",
    }
    inapplicable = [c for c in report["combinations"] if c["status"] == "inapplicable"]
    assert inapplicable and all("toy suite runs each adapter" in c["reason"] for c in inapplicable)
    coverage = report["coverage"]
    assert {"suite:toy", "toy:sum", "toy:negative"} <= set(coverage["features"])
    client = coverage["byAdapter"]["toy"]["client"]["features"]
    assert client["toy:negative"] == client["toy:sum"] == client["suite:toy"] == "passed"
    html = output.with_suffix(".html").read_text(encoding="utf-8")
    assert "<section class='suite' data-suite='toy'><h2>toy</h2>" in html
    assert "href='#combo=toy/toy-&gt;toy/stdio/none'" in html
    assert 'classname="toy' in output.with_suffix(".xml").read_text(encoding="utf-8")


def test_selection_reaches_the_toy_suite(tmp_path: Path) -> None:
    code, output = _run(tmp_path, "--scenario", "toy-zero")
    assert code == 0
    assert _rows(json.loads(output.read_text(encoding="utf-8"))) == {"toy-zero": "passed"}
    tagged = tmp_path / "tagged"
    tagged.mkdir()
    code, output = _run(tagged, "--tag", "negative")
    assert code == 0
    assert _rows(json.loads(output.read_text(encoding="utf-8"))) == {"toy-negative": "passed"}


def test_the_toy_rule_fails_a_wrong_sum(tmp_path: Path) -> None:
    code, output = _run(tmp_path, "--recheck", "0", behaviour=("--wrong", "toy-negative"))
    assert code == 1
    rows = _rows(json.loads(output.read_text(encoding="utf-8")))
    assert rows == {"toy-two-three": "passed", "toy-negative": "failed", "toy-zero": "passed"}


def test_a_misspelt_key_is_refused_with_file_row_and_field(tmp_path: Path) -> None:
    document = json.loads((SUITES / "toy" / "toy.json").read_text(encoding="utf-8"))
    document["scenarios"][1]["expcted"] = document["scenarios"][1].pop("expected")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    done = _interop(
        "matrix", "--suite", "toy", "--scenarios", str(bad), "--adapters-root",
        str(tmp_path / "none"), "--adapter-dir", f"toy={_adapter(tmp_path)}",
        "--output", str(tmp_path / "out" / "report.json"), "--quiet",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"{bad}: scenarios[1] (id 'toy-negative')" in done.stderr
    assert "expcted" in done.stderr


def test_the_help_names_the_suite_only_when_it_is_found() -> None:
    assert "toy" in _interop("matrix", "--help").stdout
    assert "toy" not in _interop("matrix", "--help", suites=False).stdout


def _checklist() -> list[str]:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Adding a suite", 1)[1].split("\n## ", 1)[0]
    items = section.split("- [ ] ")[1:]
    assert items, "docs/ARCHITECTURE.md lost its 'Adding a suite' checklist"
    return items


def test_the_checklist_names_the_toy_suites_files_and_the_declarations_fields() -> None:
    import dataclasses

    from interop.suites.declaration import Declaration

    toy = SUITES / "toy"
    files = [item.split("`", 2)[1] for item in _checklist() if item.startswith("`")]
    named = [f for f in files if f.endswith(".py")]
    assert {"__init__.py", "scenarios.py", "features.py", "verify.py", "suite.py"} <= set(named)
    optional = {"probes.py"}  # only a suite that probes receivers directly
    assert sorted(f for f in named if f not in optional) == sorted(
        p.name for p in toy.glob("*.py") if p.name not in optional
    )
    fields = {f.name for f in dataclasses.fields(Declaration)}
    declared = _checklist()[0]
    for field in ("order", "summary", "suite", "command_keys", "cpu_share", "sets"):
        assert f"`{field}`" in declared
    mentioned = {w.strip("`") for w in declared.split() if w.startswith("`") and w.endswith("`")}
    assert {w for w in mentioned if w.isidentifier() and w.islower()} - {"upstream"} <= fields
