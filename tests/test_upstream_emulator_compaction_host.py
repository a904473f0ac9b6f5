"""A contract v1 compaction-wire host before our servers (docs/COMPACTION.md, "A
contract v1 host"): the emulator's `host` (tests/fakes/upstream_sdk, written from the
facts of upstream's plan and output alone, importing nothing of ours) runs the
case plans of scenarios/compaction-host.json against our Python server.

Over real sockets and processes these tests show that the harness hands the host
the plans without their replies, carries each call through its gate (HTTP: the
supplier's token swapped for the run's; stdio: the relay the host spawns per call),
passes a correct host on every case, and fails a wrong one with the class that
names what it did wrong: a host that uploads text the spec sends inline
(HostWire, with the refused upload as evidence), one whose trace lies about the
wire (HostTrace), one that keeps a message from a reply that failed (HostResult).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.report.document import rows_of
from interop.runtime.context import Timeouts, run_context
from interop.runtime.post import post
from interop.schema import canonical
from interop.suites.compaction import host
from interop.suites.compaction.scenarios import load_set
from tests.upstream_matrix import EMULATOR, rows_between, run_v1

PLANS = ROOT / "scenarios" / "compaction-host.json"
CASES = tuple(r.id for r in load_set(PLANS).rows)


def _run(tmp_path: Path, client: str, server: str, *argv: str) -> dict[str, Any]:
    return run_v1(tmp_path, "compaction", client, server, "--scenarios", str(PLANS), *argv)


def test_a_v1_host_runs_every_case_plan_against_our_server_over_http_and_stdio(
    tmp_path: Path,
) -> None:
    report = _run(tmp_path, f"{EMULATOR} python", f"python {EMULATOR}", "--auth", "bearer", "none")
    by_pair = {
        (c["client"], c["server"], c["transport"], c["auth"]): c for c in report["combinations"]
    }
    for transport, auth in (("http", "bearer"), ("stdio", "none")):
        combination = by_pair[(EMULATOR, "python", transport, auth)]
        rows = {r["id"]: r for r in rows_of(report, combination)}
        assert sorted(rows) == sorted(CASES)
        for case, row in rows.items():
            assert row["status"] == "passed", (transport, case, row.get("error"))
        assert combination["shapes"]["client"] == host.REPORT_SHAPE
    http_none = by_pair[(EMULATOR, "python", "http", "none")]  # one bearer token per supplier
    assert (http_none["status"], http_none["reason"]) == ("inapplicable", host.HOST_ONLY_BEARER)
    ours = rows_of(report, by_pair[("python", "python", "http", "bearer")])
    assert {(r["status"], r["error"]) for r in ours} == {("inapplicable", host.NOT_A_V1_HOST)}
    both = rows_of(report, by_pair[(EMULATOR, EMULATOR, "stdio", "none")])
    assert {(r["status"], r["error"]) for r in both} == {("unsupported", host.BOTH_V1)}


@pytest.mark.parametrize(
    ("fault", "transport", "auth", "failing", "start"),
    [
        ("compaction-wire-host-upload", "stdio", "none", CASES, "HostWire: 0 calls crossed"),
        ("compaction-wire-host-trace", "http", "bearer", CASES, "HostTrace: trace["),
        ("compaction-wire-host-leak", "http", "bearer", ("after-atomic",), "HostResult: "),
    ],
)
def test_a_wrong_host_fails_with_the_class_that_names_its_mistake(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    transport: str,
    auth: str,
    failing: tuple[str, ...],
    start: str,
) -> None:
    monkeypatch.setenv("UPSTREAM_EMULATOR_FAULT", fault)
    report = _run(tmp_path, EMULATOR, "python", "--transports", transport, "--auth", auth)
    rows = rows_between(report, EMULATOR, "python")
    for case, row in rows.items():
        if case in failing:
            assert row["status"] == "failed", case
            assert row["error"].startswith(start), row["error"]
        else:
            assert row["status"] == "passed", (case, row.get("error"))
    if fault == "compaction-wire-host-upload":  # the refused upload is the evidence
        wire = rows["chain"]["diagnostics"]["wire"]
        assert wire == [wire[0]] and wire[0].startswith("chain-before-0 /upload -> 404 ")
        assert "the compaction suite's servers take no uploads" in wire[0]


class _Unreached:
    """Our server, never reached by a call the gate refuses."""

    transport = "http"
    endpoint = "http://127.0.0.1:9/unreached"

    def exchange(self, line: bytes, *, answer: bool, timeout: float) -> bytes | None:
        raise AssertionError("a refused call reached the server")


def test_the_gate_takes_no_stranger_and_a_call_with_no_suppliers_token_fails_the_run(
    tmp_path: Path,
) -> None:
    with run_context(
        logs=tmp_path / "logs", auth=["bearer"], profile="compat", timeouts=Timeouts()
    ) as ctx:
        credentials = {"chain-before-0": {"token": "event-token", "uploadToken": "upload-token"}}
        gate = host.Gate(ctx, _Unreached(), credentials, tmp_path)  # type: ignore[arg-type]
        gate.start()
        try:
            line = b'{"jsonrpc": "2.0", "id": "chain:before"}'
            relay = gate.endpoint + "/relay/chain-before-0"
            assert post(relay, line, {"AHP-Relay-Secret": "guessed"}, 5.0)[0] == 403
            assert post(relay, line, {}, 5.0)[0] == 403
            stranger = {"Authorization": "Bearer upload-token"}  # not an event token
            status = post(gate.endpoint + "/hooks/intercept", line, stranger, 5.0).status
            assert status == 401
        finally:
            gate.stop()
        assert [(c.scope, c.status) for c in gate.calls] == [(None, 401)]
        rows = list(load_set(PLANS).rows)
        verdicts, errors = host.verify_host("compaction-host", rows, [], gate.calls, [], [])
        assert [e.error_class for e in errors] == ["HostWire"]
        assert all(v.error == "combination failed: HostWire" for v in verdicts)


def test_every_suppliers_reply_in_the_case_plans_is_a_schema_valid_response() -> None:
    """The cases test a host's rules (targets, atomic replies), never a reply the
    `intercept-response` schema refuses: that would test the host's validator."""
    rows = list(load_set(PLANS).rows)
    for reply in (e for row in host.server_rows(rows) for s in row["responseSequences"].values()
                  for e in s):  # fmt: skip
        assert canonical().issue("intercept-response.schema.json", reply) is None, reply
