"""Sharding: the split (interop.shard) and combining shard reports (interop.report.combine).

Combining every shard's report must give the unsharded run's report byte for
byte, and inputs that do not fit together must be refused by name.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from interop import shard
from interop.cli import main
from interop.grid import Combination, expand
from interop.report.combine import CombineError, combine, render, summarise
from interop.report.document import build_document
from interop.results import CombinationError, Outcome, RowVerdict, Status
from tests.conftest import matrix_argv

# --- the split -----------------------------------------------------------------------------


def _items(seed: int, size: int) -> list[tuple[str, float]]:
    chance = random.Random(seed)
    return [(f"job-{i:03}", float(chance.choice([0, 1, 1, 2, 3, 5, 8, 13]))) for i in range(size)]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_partition_is_exact_deterministic_and_balanced(count: int, seed: int) -> None:
    items = _items(seed, 40)
    shards = shard.partition(items, count)
    assert len(shards) == count
    keys = [key for part in shards for key in part]
    assert sorted(keys) == sorted(key for key, _ in items)  # every key exactly once
    assert shard.partition(list(reversed(items)), count) == shards  # the input order is no input
    assert shard.partition(items, count) == shards
    loads = shard.loads(items, shards)
    assert max(loads) - min(loads) <= max(cost for _, cost in items)


def test_partition_of_one_is_everything_costliest_first() -> None:
    items = [("b", 1.0), ("a", 1.0), ("c", 4.0), ("d", 0.0)]
    assert shard.partition(items, 1) == [["c", "a", "b", "d"]]


def test_partition_is_longest_first_ties_to_the_lowest_index() -> None:
    items = [("a", 3.0), ("b", 2.0), ("c", 2.0), ("d", 1.0)]
    # a -> 0; b -> 1; c -> 1 (2 < 3); d -> 0 (3 < 4)
    assert shard.partition(items, 2) == [["a", "d"], ["b", "c"]]
    assert shard.partition([("x", 1.0)], 3) == [["x"], [], []]


def test_partition_spreads_items_of_no_cost() -> None:
    shards = shard.partition([(f"k{i}", 0.0) for i in range(7)], 3)
    assert [len(part) for part in shards] == [3, 2, 2]
    assert shards[0] == ["k0", "k3", "k6"]


def test_partition_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        shard.partition([("a", 1.0)], 0)
    with pytest.raises(ValueError, match="twice"):
        shard.partition([("a", 1.0), ("a", 2.0)], 2)
    with pytest.raises(ValueError, match="not negative"):
        shard.partition([("a", -1.0)], 2)
    with pytest.raises(ValueError, match="finite"):
        shard.partition([("a", float("nan"))], 2)


@pytest.mark.parametrize(
    ("text", "parsed"), [("1/1", (1, 1)), ("2/3", (2, 3)), ("10/10", (10, 10))]
)
def test_parse(text: str, parsed: tuple[int, int]) -> None:
    assert shard.parse(text) == parsed


@pytest.mark.parametrize(
    "text", ["0/2", "3/2", "1/0", "0/0", "", "1", "a/b", "1/2/3", " 1/2", "-1/2"]
)
def test_parse_refuses_naming_the_option(text: str) -> None:
    with pytest.raises(ValueError, match="--shard"):
        shard.parse(text)


def test_shard_plan_covers_every_key_once_and_keeps_jobs_whole() -> None:
    jobs = [([f"core/c{i}->s/http/none", f"core/d{i}->s/http/none"], float(i)) for i in range(7)]
    jobs += [([f"lifecycle/c{i}->s/stdio/none"], 1.5) for i in range(5)]
    inapplicable = [f"core/c{i}->s/stdio/bearer" for i in range(5)]
    every = {key for keys, _ in jobs for key in keys} | set(inapplicable)
    plans = [shard.shard_plan(jobs, inapplicable, k, 3) for k in (1, 2, 3)]
    assert sorted(key for plan in plans for key in plan) == sorted(every)
    for keys, _ in jobs:
        assert sum(set(keys) <= plan for plan in plans) == 1
    assert [len(set(inapplicable) & plan) for plan in plans] == [2, 2, 1]
    assert shard.shard_plan(jobs, inapplicable, 1, 1) == every
    with pytest.raises(ValueError, match="planned twice"):
        shard.shard_plan([(["core/x"], 1.0)], ["core/x"], 1, 2)
    with pytest.raises(ValueError, match="--shard"):
        shard.shard_plan(jobs, inapplicable, 4, 3)


def test_shard_meta() -> None:
    key = shard.grid_key("core", Combination("a", "b", "http", "none"))
    assert key == "core/a->b/http/none"
    assert shard.shard_meta(2, 3, ["z", key]) == {"index": 2, "count": 3, "grid": [key, "z"]}
    with pytest.raises(ValueError, match="twice"):
        shard.shard_meta(1, 2, [key, key])


# --- combining documents built from outcomes ------------------------------------------------

SETS = [
    {
        "suite": "core",
        "name": "small",
        "file": "scenarios/small.json",
        "sha256": "ab" * 32,
        "scenarios": 3,
        "rows": [("r1", {"decision": "allow"}), ("r2", {"rejected": True}), ("r3", None)],
    },
    {
        "suite": "lifecycle",
        "name": "steps",
        "file": "scenarios/steps.json",
        "sha256": "cd" * 32,
        "scenarios": 2,
        "rows": [("s1", {"ok": 1}), ("s2", {"ok": 2})],
    },
]
META = {
    "suites": ["core", "lifecycle"],
    "profile": "strict",
    "adapters": {
        "a": {"language": "python", "blind": False},
        "b": {"language": "typescript", "blind": True},
    },
}
ROW_COUNT = {"core": 3, "lifecycle": 2}


def _rows(suite: str, statuses: list[Status], seed: int) -> list[RowVerdict]:
    scenario_set = next(s for s in SETS if s["suite"] == suite)
    rows = []
    for (row_id, expected), status in zip(scenario_set["rows"], statuses, strict=False):
        actual = expected if status == Status.PASSED else {"seed": seed}
        error = None if status == Status.PASSED else f"$: {status} {seed}"
        rows.append(RowVerdict(scenario_set["name"], row_id, status, expected, actual, "ok", error))
    return rows


def _outcomes() -> list[Outcome]:
    """Every kind of outcome: passed, failing rows, errors, inapplicable, not-run, both suites."""
    kinds = [
        [Status.PASSED] * 3,
        [Status.PASSED, Status.FAILED, Status.PASSED],
        [Status.UNSUPPORTED, Status.PASSED, Status.PASSED],
        [Status.NOT_RUN] * 3,  # not-run by its rows: no rows skipped
        [Status.PASSED, Status.INAPPLICABLE],
    ]
    outcomes: list[Outcome] = []
    number = 0
    for suite in ("core", "lifecycle"):
        for combination in expand(["a", "b"], ["a", "b"], ["http", "stdio"], ["none", "bearer"]):
            number += 1
            outcome = Outcome(suite, combination, seconds=number / 10)
            if combination.transport == "stdio" and combination.auth != "none":
                outcome.inapplicable = "stdio runs with auth none only"
                outcome.skipped_rows = ROW_COUNT[suite]
            elif number % 7 == 0:
                outcome.not_run = "the run was interrupted before this combination finished"
                outcome.skipped_rows = ROW_COUNT[suite]
            elif number % 5 == 0:
                outcome.errors = [CombinationError("client", "ClientTimeout", f"late {number}")]
            else:
                outcome.rows = _rows(suite, kinds[number % len(kinds)], number)
            outcomes.append(outcome)
    return outcomes


def _sharded(
    outcomes: list[Outcome], count: int, *, full: bool = False, interrupted: int = 0
) -> list[dict[str, Any]]:
    """Each shard's document, as a sharded run would build it."""
    key = {id(o): shard.grid_key(o.suite, o.combination) for o in outcomes}
    ran = [o for o in outcomes if o.inapplicable is None]
    jobs = [([key[id(o)]], 1.0 + len(o.rows)) for o in ran]
    inapplicable = [key[id(o)] for o in outcomes if o.inapplicable is not None]
    grid = list(key.values())
    documents = []
    for index in range(1, count + 1):
        mine = shard.shard_plan(jobs, inapplicable, index, count)
        chosen = [o for o in outcomes if key[id(o)] in mine]
        document = build_document(chosen, META, SETS, incomplete=index == interrupted, full=full)
        document["shard"] = shard.shard_meta(index, count, grid)
        # each its own copy, as if read from its own file
        documents.append(copy.deepcopy({**document, "logDir": f"shard{index}-logs"}))
    return documents


