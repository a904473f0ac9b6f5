"""interop.report.diff: what changed between two reports, and whether it is a regression.

Real reports come from small runs of the fake adapters (core suite, the eight
rows of a small set, http and stdio); the cases a real run rarely shows are
documents built with `build_document` from typed outcomes.
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
from interop.grid import Combination
from interop.known import KnownEntry, KnownFailures, apply
from interop.report.diff import DiffError, diff
from interop.report.document import build_document, rows_of
from interop.results import CombinationError, Outcome, RowVerdict, Status
from tests.conftest import FAKE, matrix_argv

SMALL = [
    "empty-response-preserves-input",
    "deny-blocks",
    "ask-defers-execution",
    "return-null-preserved",
    "modify-merge-shallow-null-literal",
    "modify-then-unknown-rejects-entire-response",
    "wrong-response-id",
    "invalid-task-zero-rejects-staged-message",
]


def real_report(directory: Path, client: str = "honest", *extra: str) -> dict[str, Any]:
    """A real core run of one fake adapter against itself (http and stdio, no auth)."""
    directory.mkdir(parents=True, exist_ok=True)
    scenarios = directory / "small.json"
    if not scenarios.exists():
        upstream = json.loads((ROOT / "scenarios" / "upstream" / "scenarios.json").read_text())
        chosen = [s for s in upstream["scenarios"] if s["id"] in SMALL]
        scenarios.write_text(json.dumps({"version": 1, "scenarios": chosen}))
    adapter = directory / "adapters" / client / "fake"
    adapter.mkdir(parents=True)
    manifest = {
        "language": "fake",
        "client": [sys.executable, str(FAKE), "client", "--behaviour", client],
        "server": [sys.executable, str(FAKE), "server", "--behaviour", "honest"],
        "extensions": {"receiptLog": True, "serverReuse": True, "profiles": ["strict"]},
    }
    (adapter / "adapter.json").write_text(json.dumps(manifest))
    output = directory / f"out-{client}" / "report.json"
    timeouts = ("--timeout", "20", "--startup-timeout", "20")
    main(matrix_argv([adapter], scenarios, output, *timeouts, *extra))
    document: dict[str, Any] = json.loads(output.read_text())
    return document


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    directory = tmp_path_factory.mktemp("diff")
    return {"honest": real_report(directory), "lie": real_report(directory, "lie")}


def paths_of(changes: list[Any]) -> list[str]:
    return [c.path for c in changes]


ROW = "core/small/fake->fake/http/none/"


# hand-built documents -------------------------------------------------------------------


def outcome(
    rows: dict[str, Status],
    *,
    client: str = "a",
    server: str = "b",
    transport: str = "http",
    errors: tuple[str, ...] = (),
    actuals: dict[str, Any] | None = None,
) -> Outcome:
    result = Outcome("core", Combination(client, server, transport, "none"))
    for row_id, status in rows.items():
        actual = (actuals or {}).get(row_id, {"accepted": True})
        error = None if status == Status.PASSED else f"$.accepted: {row_id} differs"
        result.rows.append(RowVerdict("s", row_id, status, {"accepted": True}, actual, None, error))
    result.errors = [CombinationError("client", kind, "it broke") for kind in errors]
    return result


def document(*outcomes: Outcome, ids: tuple[str, ...] = ("r1", "r2", "r3")) -> dict[str, Any]:
    sets = [
        {
            "suite": "core",
            "name": "s",
            "file": "s.json",
            "sha256": "0" * 64,
            "scenarios": len(ids),
            "rows": [(i, {"accepted": True}) for i in ids],
        }
    ]
    meta = {"suites": ["core"], "profile": "strict", "adapters": {}}
    return build_document(list(outcomes), meta, sets)


PASSING = {"r1": Status.PASSED, "r2": Status.PASSED, "r3": Status.PASSED}


# real reports ---------------------------------------------------------------------------


def test_a_real_report_against_itself_has_no_entries(reports: dict[str, dict[str, Any]]) -> None:
    for report in reports.values():
        result = diff(report, copy.deepcopy(report))
        assert result.empty
        assert not result.regression
        assert result.regressions == []
        assert result.lines() == ["no differences"]
        assert all(v in ([], False) for v in result.as_json().values())


def test_a_lying_client_is_a_named_regression(reports: dict[str, dict[str, Any]]) -> None:
    honest, lie = reports["honest"], reports["lie"]
    failed = sorted(
        f"core/{row['set']}/fake->fake/{c['transport']}/none/{row['id']}"
        for c in lie["combinations"]
        for row in rows_of(lie, c)
        if row["status"] == "failed"
    )
    assert failed  # the first row of each combination
    result = diff(honest, lie)
    assert paths_of(result.new_failures) == failed
    assert result.regression
    for path in failed:
        assert any(r.startswith(f"{path}: passed -> failed") for r in result.regressions)
    assert [c.as_json() for c in result.combinations_changed] == [
        {"path": "core/fake->fake/http/none", "old": "passed", "new": "failed"},
        {"path": "core/fake->fake/stdio/none", "old": "passed", "new": "failed"},
    ]
    text = "\n".join(result.lines())
    assert "new failures (2):" in text and failed[0] in text
    # and back: fixes, no regression
    back = diff(lie, honest)
    assert paths_of(back.fixes) == failed
    assert not back.regression
    assert back.new_failures == []


def test_a_known_failing_row_in_new_is_no_regression(reports: dict[str, dict[str, Any]]) -> None:
    first = reports["lie"]["sets"][0]["rows"][0]["id"]  # the row the client lies about
    pattern = f"core/small/fake->fake/*/none/{first}"
    known = KnownFailures(Path("k.json"), (KnownEntry(0, pattern, "r", "i"),))
    marked, problems = apply(reports["lie"], known, complete=True)
    assert problems == []
    result = diff(reports["honest"], marked)
    assert not result.regression
    assert result.new_failures == []
    assert {(c.old, c.new) for c in result.status_changes} == {("passed", "known-failing")}
    # the same report, the failures no longer listed: failing in both is no regression either
    assert not diff(marked, reports["lie"]).regression


def test_a_changed_digest_on_a_passing_row_is_reported_not_a_regression(
    reports: dict[str, dict[str, Any]],
) -> None:
    old = reports["honest"]
    new = copy.deepcopy(old)
    combination = next(c for c in new["combinations"] if c["transport"] == "http")
    digests = combination["results"]["small"]["digests"]
    was, digests[2] = digests[2], "0123456789ab"
    result = diff(old, new)
    third = old["sets"][0]["rows"][2]["id"]
    assert [c.as_json() for c in result.changed_actuals] == [
        {
            "path": ROW + third,
            "old": "passed",
            "new": "passed",
            "detail": f"digest {was} -> 0123456789ab",
        }
    ]
    assert not result.regression
    assert "changed actuals (1):" in result.lines()


def test_a_full_report_compares_with_a_digest_report(
    reports: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    full = real_report(tmp_path, "honest", "--full-report")
    assert diff(reports["honest"], full).empty
    assert diff(full, reports["honest"]).empty


# injected changes -----------------------------------------------------------------------


def test_each_injected_regression_is_named() -> None:
    old = document(outcome(PASSING), outcome(PASSING, client="c"))
    three = {"r1": Status.PASSED, "r3": Status.PASSED, "r4": Status.PASSED}
    new = document(
        outcome({"r1": Status.FAILED, "r3": Status.PASSED, "r4": Status.FAILED}),
        outcome(three, client="c"),
        ids=("r1", "r3", "r4"),
    )
    result = diff(old, new)
    a, c = "core/s/a->b/http/none/", "core/s/c->b/http/none/"
    assert paths_of(result.new_failures) == [a + "r1", a + "r4"]
    assert paths_of(result.rows_removed) == [a + "r2", c + "r2"]
    assert paths_of(result.rows_added) == [a + "r4", c + "r4"]
    assert result.regressions == [
        f"{a}r1: passed -> failed",
        f"{a}r2: passed -> (absent)",
        f"{a}r4: (absent) -> failed",
        f"{c}r2: passed -> (absent)",
        "core/a->b/http/none: combination passed -> failed",
    ]
    assert result.regression
    assert f"  {a}r4: (absent) -> failed: $.accepted: r4 differs" in result.lines()


def test_one_regression_at_a_time() -> None:
    path = "core/s/a->b/http/none/"
    old = document(outcome(PASSING))
    turned = diff(old, document(outcome({**PASSING, "r2": Status.FAILED})))
    assert turned.regressions == [
        f"{path}r2: passed -> failed",
        "core/a->b/http/none: combination passed -> failed",
    ]
    two = {"r1": Status.PASSED, "r3": Status.PASSED}
    removed = diff(old, document(outcome(two), ids=("r1", "r3")))
    assert removed.regressions == [f"{path}r2: passed -> (absent)"]
    assert paths_of(removed.rows_removed) == [path + "r2"]
    four = ("r1", "r2", "r3", "r4")
    added = diff(old, document(outcome({**PASSING, "r4": Status.FAILED}), ids=four))
    assert paths_of(added.rows_added) == [path + "r4"]
    assert paths_of(added.new_failures) == [path + "r4"]
    assert f"{path}r4: (absent) -> failed" in added.regressions
    fine = diff(old, document(outcome({**PASSING, "r4": Status.PASSED}), ids=four))
    assert paths_of(fine.rows_added) == [path + "r4"]
    assert not fine.regression


def test_an_unsupported_row_that_passed_is_a_regression() -> None:
    old = document(outcome(PASSING))
    new = document(outcome({**PASSING, "r3": Status.UNSUPPORTED}))
    result = diff(old, new)
    assert [(c.path, c.old, c.new) for c in result.status_changes] == [
        ("core/s/a->b/http/none/r3", "passed", "unsupported")
    ]
    assert result.regressions[0] == "core/s/a->b/http/none/r3: passed -> unsupported"


def test_a_changed_failing_actual_is_reported_not_a_regression() -> None:
    failing = {**PASSING, "r1": Status.FAILED}
    old = document(outcome(failing, actuals={"r1": {"accepted": False}}))
    new = document(outcome(failing, actuals={"r1": {"accepted": "maybe"}}))
    result = diff(old, new)
    assert paths_of(result.changed_actuals) == ["core/s/a->b/http/none/r1"]
    assert 'actual {"accepted":false} -> {"accepted":"maybe"}' in result.changed_actuals[0].detail
    assert not result.regression


def test_combinations_added_and_removed() -> None:
    old = document(outcome(PASSING), outcome(PASSING, client="gone"))
    new = document(outcome(PASSING), outcome(PASSING, client="new"))
    result = diff(old, new)
    assert [c.as_json() for c in result.combinations_added] == [
        {"path": "core/new->b/http/none", "old": None, "new": "passed"}
    ]
    assert [c.as_json() for c in result.combinations_removed] == [
        {"path": "core/gone->b/http/none", "old": "passed", "new": None}
    ]
    assert len(result.rows_added) == len(result.rows_removed) == 3
    assert result.regression  # the removed combination's rows passed
    text = result.lines()
    assert "  core/new->b/http/none: 3 row(s), its combination added" in text
    assert "  core/gone->b/http/none: 3 row(s), its combination removed" in text
    # a removed combination that never ran has no rows: reported, no regression
    skipped = Outcome("core", Combination("x", "b", "stdio", "none"), inapplicable="stdio")
    quiet = diff(document(outcome(PASSING), skipped), document(outcome(PASSING)))
    assert paths_of(quiet.combinations_removed) == ["core/x->b/stdio/none"]
    assert not quiet.regression


def test_a_combination_error_with_every_row_passing_is_a_regression() -> None:
    old = document(outcome(PASSING))
    new = document(outcome(PASSING, errors=("ProcessLeak",)))
    result = diff(old, new)
    assert result.new_failures == []
    assert result.regressions == ["core/a->b/http/none: combination passed -> failed (ProcessLeak)"]


def test_an_altered_expectation_is_named() -> None:
    old = document(outcome(PASSING))
    new = copy.deepcopy(old)
    new["sets"][0]["rows"][0]["expected"] = {"accepted": False}
    new["combinations"][0]["results"]["s"]["digests"][0] = None
    new["combinations"][0]["results"]["s"]["rows"].append(
        {"id": "r1", "status": "failed", "actual": {}, "adapterStatus": None, "error": "$: no"}
    )
    result = diff(old, new)
    assert [c.detail for c in result.new_failures] == ["$: no; its expected changed"]


@pytest.mark.parametrize(
    ("broken", "named"),
    [
        ({"reportVersion": 2}, "reportVersion is 2, not 3"),
        ({"reportVersion": None}, "reportVersion is None"),
        ({"combinations": None}, "combinations is missing"),
        ({"sets": "x"}, "sets is missing or not a list"),
    ],
)
def test_other_versions_are_refused(broken: dict[str, Any], named: str) -> None:
    good = document(outcome(PASSING))
    bad = {**good, **broken}
    with pytest.raises(DiffError, match="new report: " + named):
        diff(good, bad)
    with pytest.raises(DiffError, match="old report: " + named):
        diff(bad, good)
    with pytest.raises(DiffError, match="old report: not a JSON object"):
        diff([], good)  # type: ignore[arg-type]


def test_notes_an_incomplete_report() -> None:
    old = document(outcome(PASSING))
    new = {**old, "incomplete": True}
    result = diff(old, new)
    assert result.empty and not result.regression
    assert result.lines()[0].startswith("note: the new report is incomplete")
