"""interop.known: known-failures.json, its patterns, and the known-failing status."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from interop import ROOT
from interop.grid import Combination
from interop.known import (
    KnownEntry,
    KnownFailures,
    KnownFailuresError,
    apply,
    combination_status,
    compile_pattern,
    load,
    parse,
    row_path,
)
from interop.report.document import read_outcomes, rows_of
from interop.report.html import build_html
from interop.report.junit import build_junit
from interop.report.terminal import failure_summary
from interop.results import STATUSES, Outcome, Status, errors_covered
from interop.schema import SchemaSet
from tests.test_report_diff import PASSING, document, outcome, real_report


def known(*patterns: str) -> KnownFailures:
    entries = tuple(
        KnownEntry(i, p, f"reason {i}", f"https://example.test/issues/{i}")
        for i, p in enumerate(patterns)
    )
    return KnownFailures(Path("known-failures.json"), entries)


@pytest.fixture(scope="module")
def lie(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real core run whose client lies about its first row (http and stdio)."""
    return real_report(tmp_path_factory.mktemp("known"), "lie")


# patterns -------------------------------------------------------------------------------

PATH = "core/upstream/python->typescript/http/bearer/deny-blocks"


@pytest.mark.parametrize(
    ("pattern", "matches"),
    [
        (PATH, True),
        ("core/upstream/python->typescript/http/bearer/deny-*", True),
        ("core/*/python->typescript/*/*/deny-blocks", True),
        ("core/upstream/*->typescript/http/bearer/*", True),
        ("core/**", True),
        ("**/deny-blocks", True),
        ("core/**/deny-blocks", True),
        ("**", True),
        ("core/*/deny-blocks", False),  # * never crosses a /
        ("core/*", False),
        ("core/upstream/python->typescript/http/bearer/deny", False),  # the whole path
        ("ore/upstream/python->typescript/http/bearer/deny-blocks", False),
        ("core/upstream/python->typescript/http/bearer/deny.blocks", False),  # . is literal
        ("core/upstream/python->typescript/http/*/deny-blocks", True),
        ("core/upstream/python->*/stdio/**", False),
        ("core/upstream/python->typescript/*/*/{allow-x,deny-blocks}", True),  # one of
        ("core/upstream/python->typescript/*/*/{allow-x,deny}", False),  # whole names
        ("core/upstream/python->typescript/*/*/{deny-*}", False),  # literal inside braces
    ],
)
def test_patterns(pattern: str, matches: bool) -> None:
    assert (compile_pattern(pattern).fullmatch(PATH) is not None) is matches
    assert KnownEntry(0, pattern, "r", "i").matches(PATH) is matches


def test_row_path_names_suite_set_pair_transport_auth_id() -> None:
    c = {"suite": "core", "client": "a", "server": "b", "transport": "stdio", "auth": "none"}
    assert row_path(c, "upstream", "x") == "core/upstream/a->b/stdio/none/x"


# apply ----------------------------------------------------------------------------------


def failing_paths(report: dict[str, Any]) -> list[str]:
    return [
        row_path(c, row["set"], row["id"])
        for c in report["combinations"]
        for row in rows_of(report, c)
        if row["status"] == "failed"
    ]


def test_a_matched_failure_becomes_known_failing_and_the_run_passes(lie: dict[str, Any]) -> None:
    failing = failing_paths(lie)
    assert len(failing) == 2  # one row, over http and over stdio
    row_id = failing[0].rsplit("/", 1)[1]
    before = copy.deepcopy(lie)
    marked, problems = apply(lie, known(f"core/small/fake->fake/*/none/{row_id}"), complete=True)
    assert problems == []
    assert lie == before  # the document given is left alone
    assert failing_paths(marked) == []
    for c in marked["combinations"]:
        assert c["status"] == "known-failing"
        assert c["counts"]["known-failing"] == 1 and c["counts"]["failed"] == 0
        (row,) = c["results"]["small"]["rows"]
        assert row["status"] == "known-failing"
        assert row["known"] == {
            "pattern": f"core/small/fake->fake/*/none/{row_id}",
            "reason": "reason 0",
            "issue": "https://example.test/issues/0",
        }
        assert row["error"]  # the difference is kept
    summary = marked["summary"]
    assert summary["combinations"]["known-failing"] == 2
    assert summary["combinations"]["failed"] == 0
    assert summary["rows"]["known-failing"] == 2
    assert summary["rows"]["failed"] == 0
    assert summary["rows"]["passed"] == lie["summary"]["rows"]["passed"]
    assert summary["suites"]["core"]["rows"] == summary["rows"]
    assert summary["suites"]["core"]["combinations"] == summary["combinations"]
    assert summary["rowsNotJudged"] == lie["summary"]["rowsNotJudged"]
    # applying twice changes nothing more
    again, problems = apply(marked, known(f"core/small/fake->fake/*/none/{row_id}"), complete=True)
    assert again == marked and problems == []
    # the typed results agree with the document
    for result, c in zip(read_outcomes(marked), marked["combinations"], strict=True):
        assert str(result.status) == c["status"]


