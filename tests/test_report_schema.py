"""schemas/report/report.schema.json: real reports fit it, broken ones do not.

Real reports come from small runs of the fake adapters (passing, failing,
`--full-report`); the statuses a real run rarely has (not-run, inapplicable,
known-failing, unsupported) are documents built with `build_document`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.grid import Combination
from interop.known import KnownEntry, KnownFailures, apply
from interop.report.document import build_document
from interop.results import ERRORS, STATUSES, Outcome, Status
from interop.schema import SchemaSet, compile_ecma
from tests.test_report_diff import PASSING, document, outcome, real_report

REPORT = "report.schema.json"


@pytest.fixture(scope="module")
def schemas() -> SchemaSet:
    return SchemaSet(ROOT / "schemas" / "report")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    directory = tmp_path_factory.mktemp("schema")
    return {
        "honest": real_report(directory),
        "lie": real_report(directory, "lie"),
        "crash": real_report(directory, "crash"),
        "full": real_report(directory / "full", "honest", "--full-report"),
    }


def test_real_reports_fit(schemas: SchemaSet, reports: dict[str, dict[str, Any]]) -> None:
    assert reports["honest"]["summary"]["combinations"]["passed"] == 2
    assert reports["lie"]["summary"]["rows"]["failed"] == 2
    assert any(c["errors"] for c in reports["crash"]["combinations"])
    for name, report in reports.items():
        assert schemas.issue(REPORT, report) is None, name


def test_a_real_report_with_its_known_failures_fits(
    schemas: SchemaSet, reports: dict[str, dict[str, Any]]
) -> None:
    entry = KnownEntry(0, "core/small/fake->fake/**", "the fake lies", "https://example.test/1")
    marked, _ = apply(reports["lie"], KnownFailures(Path("k"), (entry,)), complete=True)
    assert marked["summary"]["combinations"]["known-failing"] == 2
    assert schemas.issue(REPORT, marked) is None


def built() -> dict[str, Any]:
    """Every status a combination or a row can have, in one document."""
    combination = Combination("a", "b", "stdio", "bearer")
    never = Outcome("core", combination, inapplicable="stdio carries no authentication")
    never.skipped_rows = 3
    interrupted = Outcome("core", Combination("a", "b", "http", "bearer"), not_run="interrupted")
    interrupted.skipped_rows = 3
    rows = {"r1": Status.UNSUPPORTED, "r2": Status.FAILED, "r3": Status.NOT_RUN}
    doc = document(
        outcome(PASSING),
        outcome(rows, client="c"),
        outcome(dict.fromkeys(PASSING, Status.FAILED), client="d", errors=("ClientExit",)),
        never,
        interrupted,
    )
    known = KnownFailures(Path("k"), (KnownEntry(0, "core/s/c->b/**", "r", "i"),))
    marked, problems = apply(doc, known, complete=True)
    assert problems == []
    return {**marked, "logDir": "report-logs", "revision": "abc", "shard": {"index": 1}}


def test_hand_built_statuses_fit(schemas: SchemaSet) -> None:
    doc = built()
    statuses = {c["status"] for c in doc["combinations"]}
    assert statuses == {"passed", "known-failing", "failed", "inapplicable", "not-run"}
    rows = {
        r["status"]
        for c in doc["combinations"]
        for r in c["results"].get("s", {"rows": []})["rows"]
    }
    assert rows == {"unsupported", "known-failing", "not-run", "failed"}
    assert doc["summary"]["rowsNotJudged"]["inapplicable"] == 3
    assert schemas.issue(REPORT, doc) is None
    # the optional keys others add, each alone
    for key, value in [("coverage", {}), ("known", {"file": "known-failures.json"})]:
        assert schemas.issue(REPORT, {**doc, key: value}) is None
    assert schemas.issue(REPORT, {**doc, "selection": {"scenario": ["x"], "tag": []}}) is None


def test_a_report_made_before_known_failing_fits(schemas: SchemaSet) -> None:
    doc = document(outcome(PASSING))

    def drop(counts: dict[str, Any]) -> None:
        counts.pop("known-failing")

    drop(doc["summary"]["combinations"])
    drop(doc["combinations"][0]["counts"])
    assert schemas.issue(REPORT, doc) is None


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = doc
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if value is KeyError:
            del target[int(last) if isinstance(target, list) else last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def _passed(doc: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in doc["combinations"] if c["status"] == "passed")


def _failed_row(doc: dict[str, Any]) -> dict[str, Any]:
    c = next(c for c in doc["combinations"] if c["client"] == "d")
    row: dict[str, Any] = c["results"]["s"]["rows"][0]
    return row


def _known_row(doc: dict[str, Any]) -> dict[str, Any]:
    c = next(c for c in doc["combinations"] if c["client"] == "c")
    return next(r for r in c["results"]["s"]["rows"] if r["status"] == "known-failing")


BROKEN: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("version 2", _set("reportVersion", 2), "$.reportVersion"),
    ("no summary", _set("summary", KeyError), "$"),
    ("no summary.suites", _set("summary.suites", KeyError), "$.summary"),
    ("an unknown key", _set("extra", 1), "$"),
    ("incomplete as text", _set("incomplete", "no"), "$.incomplete"),
    ("an unknown status", _set("combinations.0.status", "shaky"), "$.combinations[0].status"),
    ("a negative count", _set("summary.rows.passed", -1), "$.summary.rows.passed"),
    ("an unknown count", _set("combinations.0.counts.skipped", 0), "$.combinations[0].counts"),
    (
        "a long digest",
        lambda d: _passed(d)["results"]["s"]["digests"].__setitem__(0, "0" * 13),
        "digests[0]",
    ),
    ("a bad sha256", _set("sets.0.sha256", "XYZ"), "$.sets[0].sha256"),
    ("an adapter without blind", _set("adapters", {"a": {"language": "x"}}), "$.adapters.a"),
    (
        "an error without class",
        lambda d: next(c for c in d["combinations"] if c["errors"])["errors"][0].pop("class"),
        "errors[0]",
    ),
    (
        "an error class in lower case",
        lambda d: next(c for c in d["combinations"] if c["errors"])["errors"][0].update(
            {"class": "clientExit"}
        ),
        "errors[0].class",
    ),
    ("a known-failing row without known", lambda d: _known_row(d).pop("known"), "rows"),
    ("a failed row with known", lambda d: _failed_row(d).update(known=_known_row(d)["known"]), ""),
    ("a failed row without actual", lambda d: _failed_row(d).pop("actual"), "rows[0]"),
    ("a failed row with a digest", lambda d: _failed_row(d).update(digest="0" * 12), "rows[0]"),
    ("a revision as a number", _set("revision", 3), "$.revision"),
]


@pytest.mark.parametrize(("what", "change", "where"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_reports_are_rejected(
    schemas: SchemaSet, what: str, change: Callable[[dict[str, Any]], None], where: str
) -> None:
    doc = copy.deepcopy(built())
    change(doc)
    issue = schemas.issue(REPORT, doc)
    assert issue is not None, what
    assert where in issue.path, (what, issue)


def test_the_schema_lists_every_status_and_count(schemas: SchemaSet) -> None:
    defs = schemas.documents[REPORT]["$defs"]
    assert defs["status"]["enum"] == [str(s) for s in STATUSES]
    assert list(defs["counts"]["properties"]) == [str(s) for s in STATUSES]
    assert all(
        set(doc) <= set(defs["counts"]["properties"]) for doc in [document()["summary"]["rows"]]
    )
    assert "known-failing" not in defs["counts"]["required"]


def test_every_error_class_fits_the_class_pattern(schemas: SchemaSet) -> None:
    pattern = schemas.documents[REPORT]["$defs"]["error"]["properties"]["class"]["pattern"]
    assert all(compile_ecma(pattern).search(name) for name in ERRORS)


def test_the_build_document_keys_are_the_schema_keys(schemas: SchemaSet) -> None:
    doc = build_document([], {"suites": [], "profile": "strict", "adapters": {}}, [])
    schema = schemas.documents[REPORT]
    assert set(schema["required"]) == set(doc)
    assert schemas.issue(REPORT, doc) is None


@pytest.mark.parametrize("folder", ["draft", "contract", "report"])
def test_every_schema_of_ours_is_valid_draft_2020_12(folder: str) -> None:
    """A run skips the metaschema check (SchemaSet(check=False)); this does it."""
    schemas = SchemaSet(ROOT / "schemas" / folder, check=True)
    assert schemas.names()


def test_the_metaschema_check_refuses_a_broken_schema(tmp_path: Path) -> None:
    (tmp_path / "broken.schema.json").write_text('{"$id": "https://x.test/b", "type": 5}')
    SchemaSet(tmp_path)  # a run does not look
    with pytest.raises(Exception, match="is not valid under any of the given schemas"):
        SchemaSet(tmp_path, check=True)
