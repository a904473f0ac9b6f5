"""The elicitation suite with a contract v1 side: the emulator's elicitation adapter
(tests/fakes/upstream_sdk/interop/elicitation.py), found by upstream's convention,
driven as upstream's driver drives one (docs/ELICITATION.md, "With a contract v1
adapter").

The emulator is written from the facts alone and imports nothing of ours. As a
receiver it records `{message, bytes, summary}` behind `POST /receipts` and refuses
with 400; as a sender it posts the bytes of one plan. Over real sockets, against
our Python adapter, these tests show that the harness reads that record (marks
placed where the receiver's record stood), runs a v1 sender one step per process
with the aliases rebound, keeps the rows a v1 side cannot run unsupported with the
reason, and still fails a wrong receiver.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from interop.suites.elicitation import upstream
from tests.upstream_matrix import (
    EMULATOR,
    SDK,
    picked,
    rows_between,
    run_v1,
    sdk_without_lifecycle_commands,
)

# Rows the emulator's receiver implements (its schema checks are a small subset):
# accepted bodies of both modes, an attachment, an omit view, refusals of each kind.
WIRE = (
    "eli-form-accept",
    "eli-url-decline",
    "eli-selection-omit-omit",
    "eli-attachment-uploaded",
    "eli-upload-bad-digest",
    "eli-upload-wrong-credential",
    "eli-corr-body-wrong-parent",
    "eli-request-text-duplicate-key",
    "eli-form-above-maximum",
)
NEGATIVE = ("eli-upload-bad-digest", "eli-corr-body-wrong-parent", "eli-form-above-maximum")
ATOMIC_PLAIN = "eli-atomic-no-effects"  # the server answers no effect
ATOMIC_SCRIPTED = "eli-atomic-deny-form"  # the server must answer a deny


def _run(tmp_path: Path, client: str, server: str, *argv: str, sdk: Path = SDK) -> dict[str, Any]:
    return run_v1(tmp_path, "elicitation", client, server, "--transports", "http", *argv, sdk=sdk)


def test_a_v1_receiver_behind_our_client_is_judged_from_its_own_record(
    tmp_path: Path,
) -> None:
    report = _run(
        tmp_path, "python", EMULATOR, "--auth", "bearer",
        *picked(*WIRE, ATOMIC_PLAIN, ATOMIC_SCRIPTED),
    )  # fmt: skip
    rows = rows_between(report, "python", EMULATOR)
    for row_id in (*WIRE, ATOMIC_PLAIN):
        assert rows[row_id]["status"] == "passed", (row_id, rows[row_id].get("error"))
    assert rows[ATOMIC_SCRIPTED]["status"] == "unsupported"
    assert rows[ATOMIC_SCRIPTED]["error"] == upstream.RECEIVER_NO_SCRIPT
    (combination,) = [c for c in report["combinations"] if c["server"] == EMULATOR]
    assert combination["shapes"]["receipts"] == upstream.RECEIPT_SHAPE


def test_a_v1_sender_before_our_server_runs_each_step_in_a_process_of_its_own(
    tmp_path: Path,
) -> None:
    report = _run(
        tmp_path, EMULATOR, "python", "--auth", "bearer",
        *picked(*WIRE, ATOMIC_PLAIN, ATOMIC_SCRIPTED),
    )  # fmt: skip
    rows = rows_between(report, EMULATOR, "python")
    for row_id in WIRE:
        assert rows[row_id]["status"] == "passed", (row_id, rows[row_id].get("error"))
    for row_id in (ATOMIC_PLAIN, ATOMIC_SCRIPTED):  # its host rules never meet a server
        assert rows[row_id]["status"] == "unsupported"
        assert rows[row_id]["error"] == upstream.SENDER_NO_HOST


def test_a_v1_side_runs_over_http_with_a_bearer_token_only(tmp_path: Path) -> None:
    report = _run(
        tmp_path, EMULATOR, "python", "--auth", "none", "--transports", "stdio",
        *picked("eli-form-accept"),
    )  # fmt: skip
    mine = [c for c in report["combinations"] if c["client"] == EMULATOR]
    assert mine and all(c["status"] == "inapplicable" for c in mine)
    assert all(c["reason"] == upstream.WIRE_ONLY for c in mine)


def test_a_receiver_that_accepts_everything_fails_the_rows_it_had_to_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UPSTREAM_EMULATOR_FAULT", "elicitation-accept-all")
    report = _run(tmp_path, "python", EMULATOR, "--auth", "bearer", *picked(*WIRE))
    rows = rows_between(report, "python", EMULATOR)
    for row_id in NEGATIVE:
        assert rows[row_id]["status"] == "failed", row_id
        assert rows[row_id]["error"].startswith("ElicitationOutcome: "), rows[row_id]["error"]
    for row_id in ("eli-form-accept", "eli-url-decline", "eli-attachment-uploaded"):
        assert rows[row_id]["status"] == "passed", (row_id, rows[row_id].get("error"))


def test_an_sdk_without_an_elicitation_adapter_is_unsupported_naming_the_convention(
    tmp_path: Path,
) -> None:
    sdk = tmp_path / "sdk"
    shutil.copytree(SDK, sdk, ignore=shutil.ignore_patterns("__pycache__"))
    (sdk / "interop" / "elicitation.py").unlink()
    report = _run(
        tmp_path, EMULATOR, "python", "--auth", "bearer", *picked("eli-form-accept"), sdk=sdk
    )
    row = rows_between(report, EMULATOR, "python")["eli-form-accept"]
    assert row["status"] == "unsupported"
    assert "interop/elicitation.py" in row["error"] and "convention" in row["error"]


def test_an_sdk_whose_adapter_json_lacks_the_lifecycle_commands_still_runs_both_sides(
    tmp_path: Path,
) -> None:
    """Upstream runs the elicitation adapter by convention, not from adapter.json: an
    SDK that declares only its core commands is not unsupported here for that."""
    sdk = sdk_without_lifecycle_commands(tmp_path)
    for client, server in (("python", EMULATOR), (EMULATOR, "python")):
        report = _run(
            tmp_path / client, client, server, "--auth", "bearer", *picked(WIRE[0]), sdk=sdk
        )
        row = rows_between(report, client, server)[WIRE[0]]
        assert row["status"] == "passed", (client, server, row.get("error"))