@pytest.mark.parametrize("count", [1, 2, 3, 7])
@pytest.mark.parametrize("full", [False, True])
def test_combined_outcome_documents_are_the_unsharded_one(count: int, full: bool) -> None:
    outcomes = _outcomes()
    whole = {**build_document(outcomes, META, SETS, full=full), "logDir": "shard1-logs"}
    documents = _sharded(outcomes, count, full=full)
    assert render(combine(documents)) == render(whole)
    assert render(combine(list(reversed(documents)))) == render(
        {**whole, "logDir": f"shard{count}-logs"}
    )
    assert all("shard" in d for d in documents)  # the inputs are left as they were


def test_combined_is_incomplete_when_any_shard_is() -> None:
    outcomes = _outcomes()
    whole = {**build_document(outcomes, META, SETS, incomplete=True), "logDir": "shard1-logs"}
    assert render(combine(_sharded(outcomes, 3, interrupted=2))) == render(whole)
    assert combine(_sharded(outcomes, 3))["incomplete"] is False


def test_combined_skipped_rows_are_counted_as_the_run_counts_them() -> None:
    combined = combine(_sharded(_outcomes(), 3))
    summary = combined["summary"]
    inapplicable = sum(
        c["status"] == "inapplicable" and "reason" in c for c in combined["combinations"]
    )
    assert inapplicable == 8
    assert summary["rowsNotJudged"]["inapplicable"] == 4 * 3 + 4 * 2
    assert summary["suites"]["lifecycle"]["rowsNotJudged"]["inapplicable"] == 4 * 2
    assert summary["rowsNotJudged"]["not-run"] > 0