def test_known_failing_is_skipped_in_junit_and_listed_by_the_terminal(lie: dict[str, Any]) -> None:
    row_id = failing_paths(lie)[0].rsplit("/", 1)[1]
    marked, _ = apply(lie, known(f"core/small/**/{row_id}"), complete=True)
    xml = build_junit(marked).decode()
    assert 'failures="0"' in xml
    assert xml.count("known failure: reason 0 (https://example.test/issues/0)") == 2
    assert failure_summary(marked) == [
        "KNOWN core/small/**/" + row_id + ": reason 0 (https://example.test/issues/0)",
        "  2 row(s) in 2 combination(s): fake -> fake [http/none], fake -> fake [stdio/none]",
    ]
    # the unmarked report still fails in JUnit
    assert 'failures="2"' in build_junit(lie).decode()


def test_a_junit_test_name_is_a_known_failures_pattern_for_its_row(lie: dict[str, Any]) -> None:
    root = ET.fromstring(build_junit(lie))
    failing = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert len(failing) == 2
    for name in failing:  # copied from a CI page as it stands
        marked, problems = apply(lie, known(str(name)), complete=True)
        assert problems == []
        rows = [r for c in marked["combinations"] for b in c["results"].values() for r in b["rows"]]
        assert [r["status"] for r in rows if r["status"] == "known-failing"] == ["known-failing"]
    assert b"known-failing" in build_html(marked)  # the page renders the status


def test_a_stale_entry_is_a_problem(lie: dict[str, Any]) -> None:
    first, second = (row["id"] for row in lie["sets"][0]["rows"][:2])
    assert failing_paths(lie)[0].endswith("/" + first)
    pattern = f"core/small/fake->fake/http/none/{second}"  # a row that passes
    marked, problems = apply(lie, known(pattern), complete=True)
    assert problems == [
        f"stale: {pattern} matches core/small/fake->fake/http/none/{second}, which passes; "
        "remove the entry"
    ]
    assert marked["summary"] == lie["summary"]  # nothing marked
    # a wide pattern: its passing rows are each stale; its failing rows are still marked
    marked, problems = apply(lie, known("core/small/fake->fake/http/**"), complete=False)
    assert len(problems) == len(lie["sets"][0]["rows"]) - 1
    assert all(p.startswith("stale: core/small/fake->fake/http/** matches ") for p in problems)
    assert failing_paths(marked) == [p for p in failing_paths(lie) if "/stdio/" in p]


def test_an_unmatched_pattern_is_a_problem_only_in_a_complete_run(lie: dict[str, Any]) -> None:
    entries = known("core/other/**", "core/small/fake->fake/http/none/no-such-row", "lifecycle/**")
    _, problems = apply(lie, entries, complete=True)
    assert problems == [  # lifecycle/**: the report has no lifecycle suite, so not unmatched
        "unmatched: core/other/** matches no row of the report; remove the entry or fix its "
        "pattern",
        "unmatched: core/small/fake->fake/http/none/no-such-row matches no row of the report; "
        "remove the entry or fix its pattern",
    ]
    _, problems = apply(lie, entries, complete=False)  # a shard, or an interrupted run
    assert problems == []


def test_an_unsupported_row_counts_as_matched_and_is_left_alone() -> None:
    doc = document(outcome({**PASSING, "r2": Status.UNSUPPORTED}))
    marked, problems = apply(doc, known("core/s/a->b/http/none/r2"), complete=True)
    assert problems == []
    assert marked == doc


