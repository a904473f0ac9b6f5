"""The harness against fake adapters that lie, crash, hang or leak.

Every misbehaviour must fail its combination with the right error class (or
fail exactly the affected rows), and no process may survive the run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from interop.cli import main
from interop.report.document import rows_of
from interop.runtime.process import OWNER_VARIABLE
from tests.conftest import FAKE, matrix_argv


def run(
    tmp_path: Path, dirs: list[Path], small_set: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    timeouts = ("--timeout", "10", "--startup-timeout", "10")
    code = main(matrix_argv(dirs, small_set, output, *timeouts, *extra))
    return code, json.loads(output.read_text())


def leftovers() -> list[psutil.Process]:
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if OWNER_VARIABLE in process.environ() and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


@pytest.fixture(autouse=True)
def no_survivors() -> Any:
    yield
    survivors = leftovers()
    for process in survivors:
        process.kill()
    assert not survivors, f"adapter processes survived: {survivors}"


def classes(report: dict[str, Any], transport: str = "http") -> set[str]:
    combos = [c for c in report["combinations"] if c["transport"] == transport]
    return {e["class"] for c in combos for e in c["errors"]}


def test_honest_fake_passes_everything(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, report = run(tmp_path, [fake_adapter("fake")], small_set)
    assert code == 0
    assert report["summary"]["combinations"] == {
        "passed": 2,
        "failed": 0,
        "unsupported": 0,
        "inapplicable": 0,
        "not-run": 0,
        "known-failing": 0,
        "flaky": 0,
    }
    assert report["summary"]["rows"]["passed"] == 16
    assert report["incomplete"] is False


def test_stdio_with_auth_is_inapplicable_never_run(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, report = run(
        tmp_path,
        [fake_adapter("fake", client="crash")],
        small_set,
        "--transports",
        "stdio",
        "--auth",
        "bearer",
        "workload",
    )
    assert code == 1  # nothing ran: a run that tests nothing is no pass
    assert report["summary"]["combinations"]["inapplicable"] == 2
    assert report["summary"]["rowsNotJudged"]["inapplicable"] == 16
    assert sum(report["summary"]["rows"].values()) == 0
    assert all(c["results"] == {} for c in report["combinations"])
    assert {c["reason"] for c in report["combinations"]} == {
        "stdio relies on process trust: it runs with auth none only"
    }


@pytest.mark.parametrize(
    ("behaviour", "error_class"),
    [
        ("omit", "ResultMissing"),
        ("duplicate", "ResultDuplicateId"),
        ("unknown-id", "ResultUnknownId"),
        ("wrong-language", "LanguageMismatch"),
        ("crash", "ReportMissing"),
        ("garbage", "ReportMalformed"),
        ("hang", "ClientTimeout"),
        ("grandchild", "ProcessLeak"),
        ("skip-send", "ReceiptMissing"),
    ],
)
def test_client_misbehaviour_fails_the_combination(
    tmp_path: Path,
    fake_adapter: Callable[..., Path],
    small_set: Path,
    behaviour: str,
    error_class: str,
) -> None:
    extra = ["--timeout", "3"] if behaviour == "hang" else []
    code, report = run(
        tmp_path,
        [fake_adapter("fake", client=behaviour)],
        small_set,
        "--transports",
        "http",
        *extra,
    )
    assert code == 1
    assert error_class in classes(report)
    rows = rows_of(report, report["combinations"][0])
    assert rows and all(r["status"] == "failed" for r in rows)


def test_nonzero_exit_of_a_blind_client_fails(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    directory = fake_adapter("fake", client="nonzero", blind=True)
    code, report = run(tmp_path, [directory], small_set, "--transports", "http")
    assert code == 1
    assert "ClientExit" in classes(report) or "ReportMalformed" in classes(report)


def test_lying_client_fails_exactly_that_row(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, report = run(
        tmp_path, [fake_adapter("fake", client="lie")], small_set, "--transports", "http"
    )
    assert code == 1
    rows = rows_of(report, report["combinations"][0])
    failed = [r["id"] for r in rows if r["status"] == "failed"]
    assert len(failed) == 1
    assert report["combinations"][0]["errors"] == []


def test_unexpected_semantic_key_fails(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, report = run(
        tmp_path, [fake_adapter("fake", client="extra-key")], small_set, "--transports", "http"
    )
    assert code == 1
    errors = {
        r["error"] for r in rows_of(report, report["combinations"][0]) if r["status"] == "failed"
    }
    assert errors == {'$.flow: not expected here, got "stop"'}


def test_unsupported_rows_are_counted_apart(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, report = run(
        tmp_path, [fake_adapter("fake", client="unsupported")], small_set, "--transports", "http"
    )
    assert code == 0, "unsupported rows are not failures, but they never pass"
    assert report["summary"]["rows"]["unsupported"] == 1
    assert report["summary"]["rows"]["passed"] == 7
    assert report["combinations"][0]["status"] == "unsupported"


def test_tampered_receipt_fails(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, report = run(tmp_path, [fake_adapter("fake", server="tamper-receipt")], small_set)
    assert code == 1
    assert "ReceiptMismatch" in classes(report, "http")
    assert "ReceiptMismatch" in classes(report, "stdio")


def test_server_that_dies_before_ready(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, report = run(
        tmp_path, [fake_adapter("fake", server="server-crash")], small_set, "--transports", "http"
    )
    assert code == 1
    assert "ServerExit" in classes(report)


def test_server_grandchild_is_killed_and_reported(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    code, report = run(
        tmp_path,
        [fake_adapter("fake", server="server-grandchild")],
        small_set,
        "--transports",
        "http",
    )
    assert code == 1
    assert "ProcessLeak" in classes(report)


def test_contract_v1_server_without_receipt_log(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    """Receipts come from GET /receipts over HTTP and from the relay over stdio."""
    directory = fake_adapter("fake", receiptLog=False, serverReuse=False)
    code, report = run(tmp_path, [directory], small_set)
    assert code == 0
    assert report["summary"]["combinations"]["passed"] == 2


def test_relay_receipts_catch_a_tampering_client_side(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    directory = fake_adapter("fake", client="skip-send", receiptLog=False)
    code, report = run(tmp_path, [directory], small_set, "--transports", "stdio")
    assert code == 1
    assert "ReceiptMissing" in classes(report, "stdio")


def test_altered_expectations_fail_exactly_those_rows(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    honest = fake_adapter("fake", blind=False)
    # The fake client echoes the file it is given, so alter the file the server and verifier see
    # only through a copy passed as a second set: the honest client reads the altered copy, which
    # proves nothing. Instead compare a blind-style run: the verifier reads `expected`, the client
    # reports what the first file said.
    document = json.loads(small_set.read_text())
    document["scenarios"][0]["expected"]["decision"] = "deny"
    document["scenarios"][3]["expected"]["result"] = 1
    altered = tmp_path / "altered" / "small.json"
    altered.parent.mkdir()
    altered.write_text(json.dumps(document))
    from interop.suites.core.scenarios import load_set
    from interop.suites.core.verify import verify_set

    original = load_set(small_set)
    report = {
        "language": "fake",
        "results": [
            {
                "id": s.id,
                "status": "passed",
                "actual": {"rejected": True} if s.expect_error else s.expected,
            }
            for s in original.scenarios
        ],
    }
    verdict = verify_set(
        load_set(altered),
        report=report,
        receipts=[s.request for s in original.scenarios],
        client_exit=0,
        language="fake",
        blind=False,
        stage="test",
    )
    failed = [r.id for r in verdict.rows if r.status == "failed"]
    assert failed == [document["scenarios"][0]["id"], document["scenarios"][3]["id"]]
    assert honest.exists()


def test_report_is_byte_identical_across_runs(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    directory = fake_adapter("fake", client="lie")
    outputs = []
    for attempt in ("one", "two"):
        output = tmp_path / attempt / "report.json"
        argv = matrix_argv([directory], small_set, output)
        assert main(argv) == 1
        outputs.append(output.read_bytes())
        timings = json.loads((output.parent / "report.timings.json").read_text())
        assert set(timings["cpuSeconds"]["adapters"]["fake"]) == {"client", "server"}
        assert timings["jobs"] and timings["cpuSeconds"]["harness"] > 0
        assert (output.parent / "report.xml").exists() and (output.parent / "report.html").exists()
    assert outputs[0] == outputs[1]


def test_upstream_style_checkout_plugs_in_under_compat(tmp_path: Path, small_set: Path) -> None:
    """An SDK checkout with interop/adapter.json and no extensions runs unchanged."""
    import sys

    checkout = tmp_path / "sdk-checkout"
    (checkout / "interop").mkdir(parents=True)
    manifest = {
        "language": "fake",
        "client": [sys.executable, str(FAKE), "client"],
        "server": [sys.executable, str(FAKE), "server"],
    }
    (checkout / "interop" / "adapter.json").write_text(json.dumps(manifest))
    code, report = run(tmp_path, [checkout], small_set, "--profile", "compat")
    assert code == 0
    assert report["profile"] == "compat"
    assert report["summary"]["combinations"]["passed"] == 2
    with pytest.raises(SystemExit):
        main(["matrix", "--profile", "nonsense"])
    assert (
        main(
            [
                "matrix",
                "--adapter-dir",
                str(checkout),
                "--adapters-root",
                str(tmp_path / "x"),
                "--suite",
                "core",
                "--scenarios",
                str(small_set),
                "--output",
                str(tmp_path / "o" / "r.json"),
            ]
        )
        == 2
    )


def test_credentials_never_reach_logs_or_reports(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    directory = fake_adapter("fake", client="print-secrets")
    code, _ = run(
        tmp_path, [directory], small_set, "--transports", "http", "--auth", "bearer", "workload"
    )
    assert code == 0
    logs = sorted((tmp_path / "out" / "report-logs").rglob("client-*.log"))
    assert len(logs) == 2
    for log in logs:
        text = log.read_text()
        assert '"mode"' in text and "[REDACTED]" in text
        logged = json.loads(text.splitlines()[0])
        secret = logged.get("token") or logged.get("assertion")
        assert secret == "[REDACTED]"
    assert "[REDACTED]" not in (tmp_path / "out" / "report.json").read_text()