# --- refusals ------------------------------------------------------------------------------


def _changed(change: Callable[[list[dict[str, Any]]], Any]) -> list[dict[str, Any]]:
    documents = copy.deepcopy(_sharded(_outcomes(), 3))
    change(documents)
    return documents


def _set(documents: list[dict[str, Any]], position: int, key: str, value: Any) -> None:
    documents[position][key] = value


def _move_first(documents: list[dict[str, Any]], source: int, target: int, keep: bool) -> None:
    entry = documents[source]["combinations"][0]
    documents[target]["combinations"].append(entry)
    if not keep:
        documents[source]["combinations"].pop(0)


REFUSALS: list[tuple[str, Callable[[list[dict[str, Any]]], Any], str]] = [
    ("no shard", lambda d: d[1].pop("shard"), r"document 2 is not a shard report"),
    (
        "not a report",
        lambda d: d.__setitem__(0, {"reportVersion": 3}),
        r"document 1 is not a report",
    ),
    ("bad shard", lambda d: _set(d, 2, "shard", {"index": 1}), r"document 3 is not a shard report"),
    ("version", lambda d: _set(d, 1, "reportVersion", 2), r"different reportVersions"),
    (
        "old version",
        lambda d: [_set(d, i, "reportVersion", 2) for i in range(3)],
        r"reportVersion 2: this harness combines reportVersion 3 only",
    ),
    ("suites", lambda d: _set(d, 1, "suites", ["core"]), r"shard 2/3 differs .* in its suites"),
    ("profile", lambda d: _set(d, 2, "profile", "compat"), r"in its profile: .*strict.*compat"),
    (
        "language",
        lambda d: d[1]["adapters"]["b"].__setitem__("language", "rust"),
        r"in its adapters: adapters\.b\.language .*typescript.* against .*rust",
    ),
    (
        "adapter set",
        lambda d: d[1]["adapters"].pop("b"),
        r"in its adapters: adapters \['a', 'b'\] against \['a'\]",
    ),
    (
        "set hash",
        lambda d: d[2]["sets"][0].__setitem__("sha256", "00" * 32),
        r"in its sets: set core/small: sha256",
    ),
    (
        "set file",
        lambda d: d[2]["sets"][1].__setitem__("file", "elsewhere.json"),
        r"in its sets: set lifecycle/steps: file",
    ),
    (
        "set rows",
        lambda d: d[1]["sets"][0]["rows"].pop(),
        r"in its sets: set core/small: rows",
    ),
    (
        "set names",
        lambda d: d[1]["sets"][0].__setitem__("name", "big"),
        r"in its sets: sets \['core/small', 'lifecycle/steps'\] against \['core/big'",
    ),
    ("counts", lambda d: d[2]["shard"].__setitem__("count", 4), r"different shard counts \(3, 4\)"),
    ("twice", lambda d: d.__setitem__(2, copy.deepcopy(d[1])), r"shard 2/3 is given twice"),
    ("missing", lambda d: d.pop(1), r"shards missing: 2/3"),
    ("range", lambda d: d[0]["shard"].__setitem__("index", 4), r"shard 4/3 is out of range"),
    (
        "overlap",
        lambda d: _move_first(d, 0, 1, keep=True),
        r"is in shard 2/3 and in shard 1/3: shards overlap",
    ),
    (
        "grid gap",
        lambda d: _drop_first(d, 0),
        r"1 combinations of the declared grid are in no shard: core/",
    ),
    (
        "outside grid",
        lambda d: _rename_first(d, 2, "c"),
        r"shard 3/3 has the combination core/c->.*, which is not in the declared grid",
    ),
    (
        "grids differ",
        lambda d: d[1]["shard"]["grid"].pop(),
        r"shard 2/3 declares another grid than shard 1/3",
    ),
    (
        "summary",
        lambda d: d[1]["summary"]["rowsNotJudged"].__setitem__("inapplicable", 0),
        r"shard 2/3: its summary does not match its combinations",
    ),
]