def test_combination_errors_are_known_only_when_no_row_passed() -> None:
    failed = dict.fromkeys(PASSING, Status.FAILED)
    crashed = document(outcome(failed, errors=("ClientExit",)))
    marked, problems = apply(crashed, known("core/s/a->b/http/none/*"), complete=True)
    assert problems == []
    assert marked["combinations"][0]["status"] == "known-failing"
    assert 'errors="0"' in build_junit(marked).decode()
    # a leak with every row passing: the rows are no known failures, the error fails it
    leaked = document(outcome({**PASSING, "r1": Status.FAILED}, errors=("ProcessLeak",)))
    marked, problems = apply(leaked, known("core/s/a->b/http/none/r1"), complete=True)
    assert marked["combinations"][0]["status"] == "failed"
    assert marked["summary"]["combinations"]["failed"] == 1
    assert marked["summary"]["rows"]["known-failing"] == 1
    for result, c in zip(read_outcomes(marked), marked["combinations"], strict=True):
        assert str(result.status) == c["status"]
    # one failing row left unmatched keeps the combination failed
    two = document(outcome({**PASSING, "r1": Status.FAILED, "r2": Status.FAILED}))
    marked, _ = apply(two, known("core/s/a->b/http/none/r1"), complete=True)
    assert marked["combinations"][0]["status"] == "failed"
    assert marked["combinations"][0]["counts"]["known-failing"] == 1


def test_an_error_is_known_only_where_its_own_set_has_no_passing_row() -> None:
    """A client crash in one set is covered by that set's known rows, though the
    receiver probes of another set passed; an error naming no set needs the whole
    combination to have no passing row."""
    rows = [
        ("catalogue", "known-failing"),
        ("catalogue", "known-failing"),
        ("catalogue-receiver-probes", "passed"),
    ]
    assert errors_covered(["client[catalogue]"], rows)
    assert errors_covered(["client[catalogue.cat-x+2]"], rows)  # a part of it run apart
    assert not errors_covered(["client[catalogue-receiver-probes]"], rows)
    assert not errors_covered(["server-stop"], rows)
    assert errors_covered(["server-stop"], rows[:2])
    crash = {"stage": "client[catalogue]", "class": "ReportMissing", "message": "none"}
    combination: dict[str, Any] = {"status": "failed", "errors": [crash]}
    assert combination_status(combination, rows) == "known-failing"
    combination["errors"].append({"stage": "receipts", "class": "ReceiptCount", "message": "x"})
    assert combination_status(combination, rows) == "failed"


def test_the_first_matching_entry_is_recorded() -> None:
    doc = document(outcome({**PASSING, "r1": Status.FAILED}))
    marked, problems = apply(doc, known("core/**/r1", "**"), complete=True)
    row = marked["combinations"][0]["results"]["s"]["rows"][0]
    assert row["known"]["pattern"] == "core/**/r1"
    # "**" also matches the passing rows: stale
    assert [p.split(" matches ")[0] for p in problems] == ["stale: **", "stale: **"]


def test_the_status_is_known_failing_in_the_status_list() -> None:
    assert Status.KNOWN_FAILING == "known-failing"
    assert STATUSES[:5] == ("passed", "failed", "unsupported", "inapplicable", "not-run")
    assert STATUSES[5] == "known-failing"
    result = Outcome("core", Combination("a", "b", "http", "none"))
    assert result.status == Status.FAILED  # no rows


# the file -------------------------------------------------------------------------------


def test_the_checked_in_file_loads_and_fits_its_schema() -> None:
    path = ROOT / "known-failures.json"
    loaded = load(path)
    assert loaded.path == path
    data = json.loads(path.read_text())
    assert data["version"] == 1 and isinstance(data["entries"], list)
    schemas = SchemaSet(ROOT / "schemas" / "report")
    assert schemas.issue("known-failures.schema.json", data) is None


