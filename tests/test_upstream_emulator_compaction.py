"""The compaction suite with a contract v1 side: the emulator's compaction-wire
receiver (tests/fakes/upstream_sdk/interop/compaction_wire.py), found by upstream's
convention and driven as upstream's driver starts one (docs/COMPACTION.md, "With a
contract v1 adapter").

The emulator is written from the facts alone and imports nothing of ours. It knows
a subscription by its bearer token only, answers each scope with the action its
subscriptions file gives, refuses an invalid request with -32602 and records each
accepted exchange in receipts.jsonl. Over real sockets, against our Python host,
these tests show that the harness plays each scripted reply through a scope of
its own (over HTTP by a forwarder, over stdio by the bridge that spawns the
receiver once per call), reads that record as receipts, keeps the rows the receiver cannot play
unsupported with the reason, and still fails a wrong receiver with its answers
as evidence.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from interop.contract.manifest import load_manifest, manifest_in
from interop.report.document import rows_of
from interop.runtime.context import Timeouts, run_context
from interop.runtime.post import post
from interop.suites.compaction import host, upstream
from tests.upstream_matrix import (
    EMULATOR,
    SDK,
    picked,
    rows_between,
    run_v1,
    sdk_without_lifecycle_commands,
)

RUNS = (
    "cmp-quiet-both-boundaries",
    "cmp-supplied-then-after-chain",
    "cmp-three-before-subscriptions",
)
NEGATIVES = ("cmp-neg-no-trigger", "cmp-neg-text-body-ref")
OBSERVED = "cmp-two-before-edits-one-after-edit"  # observers: the receiver takes no notification
FAULT = "cmp-server-error-fail-open"  # a scripted server error
INVALID = "cmp-deny-without-reason"  # a reply the schema refuses


def _run(tmp_path: Path, client: str, server: str, *argv: str, sdk: Path = SDK) -> dict[str, Any]:
    return run_v1(tmp_path, "compaction", client, server, *argv, sdk=sdk)


def _over_bearer(tmp_path: Path, *ids: str, sdk: Path = SDK) -> dict[str, dict[str, Any]]:
    report = _run(
        tmp_path, "python", EMULATOR, "--transports", "http", "--auth", "bearer",
        *picked(*ids), sdk=sdk,
    )  # fmt: skip
    return rows_between(report, "python", EMULATOR)


def test_a_v1_receiver_plays_each_scripted_reply_and_is_judged_from_its_own_record(
    tmp_path: Path,
) -> None:
    report = _run(
        tmp_path, "python", EMULATOR, "--transports", "http", "--auth", "bearer",
        *picked(*RUNS, *NEGATIVES, OBSERVED, FAULT, INVALID),
    )  # fmt: skip
    rows = rows_between(report, "python", EMULATOR)
    for row_id in (*RUNS, *NEGATIVES, OBSERVED):
        assert rows[row_id]["status"] == "passed", (row_id, rows[row_id].get("error"))
    assert rows[FAULT]["error"] == upstream.EFFECTS_ONLY
    assert rows[INVALID]["error"] == upstream.VALID_REPLIES
    assert all(rows[i]["status"] == "unsupported" for i in (FAULT, INVALID))
    (combination,) = [c for c in report["combinations"] if c["server"] == EMULATOR]
    assert combination["shapes"]["receipts"] == upstream.RECEIPT_SHAPE


def test_a_v1_host_and_other_auth_modes_are_named_and_stdio_runs_through_the_bridge(
    tmp_path: Path,
) -> None:
    report = _run(
        tmp_path, f"{EMULATOR} python", f"python {EMULATOR}", "--auth", "none",
        *picked(RUNS[0]),
    )  # fmt: skip
    by_pair: dict[tuple[str, str, str], dict[str, Any]] = {
        (c["client"], c["server"], c["transport"]): c for c in report["combinations"]
    }
    # upstream's host reads no scenario file (its case plans: test_upstream_emulator_
    # compaction_host.py), and over HTTP it presents per-supplier bearer tokens only
    (row,) = rows_of(report, by_pair[(EMULATOR, "python", "stdio")])
    assert (row["status"], row["error"]) == ("unsupported", upstream.HOST_OWN_CASES)
    host_http = by_pair[(EMULATOR, "python", "http")]
    assert (host_http["status"], host_http["reason"]) == ("inapplicable", host.HOST_ONLY_BEARER)
    # over stdio the bridge spawns the receiver once per call (`stdio <scope>`)
    (row,) = rows_of(report, by_pair[("python", EMULATOR, "stdio")])
    assert row["status"] == "passed", row.get("error")
    other = by_pair[("python", EMULATOR, "http")]  # auth none: per-scope bearer tokens only
    assert (other["status"], other["reason"]) == ("inapplicable", upstream.RECEIVER_ONLY_BEARER)


def test_a_receiver_that_records_what_it_had_to_refuse_fails_the_negatives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UPSTREAM_EMULATOR_FAULT", "compaction-wire-accept-all")
    rows = _over_bearer(tmp_path, RUNS[0], *NEGATIVES)
    assert rows[RUNS[0]]["status"] == "passed", rows[RUNS[0]].get("error")
    for row_id in NEGATIVES:
        assert rows[row_id]["status"] == "failed", row_id
        assert rows[row_id]["error"].startswith("NegativeRecorded: "), rows[row_id]["error"]


@pytest.mark.parametrize(
    ("transport", "auth", "path"),
    [("http", "bearer", "/hooks/intercept: HTTP 200"), ("stdio", "none", "stdio ")],
)
def test_a_receiver_that_refuses_inline_text_fails_every_run_with_its_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str, auth: str, path: str
) -> None:
    monkeypatch.setenv("UPSTREAM_EMULATOR_FAULT", "compaction-wire-body-refs")
    report = _run(
        tmp_path, "python", EMULATOR, "--transports", transport, "--auth", auth,
        *picked(*RUNS),
    )  # fmt: skip
    rows = rows_between(report, "python", EMULATOR)
    for row_id in RUNS:
        row = rows[row_id]
        assert row["status"] == "failed", row_id
        answers = row["diagnostics"]["receiverAnswers"]
        assert answers and all("JSON-RPC error -32602" in a for a in answers), answers
        assert answers[0].startswith(f"{row_id}:before {path}"), answers


def test_an_sdk_without_a_compaction_wire_adapter_is_unsupported_naming_the_convention(
    tmp_path: Path,
) -> None:
    bare = tmp_path / "sdk"
    shutil.copytree(SDK, bare, ignore=shutil.ignore_patterns("compaction_wire.py", "__pycache__"))
    rows = _over_bearer(tmp_path, RUNS[0], sdk=bare)
    assert rows[RUNS[0]]["status"] == "unsupported"
    assert "interop/compaction_wire.py" in rows[RUNS[0]]["error"]
    assert upstream.SOURCE in rows[RUNS[0]]["error"]


def test_an_sdk_whose_adapter_json_lacks_the_lifecycle_commands_still_runs_its_receiver(
    tmp_path: Path,
) -> None:
    """Upstream runs the compaction-wire adapter by convention, not from adapter.json:
    an SDK that declares only its core commands is not unsupported here for that."""
    sdk = sdk_without_lifecycle_commands(tmp_path)
    rows = _over_bearer(tmp_path, RUNS[0], sdk=sdk)
    assert rows[RUNS[0]]["status"] == "passed", rows[RUNS[0]].get("error")


def test_over_stdio_a_notification_spawns_no_receiver_and_the_chain_is_still_judged(
    tmp_path: Path,
) -> None:
    """The bridge spawns the receiver for calls only: the row with observers passes on
    its calls, its settlement and the host's report of whom it notified."""
    report = _run(
        tmp_path, "python", EMULATOR, "--transports", "stdio", "--auth", "none",
        *picked(OBSERVED, RUNS[1]),
    )  # fmt: skip
    rows = rows_between(report, "python", EMULATOR)
    for row_id in (OBSERVED, RUNS[1]):
        assert rows[row_id]["status"] == "passed", (row_id, rows[row_id].get("error"))


