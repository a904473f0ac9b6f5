"""The report commands end to end: `--shard K/N` runs combined by `report combine` equal the
unsharded run byte for byte; `diff` of a report against itself exits 0 and against one with
an injected regression exits 1 naming it; `report html` renders; known failures in a run."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from interop.cli import main
from interop.report.combine import render
from tests.conftest import matrix_argv, named


def _grid(dirs: list[Path], small_set: Path, output: Path, *extra: str) -> int:
    grid = ("--transports", "http", "stdio", "--timeout", "10", "--jobs", "2")
    return main(matrix_argv(dirs, small_set, output, *grid, *extra))


def test_two_shards_combined_equal_the_unsharded_report(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    dirs = [fake_adapter("a"), fake_adapter("b", client="lie")]  # b fails rows as client
    whole = tmp_path / "whole" / "report.json"
    assert _grid(dirs, small_set, whole) == 1
    shards = []
    for index in (1, 2):
        output = tmp_path / f"shard{index}" / "report.json"  # same name: same logDir
        _grid(dirs, small_set, output, "--shard", f"{index}/2")
        document = json.loads(output.read_text())
        assert document["shard"]["index"] == index and document["shard"]["count"] == 2
        shards.append(output)
    parts = [json.loads(p.read_text())["combinations"] for p in shards]
    assert parts[0] and parts[1]  # both shards ran something
    combined = tmp_path / "combined" / "report.json"
    assert main(["report", "combine", *map(str, shards), "--output", str(combined)]) == 1
    assert combined.read_text() == whole.read_text()
    assert combined.with_suffix(".xml").exists() and combined.with_suffix(".html").exists()
    # one shard alone is refused: the grid it declares is not covered
    assert main(["report", "combine", str(shards[0]), "--output", str(tmp_path / "x.json")]) == 2


def test_diff_exits_on_a_regression_and_names_it(
    tmp_path: Path,
    fake_adapter: Callable[..., Path],
    small_set: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dirs = [fake_adapter("a")]
    report = tmp_path / "run" / "report.json"
    assert _grid(dirs, small_set, report) == 0
    capsys.readouterr()
    assert main(["diff", str(report), str(report)]) == 0
    assert "no differences" in capsys.readouterr().out
    document = json.loads(report.read_text())
    worse = copy.deepcopy(document)
    combination = worse["combinations"][0]
    block = next(iter(combination["results"].values()))
    index = next(i for i, d in enumerate(block["digests"]) if d is not None)
    row_id = next(s for s in worse["sets"] if s["suite"] == "core")["rows"][index]["id"]
    block["digests"][index] = None
    block["rows"].append(
        {"id": row_id, "status": "failed", "actual": {"rejected": True}, "error": "injected"}
    )
    combination["status"] = "failed"
    combination["counts"]["passed"] -= 1
    combination["counts"]["failed"] += 1
    path = tmp_path / "worse.json"
    path.write_text(render(worse))
    assert main(["diff", str(report), str(path)]) == 1
    out = capsys.readouterr().out
    assert row_id in out
    assert main(["diff", str(tmp_path / "missing.json"), str(report), "--baseline-optional"]) == 0
    page = tmp_path / "site" / "index.html"
    assert (
        main(["report", "html", str(path), "--output", str(page), "--baseline", str(report)]) == 0
    )
    text = page.read_text(encoding="utf-8")
    assert "Since the baseline: regressions" in text and row_id in text
    # each regression links to its combination's view on the page
    c = combination
    key = f"{c['suite']}/{c['client']}-&gt;{c['server']}/{c['transport']}/{c['auth']}"
    assert f"<li><a href='#combo={key}'><code>" in text


def test_a_known_failure_does_not_fail_the_run_and_a_stale_one_does(
    tmp_path: Path,
    fake_adapter: Callable[..., Path],
    small_set: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dirs = [fake_adapter("a"), fake_adapter("b", client="lie")]
    first = tmp_path / "first" / "report.json"
    assert _grid(dirs, small_set, first) == 1
    failing = [
        f"core/{name}/{c['client']}->{c['server']}/{c['transport']}/{c['auth']}/{row['id']}"
        for c in json.loads(first.read_text())["combinations"]
        for name, block in c["results"].items()
        for row in block["rows"]
        if row["status"] == "failed"
    ]
    assert failing
    known = tmp_path / "known.json"
    entries = [{"pattern": p, "reason": "the fake lies", "issue": "https://x/1"} for p in failing]
    known.write_text(json.dumps({"version": 1, "entries": entries}))
    again = tmp_path / "again" / "report.json"
    assert _grid(dirs, small_set, again, "--known-failures", str(known)) == 0
    summary = json.loads(again.read_text())["summary"]
    assert summary["rows"]["known-failing"] == len(failing) and summary["rows"]["failed"] == 0
    stale = [*entries, {"pattern": "core/**/a->a/http/none/*", "reason": "r", "issue": "i"}]
    known.write_text(json.dumps({"version": 1, "entries": stale}))
    capsys.readouterr()
    assert _grid(dirs, small_set, again, "--known-failures", str(known)) == 1
    assert "stale: core/**/a->a/http/none/*" in capsys.readouterr().err


def test_the_progress_bar_on_a_terminal_and_lines_elsewhere(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from interop.grid import Combination
    from interop.results import Outcome
    from interop.runner import Progress

    failed = Outcome("core", Combination("a", "b", "http", "none"))  # no rows: failed
    plain = Progress(2, quiet=False, tty=False)
    plain.report(failed)
    assert "[  1/2] core a -> b [http/none]: failed" in capsys.readouterr().err
    bar = Progress(2, quiet=False, tty=True)
    bar.report(failed)  # printed above the bar: a combination that did not pass
    bar.stop()
    bar.stop()
    assert "core a -> b [http/none]: failed" in capsys.readouterr().err
    assert bar.close() == [failed]


def test_repeat_reports_a_row_whose_verdict_changed_as_flaky_never_as_passed(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    dirs = [fake_adapter("f", client="flaky")]
    output = tmp_path / "run" / "report.json"
    argv = ("--transports", "http", "--repeat", "2", "--no-server-reuse")
    assert main(matrix_argv(dirs, small_set, output, *argv)) == 1
    report = json.loads(output.read_text())
    (combination,) = report["combinations"]
    flaky = [row for block in combination["results"].values() for row in block["rows"]]
    assert len(flaky) == 1, flaky
    assert flaky[0]["status"] == "flaky"
    assert flaky[0]["diagnostics"]["repeats"] == ["passed", "failed"]
    assert flaky[0]["error"].startswith("flaky (passed, failed)")
    assert combination["counts"]["passed"] == 7
    # honest twice: nothing flaky, every row passes
    again = tmp_path / "again" / "report.json"
    honest = [fake_adapter("h")]
    assert main(matrix_argv(honest, small_set, again, "--transports", "http", "--repeat", "2")) == 0


def test_a_suite_an_adapter_does_not_list_is_unsupported_not_run(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    dirs = [fake_adapter("c", suites=["core"]), fake_adapter("full")]
    output = tmp_path / "out" / "report.json"
    argv = ["matrix", "--suite", "core", "elicitation", "--output", str(output), "--quiet"]
    argv += ["--auth", "none", "--transports", "http", "--clients", "c", "--servers", "full"]
    argv += ["--adapters-root", str(tmp_path / "none")]
    for directory in dirs:
        argv += ["--adapter-dir", named(directory)]
    assert main(argv) == 0
    report = json.loads(output.read_text())
    by_suite = {c["suite"]: c for c in report["combinations"]}
    # a contract v1 client (the fakes declare no blind): every core row passes but
    # the one that relies on our contract's host rule (ext:settled-host-rule)
    core = [row for block in by_suite["core"]["results"].values() for row in block["rows"]]
    assert [(r["status"], "settled-host-rule" in r["error"]) for r in core] == [
        ("unsupported", True)
    ]
    unsupported = by_suite["elicitation"]
    assert unsupported["status"] == "unsupported"
    rows = [row for block in unsupported["results"].values() for row in block["rows"]]
    assert len(rows) == next(s for s in report["sets"] if s["suite"] == "elicitation")["scenarios"]
    assert all(row["status"] == "unsupported" for row in rows)
    assert "c does not implement the elicitation suite" in rows[0]["error"]


def test_a_one_off_failure_is_rechecked_alone_and_reported_flaky_never_passed(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    """A client that lies on its first row in its first run only: the row fails, is
    run again alone (--recheck, default once) and passes, so it is `flaky` (the run
    exits 1, the row names both verdicts); a row that fails again stays failed with
    the re-run's verdict beside it; with --recheck 0 nothing is run again."""
    dirs = [fake_adapter("f", client="fails-once")]
    output = tmp_path / "run" / "report.json"
    assert main(matrix_argv(dirs, small_set, output, "--transports", "http")) == 1
    report = json.loads(output.read_text())
    (combination,) = report["combinations"]
    (row,) = [r for block in combination["results"].values() for r in block["rows"]]
    assert row["status"] == "flaky"
    assert row["diagnostics"]["recheck"] == ["passed"]
    assert row["error"].startswith("flaky: failed ($.decision: expected")
    assert row["error"].endswith("then passed when run again alone")
    assert combination["status"] == "flaky"
    assert combination["counts"]["flaky"] == 1 and combination["counts"]["passed"] == 7
    assert report["summary"]["rows"]["flaky"] == 1
    liar = [fake_adapter("l", client="lie")]
    again = tmp_path / "again" / "report.json"
    assert main(matrix_argv(liar, small_set, again, "--transports", "http")) == 1
    (combination,) = json.loads(again.read_text())["combinations"]
    (row,) = [r for block in combination["results"].values() for r in block["rows"]]
    assert row["status"] == "failed"
    assert row["diagnostics"]["recheck"][0].startswith("failed: $.decision: expected")
    once = [fake_adapter("o", client="fails-once")]
    off = tmp_path / "off" / "report.json"
    assert main(matrix_argv(once, small_set, off, "--transports", "http", "--recheck", "0")) == 1
    (combination,) = json.loads(off.read_text())["combinations"]
    (row,) = [r for block in combination["results"].values() for r in block["rows"]]
    assert row["status"] == "failed" and "recheck" not in row.get("diagnostics", {})