def _drop_first(documents: list[dict[str, Any]], position: int) -> None:
    documents[position]["combinations"].pop(0)
    documents[position]["summary"] = combine_summary(documents[position])


def _rename_first(documents: list[dict[str, Any]], position: int, client: str) -> None:
    documents[position]["combinations"][0]["client"] = client


def combine_summary(document: dict[str, Any]) -> dict[str, Any]:
    return summarise(document["suites"], document["sets"], document["combinations"])


@pytest.mark.parametrize(
    ("change", "message"), [(c, m) for _, c, m in REFUSALS], ids=[n for n, _, _ in REFUSALS]
)
def test_combine_refuses_what_does_not_fit(
    change: Callable[[list[dict[str, Any]]], Any], message: str
) -> None:
    documents = _changed(change)
    with pytest.raises(CombineError, match=message):
        combine(documents)


def test_combine_refuses_nothing_and_mixed_full_reports() -> None:
    with pytest.raises(CombineError, match="no shard reports"):
        combine([])
    outcomes = _outcomes()
    mixed = [*_sharded(outcomes, 2)[:1], *_sharded(outcomes, 2, full=True)[1:]]
    with pytest.raises(
        CombineError, match="shard 2/2 was written with --full-report, shard 1/2 without"
    ):
        combine(mixed)


# --- end to end: real runs with fake adapters -------------------------------------------------


def test_combined_runs_are_the_unsharded_report_byte_for_byte(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    dirs = [fake_adapter("a"), fake_adapter("b", client="lie")]  # b fails a row as client
    grid = ("--servers", "a", "b", "--transports", "http", "stdio", "--timeout", "10")

    def run(name: str, *clients: str) -> Path:
        output = tmp_path / name / "report.json"  # the same name: the same logDir
        main(matrix_argv(dirs, small_set, output, "--clients", *clients, *grid))
        return output

    whole = run("whole", "a", "b").read_text()
    report = json.loads(whole)
    keys = [
        shard.grid_key("core", Combination(c, s, t, "none"))
        for c in "ab"
        for s in "ab"
        for t in ("http", "stdio")
    ]
    documents = []
    for index, client in enumerate("ab", 1):
        document = json.loads(run(f"shard{index}", client).read_text())
        document["shard"] = shard.shard_meta(index, 2, keys)
        if "revision" in report:  # others may commit in this checkout while the test runs
            document["revision"] = report["revision"]
        documents.append(document)
    assert report["summary"]["combinations"]["failed"] == 4  # the failing rows are in it
    assert report["summary"]["combinations"]["passed"] == 4
    # as `report combine` does: the whole run's coverage from the combined report
    assert render(_with_coverage(combine(documents))) == whole
    assert render(_with_coverage(combine(documents[::-1]))) == whole

    documents[1]["profile"] = "compat"
    with pytest.raises(CombineError, match="profile"):
        combine(documents)


def test_summary_recounts_a_real_report_with_inapplicable_combinations(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    output = tmp_path / "out" / "report.json"
    extra = ("--transports", "stdio", "--auth", "none", "bearer", "--timeout", "10")
    main(
        matrix_argv([fake_adapter("a"), fake_adapter("b", client="lie")], small_set, output, *extra)
    )
    report = json.loads(output.read_text())
    assert report["summary"]["rowsNotJudged"]["inapplicable"] == 4 * 8
    assert report["summary"]["combinations"]["failed"] == 2
    assert summarise(report["suites"], report["sets"], report["combinations"]) == report["summary"]


def _with_coverage(document: dict[str, Any]) -> dict[str, Any]:
    from interop import ROOT
    from interop.coverage import coverage

    return {**document, "coverage": coverage(document, ROOT)}