def test_over_http_a_notification_is_answered_204_and_never_sent_to_the_receiver(
    tmp_path: Path,
) -> None:
    """The receiver takes no notification and would refuse one (401): a host that
    gives up its wait for a receipt on a refusal (the TypeScript one) would race the
    control shim's wait, which ends at once. The forwarder answers it 204 itself, as
    the stdio bridge drops it, and notes that it was not sent."""
    with run_context(
        logs=tmp_path / "logs",
        auth=["bearer"],
        profile="compat",
        timeouts=Timeouts(startup=30.0, client=60.0),
    ) as ctx:
        adapter = load_manifest(manifest_in(SDK), EMULATOR)
        scopes = {(f"{RUNS[0]}:before", 0): {"kind": "effects", "effects": []}}
        receiver = upstream.V1Receiver(ctx, adapter, scopes, "the-run-token")
        receiver.start()
        try:
            notification = {"jsonrpc": "2.0", "method": "hooks/observe", "params": {}}
            headers = {"Authorization": "Bearer the-run-token"}
            answered = post(receiver.endpoint, json.dumps(notification).encode(), headers, 10.0)
            assert answered[:2] == (204, b"")
            assert receiver.answers == {"None": [upstream.NOT_SENT]}
            assert receiver.upstream_entries() == ([], None)
        finally:
            receiver.stop()
