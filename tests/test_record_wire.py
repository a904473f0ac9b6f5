"""A step server whose record lies is charged on the wire's evidence, not its honest client.

tests/fakes/lifecycle_breaker.py runs our Python lifecycle server behind a control
proxy that rewrites its record (`GET /receipts`): a `replied` entry deleted, an
`acquired` mark duplicated, a received message changed. Read alone, each of those
records blames the client (docs/blame.md, "the server's record"). The recheck runs
the failed rows again through recording relays (interop/suites/wire.py); the
record then contradicts what crossed, and the server alone is charged.

The unit tests below hold the contradiction rules to hand-made exchanges.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from interop.cli import main
from interop.runtime.capture import Frame
from interop.suites.wire import contradictions
from tests.conftest import named

BREAKER = Path(__file__).parent / "fakes" / "lifecycle_breaker.py"
UPSTREAM = Path(__file__).parents[1] / "scenarios" / "upstream" / "lifecycle-scenarios.json"
LIES = {  # break -> the row it plants it in (tests/fakes/lifecycle_breaker.py BREAKS)
    "attempt-mismatch": "cancel-after-reply-before-acceptance",
    "acquired-mismatch": "duplicate-reply-ignored",
    "received-mismatch": "cancelled-boundary-observed",
}


def _breaker(root: Path) -> Path:
    directory = root / "breaker"
    directory.mkdir(parents=True)
    command = [sys.executable, str(BREAKER)]
    manifest = {
        "language": "python",
        "client": [*command, "core", "client"],
        "server": [*command, "core", "server"],
        "lifecycleServer": [*command, "server", "--break", ",".join(LIES)],
        "lifecycleClient": [*command, "client"],
        "extensions": {"blind": True, "profiles": ["strict", "compat"]},
    }
    (directory / "adapter.json").write_text(json.dumps(manifest))
    return directory


def _run(tmp_path: Path, name: str, *extra: str) -> dict[str, Any]:
    output = tmp_path / name / "report.json"
    argv = ["matrix", "--suite", "lifecycle", "--scenarios", str(UPSTREAM), "--quiet"]
    argv += ["--output", str(output), "--auth", "none", "--transports", "http"]
    argv += ["--clients", "python", "--servers", "breaker"]
    argv += ["--adapter-dir", named(_breaker(tmp_path / name))]
    assert main([*argv, *extra]) == 1
    report: dict[str, Any] = json.loads(output.read_text())
    return report


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        row["id"]: row
        for combination in report["combinations"]
        for block in combination["results"].values()
        for row in block["rows"]
        if row["status"] == "failed"
    }


def test_a_record_the_wire_contradicts_is_charged_to_the_server_not_the_client(
    tmp_path: Path,
) -> None:
    report = _run(tmp_path, "wire")
    failed = _rows(report)
    assert sorted(failed) == sorted(LIES.values())
    for row in failed.values():
        assert row["diagnostics"]["classes"][0] == "RecordContradictsWire", row
        assert row["diagnostics"]["wire"], row
        capture = tmp_path / "wire" / row["diagnostics"]["capture"]
        channels = {frame["channel"] for frame in json.loads(capture.read_text())}
        assert channels >= {"event", "control"}, channels
    charged = {(c["row"], c["judges"], tuple(c["adapters"])) for c in report["coverage"]["charges"]}
    assert charged == {(row, "server", ("breaker",)) for row in LIES.values()}
    client = report["coverage"]["byAdapter"]["python"]["client"]["requirements"]
    assert not [r for r, verdict in client.items() if verdict in ("failed", "undetermined")]

    # Without the recheck's wire, the same lies blame the honest client.
    blind = _run(tmp_path, "blind", "--recheck", "0")
    blamed = {c["row"] for c in blind["coverage"]["charges"] if c["adapters"] == ["python"]}
    assert blamed == set(LIES.values()), blamed


def _frame(channel: str, path: str, body: Any, arrived: int, done: int, status: int = 200) -> Frame:
    frame = Frame("POST", path, [], json.dumps(body).encode(), status)
    frame.channel, frame.arrived, frame.done = channel, arrived, done
    return frame


def _intercept(ident: str, value: str = "x") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": "hooks/intercept", "params": {"v": value}}


def _mark(kind: str, ident: str) -> dict[str, Any]:
    return {"scenario": "s", "kind": kind, "id": ident}


def test_a_record_true_to_the_wire_has_no_contradiction() -> None:
    frames = [
        _frame("event", "/", _intercept("s:a"), 10, 20),
        _frame("control", "/mark", _mark("acquired", "s:a"), 30, 40),
        _frame("event", "/", _intercept("s:b"), 50, 0),  # still open when the record was read
    ]
    record = [
        {"kind": "received", "id": "s:a", "message": _intercept("s:a")},
        {"kind": "replied", "id": "s:a"},
        {"scenario": "s", "kind": "acquired", "id": "s:a"},
        {"kind": "received", "id": "s:b", "message": _intercept("s:b")},
    ]
    assert contradictions(record, frames, read_at=60, scenario_ids={"s:a", "s:b"}) == []


def test_each_kind_of_lie_is_named() -> None:
    frames = [
        _frame("event", "/", _intercept("s:a"), 10, 20),
        _frame("control", "/mark", _mark("acquired", "s:a"), 30, 40),
    ]
    true = [
        {"kind": "received", "id": "s:a", "message": _intercept("s:a")},
        {"kind": "replied", "id": "s:a"},
        {"scenario": "s", "kind": "acquired", "id": "s:a"},
    ]

    def said(record: list[dict[str, Any]]) -> list[str]:
        found = contradictions(record, frames, read_at=60, scenario_ids={"s:a"})
        return [c.message for c in found]

    assert "no request of that id carried" in " ".join(
        said([{**true[0], "message": _intercept("s:a", "y")}, *true[1:]])
    )
    assert "0 replied for s:a" in " ".join(said([true[0], true[2]]))
    assert "2 acquired mark(s)" in " ".join(said([*true, true[2]]))
    assert "had ended before" in " ".join(said([true[2], true[0], true[1]]))
    # an answer that came back after the record was read is not held against it
    late = contradictions(true[:1], frames[:1], read_at=15, scenario_ids={"s:a"})
    assert late == []


def test_overlapping_exchanges_of_one_id_are_not_ordered() -> None:
    frames = [
        _frame("event", "/", _intercept("s:a"), 10, 50),
        _frame("event", "/", _intercept("s:a"), 20, 30),
        _frame("control", "/mark", _mark("acquired", "s:a"), 35, 40),
    ]
    # the server took the second request first: its receipt is the one before the mark
    record = [
        {"kind": "received", "id": "s:a", "message": _intercept("s:a")},
        {"scenario": "s", "kind": "acquired", "id": "s:a"},
        {"kind": "received", "id": "s:a", "message": _intercept("s:a")},
    ]
    assert contradictions(record, frames, read_at=60, scenario_ids=set()) == []
