"""Faults a new user hit, each pinned so it cannot come back."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from interop.cli import main
from interop.report.write import LOGS_MARKER, ReportPaths
from interop.suites.base import ScenarioError
from interop.suites.core.scenarios import load_set
from tests.conftest import matrix_argv


def _run(tmp_path: Path, dirs: list[Path], small_set: Path, *extra: str) -> tuple[int, Any]:
    output = tmp_path / "out" / "report.json"
    code = main(matrix_argv(dirs, small_set, output, "--timeout", "20", *extra))
    report = json.loads(output.read_text()) if output.exists() else None
    return code, report


def test_a_server_that_dies_is_named_and_what_follows_is_not_run(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    server = fake_adapter("dying", server="die-after-first")
    clients = [fake_adapter("a-client"), fake_adapter("b-client")]
    code, report = _run(
        tmp_path,
        [server, *clients],
        small_set,
        "--servers",
        "dying",
        "--clients",
        "a-client",
        "b-client",
        "--transports",
        "http",
    )
    assert code == 1
    first, second = report["combinations"]
    messages = [e["message"] for e in first["errors"] if e["class"] == "ServerExit"]
    assert messages and "was killed by signal 9 (SIGKILL)" in messages[0]
    assert second["status"] == "not-run"
    assert "exited" in second["reason"] or "killed" in second["reason"]


def test_a_server_that_exits_at_start_up_says_how(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, report = _run(
        tmp_path, [fake_adapter("fake", server="server-crash")], small_set, "--transports", "http"
    )
    assert code == 1
    errors = report["combinations"][0]["errors"]
    assert any(
        e["class"] == "ServerExit" and "exited with status 3" in e["message"] for e in errors
    )


def test_a_client_killed_by_a_signal_says_so(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    adapter = fake_adapter("fake", client="self-kill", blind=True)
    code, report = _run(tmp_path, [adapter], small_set, "--transports", "http")
    assert code == 1
    messages = [e["message"] for e in report["combinations"][0]["errors"]]
    assert any("was killed by signal 9 (SIGKILL)" in m for m in messages), messages


def test_a_command_that_cannot_start_is_named_with_the_way_out(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    directory = fake_adapter("fake")
    manifest = json.loads((directory / "adapter.json").read_text())
    manifest["server"] = ["./not-built-yet", "serve"]
    (directory / "adapter.json").write_text(json.dumps(manifest))
    code, report = _run(tmp_path, [directory], small_set, "--transports", "http")
    assert code == 1
    errors = report["combinations"][0]["errors"]
    assert [e["class"] for e in errors] == ["ServerSpawn"]
    assert "./not-built-yet serve" in errors[0]["message"]
    # no build command: the way out is where the command runs from, not a build
    assert "check that './not-built-yet' exists there or on PATH" in errors[0]["message"]
    manifest["build"] = ["true"]
    (directory / "adapter.json").write_text(json.dumps(manifest))
    code, report = _run(tmp_path, [directory], small_set, "--transports", "http")
    assert "build it first" in report["combinations"][0]["errors"][0]["message"]


def test_junit_counts_add_up_and_names_are_unique(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, _ = _run(tmp_path, [fake_adapter("fake", client="lie")], small_set)
    assert code == 1
    root = ET.parse(tmp_path / "out" / "report.xml").getroot()
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests", "-1")) == len(cases)
        assert int(suite.get("failures", "-1")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("errors", "-1")) == sum(c.find("error") is not None for c in cases)
        assert int(suite.get("skipped", "-1")) == sum(c.find("skipped") is not None for c in cases)
        names = [c.get("name") for c in cases]
        assert len(names) == len(set(names))
        for failure in suite.iter("failure"):
            assert failure.text and "expected:" in failure.text and "actual:" in failure.text
    assert int(root.get("tests", "0")) == sum(1 for _ in root.iter("testcase"))


def test_a_logs_folder_is_replaced_only_when_a_run_made_it(tmp_path: Path) -> None:
    paths = ReportPaths.for_output(tmp_path / "x.json")
    assert paths.logs == tmp_path / "x-logs"
    assert paths.timings == tmp_path / "x.timings.json"
    paths.logs.mkdir()
    (paths.logs / "precious.txt").write_text("not ours")
    with pytest.raises(FileExistsError, match="not made by this harness"):
        paths.prepare_logs()
    assert (paths.logs / "precious.txt").exists()
    (paths.logs / "precious.txt").unlink()
    (paths.logs / LOGS_MARKER).write_text("")
    (paths.logs / "old.log").write_text("from an earlier run")
    paths.prepare_logs()
    assert not (paths.logs / "old.log").exists()
    unrelated = tmp_path / "logs"
    unrelated.mkdir()
    (unrelated / "keep.txt").write_text("someone else's")
    paths.prepare_logs()
    assert (unrelated / "keep.txt").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["matrix", "--jobs", "0"],
        ["matrix", "--jobs", "-3"],
        ["matrix", "--timeout", "nan"],
        ["matrix", "--timeout", "-1"],
        ["matrix", "--timeout", "inf"],
        ["fuzz", "--count", "0"],
    ],
)
def test_nonsense_options_are_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2


def test_an_output_under_a_file_is_a_usage_error(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path, capsys: Any
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    argv = matrix_argv([fake_adapter("fake")], small_set, blocker / "report.json")
    assert main(argv) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_the_profile_hint_is_not_the_profile_given(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path, capsys: Any
) -> None:
    directory = fake_adapter("fake", profiles=["strict"])
    argv = matrix_argv([directory], small_set, tmp_path / "o" / "r.json", "--profile", "compat")
    assert main(argv) == 2
    message = capsys.readouterr().err
    assert "does not support the 'compat' trust profile" in message
    assert "try --profile compat" not in message


def test_a_deep_scenario_file_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"version": 1, "scenarios": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(ScenarioError, match="nested too deeply"):
        load_set(path)


def test_version() -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert sys.modules["interop"].__version__


def test_an_output_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line naming the place, before anything runs; never a traceback after it."""
    if os.geteuid() == 0:
        place = Path("/sys")  # not writable even for root
    else:
        place = tmp_path / "read-only"
        place.mkdir()
        place.chmod(0o555)
    argv = ["matrix", "--suite", "core", "--output", str(place / "report.json")]
    assert main([*argv, "--clients", "python", "--servers", "python"]) == 2
    err = capsys.readouterr().err
    assert f"--output {place / 'report.json'}: cannot write in {place}" in err, err
    assert "Traceback" not in err


def test_an_output_that_is_not_a_regular_file_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO, a device, a /proc path and someone's own file: one line each, before
    anything runs, and nothing changes on disk."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    own = tmp_path / "notes.json"
    own.write_text('{"mine": true}')
    beside = tmp_path / "beside"
    beside.mkdir()
    (beside / "report.html").symlink_to(own)
    places = [fifo, Path("/dev/null"), Path("/proc/self/status"), own, beside / "report.json"]
    before = {p: os.lstat(p).st_mode for p in places if os.path.lexists(p)}
    for place in places:
        argv = ["matrix", "--suite", "core", "--output", str(place)]
        assert main([*argv, "--clients", "python", "--servers", "python"]) == 2, place
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--output " in err and place.name in err, err
        assert "Traceback" not in err
    assert {p: os.lstat(p).st_mode for p in before} == before
    assert own.read_text() == '{"mine": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["beside", "fifo.json", "notes.json"]
    assert sorted(p.name for p in beside.iterdir()) == ["report.html"]