GOOD = {"pattern": "core/**", "reason": "a bug", "issue": "https://example.test/1"}


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ([], r"\(top level\): must be an object"),
        ({"entries": []}, "version: missing"),
        ({"version": 2, "entries": []}, "version: must be 1, not 2"),
        ({"version": True, "entries": []}, "version: must be 1"),
        ({"version": 1}, "entries: missing"),
        ({"version": 1, "entries": {}}, "entries: must be a list"),
        ({"version": 1, "entries": [], "extra": 1}, "extra: unknown key"),
        ({"version": 1, "entries": [GOOD, "x"]}, r"entries\[1\]: must be an object"),
        ({"version": 1, "entries": [GOOD, {**GOOD, "reason": ""}]}, r"entries\[1\]\.reason"),
        ({"version": 1, "entries": [{**GOOD, "reason": "  "}]}, r"entries\[0\]\.reason"),
        ({"version": 1, "entries": [{**GOOD, "issue": 7}]}, r"entries\[0\]\.issue: must be a"),
        (
            {"version": 1, "entries": [{"pattern": "core/**", "reason": "r"}]},
            r"entries\[0\]\.issue: missing",
        ),
        ({"version": 1, "entries": [{**GOOD, "pattern": ""}]}, r"entries\[0\]\.pattern"),
        ({"version": 1, "entries": [{**GOOD, "owner": "me"}]}, r"entries\[0\]\.owner: unknown"),
        ({"version": 1, "entries": [{**GOOD, "pattern": "core/x"}]}, r"entries\[0\]\.pattern"),
        ({"version": 1, "entries": [{**GOOD, "pattern": "a//c/d/e/f"}]}, r"entries\[0\]\.pattern"),
        ({"version": 1, "entries": [GOOD, GOOD]}, r"entries\[1\]\.pattern: repeats entries\[0\]"),
    ],
)
def test_malformed_files_are_refused_naming_the_field(
    tmp_path: Path, data: Any, named: str
) -> None:
    path = tmp_path / "known-failures.json"
    path.write_text(json.dumps(data))
    with pytest.raises(KnownFailuresError, match="^" + re.escape(str(path)) + ": " + named):
        load(path)
    if "repeats" not in named:  # the schema cannot say that: the loader alone does
        schemas = SchemaSet(ROOT / "schemas" / "report")
        assert schemas.issue("known-failures.schema.json", data) is not None


def test_unreadable_files_are_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "known-failures.json"
    with pytest.raises(KnownFailuresError, match="cannot read"):
        load(path)
    path.write_text('{"version": 1, "version": 1, "entries": []}')
    with pytest.raises(
        KnownFailuresError, match="^" + re.escape(str(path)) + ": duplicate key 'version'"
    ):
        load(path)
    path.write_text("{")
    with pytest.raises(KnownFailuresError, match="malformed JSON"):
        load(path)


def test_a_good_file_loads_in_order() -> None:
    entries = parse({"version": 1, "entries": [GOOD, {**GOOD, "pattern": "**/x"}]}, "f.json")
    assert [(e.index, e.pattern) for e in entries] == [(0, "core/**"), (1, "**/x")]
    assert entries[0].as_json() == GOOD


EXTERNAL = {
    "pattern": "core/core/upstream-py->*/*/*/tool.after.merge-*",
    "reason": "list merge refused",
    "issue": "docs/external-sdks.md",
    "adapter": "upstream-py",
    "spec": "AHP-EDIT-001 (spec/draft/base/composition.md, 'Atomic effect acceptance')",
}


def test_an_external_sdk_entry_names_its_adapter_and_the_rule(tmp_path: Path) -> None:
    (entry,) = parse({"version": 1, "entries": [EXTERNAL]}, "f.json")
    assert entry.adapter == "upstream-py" and entry.spec is not None
    assert entry.as_json()["spec"] == EXTERNAL["spec"]
    schemas = SchemaSet(ROOT / "schemas" / "report")
    assert (
        schemas.issue("known-failures.schema.json", {"version": 1, "entries": [EXTERNAL]}) is None
    )
    for broken, named in (
        ({k: v for k, v in EXTERNAL.items() if k != "spec"}, r"entries\[0\]\.spec: missing"),
        ({k: v for k, v in EXTERNAL.items() if k != "adapter"}, r"entries\[0\]\.adapter: missing"),
        ({**EXTERNAL, "spec": " "}, r"entries\[0\]\.spec: must be a non-empty string"),
    ):
        with pytest.raises(KnownFailuresError, match="^f.json: " + named):
            parse({"version": 1, "entries": [broken]}, "f.json")
        assert schemas.issue("known-failures.schema.json", {"version": 1, "entries": [broken]})
    with pytest.raises(KnownFailuresError, match="does not name the adapter 'other'"):
        parse({"version": 1, "entries": [{**EXTERNAL, "adapter": "other"}]}, "f.json")


