"""A passed row's digest leaves out what a peer allocates in each run (an upload's ref), so
the same inputs give the same report; everything else still changes it."""

from __future__ import annotations

from interop.results import RowVerdict, Status


def _digest(actual: object, allocated: frozenset[str] = frozenset()) -> str:
    row = RowVerdict("set", "row", Status.PASSED, None, actual, allocated=allocated)
    return str(row.as_json()["digest"])


def test_an_allocated_ref_leaves_the_digest_alone_and_the_rest_does_not() -> None:
    refs = frozenset({"ref"})
    first = {"steps": [{"op": "upload", "ref": "urn:uuid:1", "status": 201}]}
    second = {"steps": [{"op": "upload", "ref": "urn:uuid:2", "status": 201}]}
    other = {"steps": [{"op": "upload", "ref": "urn:uuid:1", "status": 200}]}
    assert _digest(first, refs) == _digest(second, refs)
    assert _digest(first, refs) != _digest(other, refs)
    assert _digest(first) != _digest(second)  # a row that declares nothing is hashed whole


def test_a_failed_row_keeps_its_actual_whole() -> None:
    actual = {"ref": "urn:uuid:1"}
    row = RowVerdict("set", "row", Status.FAILED, None, actual, allocated=frozenset({"ref"}))
    assert row.as_json()["actual"] == actual