def test_an_external_entry_is_never_unmatched_in_a_run_without_its_adapter(
    lie: dict[str, Any],
) -> None:
    (entry,) = parse({"version": 1, "entries": [EXTERNAL]}, "f.json")
    entries = KnownFailures(Path("known-failures.json"), (entry,))
    assert "upstream-py" not in lie["adapters"]
    _, problems = apply(lie, entries, complete=True)
    assert problems == []
    present = {**lie, "adapters": {**lie["adapters"], "upstream-py": {"language": "python"}}}
    _, problems = apply(present, entries, complete=True)
    assert problems and problems[0].startswith("unmatched: core/core/upstream-py->")


def test_a_pattern_in_the_old_junit_order_can_match_nothing_and_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`suite/client->server/transport/auth/set/id` (the order JUnit names once had)
    names no set of the suite: refused before the run, naming the pattern and the fix."""
    from interop.cli import main

    listed = tmp_path / "known.json"
    pattern = "core/python->go/http/none/upstream/deny-wins"
    entry = {"pattern": pattern, "reason": "r", "issue": "https://example.test/1"}
    listed.write_text(json.dumps({"version": 1, "entries": [entry]}))
    argv = ["matrix", "--suite", "core", "--known-failures", str(listed), "--quiet"]
    assert main([*argv, "--output", str(tmp_path / "out" / "report.json")]) == 2
    err = capsys.readouterr().err
    assert f"{pattern}: can match no row: 'python->go' is no set of core" in err, err
    assert not (tmp_path / "out" / "report.json").exists()


def test_a_run_of_stars_is_refused_and_any_pattern_matches_without_backtracking(
    tmp_path: Path,
) -> None:
    """The pattern that hung a 3-row run for more than 90 s (sixteen `*`, then `Z`) is
    refused when the file is read; and the matcher carries positions, never a
    backtracking search, so even `**` patterns built to blow up a regular expression
    come back at once with the right answer (a backtracking matcher would take longer
    than the test's life on this path)."""
    path = tmp_path / "known-failures.json"
    entry = {**GOOD, "pattern": "*" * 16 + "Z"}
    path.write_text(json.dumps({"version": 1, "entries": [entry]}))
    with pytest.raises(KnownFailuresError, match=r"entries\[0\]\.pattern: .*a run of three"):
        load(path)
    long_path = "core/" + "a" * 20_000
    hostile = "**a" * 12 + "**b"
    assert compile_pattern(hostile).fullmatch(long_path) is None
    assert compile_pattern(hostile).fullmatch(long_path + "b") is not None
    assert compile_pattern("*a" * 12 + "b").fullmatch("a" * 20_000) is None


@pytest.mark.parametrize("seed", range(5))
def test_the_matcher_agrees_with_a_regular_expression_on_small_cases(seed: int) -> None:
    """A reference written here from the rules (`*` any but `/`, `**` anything, braces one
    of the alternatives), on random small patterns and paths."""
    import random

    rng = random.Random(seed)
    pieces = ["*", "**", "a", "b", "/", "{a,b}", "{ab,b}"]
    for _ in range(400):
        pattern = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        text = "".join(rng.choice("ab/") for _ in range(rng.randint(0, 7)))
        regex = ""
        for token in re.split(r"(\*\*|\*|\{[^{}]*\})", pattern):
            if token == "**":
                regex += ".*"
            elif token == "*":
                regex += "[^/]*"
            elif token.startswith("{"):
                regex += "(?:" + "|".join(map(re.escape, token[1:-1].split(","))) + ")"
            else:
                regex += re.escape(token)
        expected = re.fullmatch(regex, text, re.DOTALL) is not None
        assert (compile_pattern(pattern).fullmatch(text) is not None) is expected, (pattern, text)
