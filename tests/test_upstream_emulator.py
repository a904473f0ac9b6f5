"""The harness against an upstream-contract emulator (tests/fakes/upstream_sdk).

The emulator is an SDK-shaped checkout (`interop/adapter.json` with the upstream
keys only: contract v1, not blind) whose client and server are written from the
protocol and contract descriptions alone, standard library only, importing and
starting nothing of the harness or of our adapters. Its client computes
`actual` with its own small composition engine (tool.before only; flow and
inject reported unsupported) and reads a scenario's expectation only to set its
own `status`, as upstream clients do. Run against our Python adapter over real
sockets and pipes, it shows that the harness reads the upstream shapes: wrapped
receipts, the bare capabilities object, the whole scenario file handed to a v1
server, and a v1 client's report judged on its `actual`.
"""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.cli import main
from interop.report.document import rows_of
from interop.runtime.receipts import WRAPPED

SDK = ROOT / "tests" / "fakes" / "upstream_sdk"
UPSTREAM = ROOT / "scenarios" / "upstream" / "scenarios.json"
CORE = ROOT / "scenarios" / "core.json"
EMULATOR = "upstream"  # the name the emulator's checkout is given with --adapter-dir


def _matrix(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--adapter-dir", f"{EMULATOR}={SDK}", "--suite", "core"]
    code = main([*base, "--profile", "compat", "--quiet", "--output", str(output), *argv])
    return code, json.loads(output.read_text())


def _by_key(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["transport"], c["auth"]): c for c in report["combinations"]}


def _upstream_rows() -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in json.loads(UPSTREAM.read_text())["scenarios"]}


def test_the_checkout_is_upstream_shaped_and_independent() -> None:
    manifest = json.loads((SDK / "interop" / "adapter.json").read_text())
    assert set(manifest) == {"language", "client", "server", "lifecycleClient", "lifecycleServer"}
    assert manifest["language"] == "upstream-emulator"
    modules = sorted((SDK / "src" / "upstream_emulator").glob("*.py"))
    assert modules
    for module in modules:
        tree = ast.parse(module.read_text(), filename=str(module))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                assert top not in ("interop", "adapters", "tests"), f"{module.name}: {name}"


def test_python_client_passes_every_upstream_row_against_the_emulator_server(
    tmp_path: Path,
) -> None:
    """A v1 server is handed the whole file, so it sends the 44 malformed scripted
    responses of the `expectError` rows (and refuses nothing else); its receipts
    come wrapped over HTTP, through the relay over stdio."""
    code, report = _matrix(
        tmp_path,
        *("--clients", "python", "--servers", EMULATOR),
        *("--transports", "http", "stdio", "--auth", "none", "bearer"),
        *("--scenarios", str(UPSTREAM)),
    )
    scenarios = _upstream_rows()
    assert len(scenarios) == 105
    assert sum(1 for s in scenarios.values() if s.get("expectError") is True) == 44
    combinations = _by_key(report)
    assert combinations[("stdio", "bearer")]["status"] == "inapplicable"
    for key in (("http", "none"), ("http", "bearer"), ("stdio", "none")):
        combination = combinations[key]
        assert combination["errors"] == [], (key, combination["errors"])
        assert combination["status"] == "passed", key
        rows = rows_of(report, combination)
        assert sorted(r["id"] for r in rows) == sorted(scenarios)
        assert [r for r in rows if r["status"] != "passed"] == []
    for key in (("http", "none"), ("http", "bearer")):
        assert combinations[key]["shapes"] == {"receipts": WRAPPED}
    assert code == 0


def test_emulator_client_against_python_server_passes_or_is_unsupported(tmp_path: Path) -> None:
    """Every row the emulator's engine implements passes as the harness judges it;
    the others (events other than tool.before, flow and inject composition) are
    reported unsupported, never failed, and are exactly those."""
    code, report = _matrix(
        tmp_path,
        *("--clients", EMULATOR, "--servers", "python"),
        *("--transports", "http", "stdio", "--auth", "none", "bearer"),
        *("--scenarios", str(UPSTREAM)),
    )
    assert report["adapters"][EMULATOR]["language"] == "upstream-emulator"
    assert report["adapters"][EMULATOR]["blind"] is False
    scenarios = _upstream_rows()

    def out_of_scope(row: dict[str, Any]) -> bool:
        params = row["request"]["params"]
        if params["event"]["type"] != "tool.before":
            return True
        if row.get("expectError"):  # a rejection needs no composition
            return False
        kinds = {e.get("type") for e in row["response"]["result"]["effects"]}
        return bool(kinds & {"flow", "inject"}) or (params.get("state") or {}).get("flow") in (
            "stop",
            "continue",
        )

    expected_unsupported = sorted(i for i, row in scenarios.items() if out_of_scope(row))
    assert len(expected_unsupported) == 18
    combinations = _by_key(report)
    for key in (("http", "none"), ("http", "bearer"), ("stdio", "none")):
        combination = combinations[key]
        assert combination["errors"] == [], (key, combination["errors"])
        rows = rows_of(report, combination)
        assert len(rows) == 105
        assert [r["id"] for r in rows if r["status"] == "failed"] == [], key
        unsupported = sorted(r["id"] for r in rows if r["status"] == "unsupported")
        assert unsupported == expected_unsupported, key
        for row in rows:
            if row["status"] == "unsupported":
                assert row["adapterStatus"] == "unsupported" and row["actual"] is None
        assert combination["counts"]["passed"] == 87, key
    assert code == 0


def test_a_v1_clients_own_status_is_a_diagnostic_and_its_actual_is_judged(
    tmp_path: Path,
) -> None:
    """Not circular: the emulator and the harness see the same expectations but judge
    by different rules, so a row where the two verdicts differ shows whose counts.

    - Our `scenarios/core.json` rows also expect `effective`, a key of ours that
      contract v1 does not define. The emulator compares every expected key, finds
      no `effective` in its actual and reports `failed`; the harness judges a v1
      client on the v1 keys only and passes the row, naming `effective` as not
      asserted. The emulator's `failed` is kept as the row's `adapterStatus`.
    - In a copy of an upstream `return` row whose expectation leaves out `result`,
      the emulator (every expected key matches) reports `passed`; the harness also
      forbids unasserted semantic keys in `actual` and fails the row on `result`.
    """
    rows = _upstream_rows()
    altered = copy.deepcopy([rows["return-skips-original-execution"], rows["deny-blocks"]])
    del altered[0]["expected"]["result"]
    altered_file = tmp_path / "altered.json"
    altered_file.write_text(json.dumps({"version": 1, "scenarios": altered}))
    code, report = _matrix(
        tmp_path,
        *("--clients", EMULATOR, "--servers", "python"),
        *("--transports", "http", "--auth", "none", "--full-report"),
        *("--scenarios", str(CORE), str(altered_file)),
        *("--scenario", "tool.before.decision.*"),
        *("--scenario", "return-skips-original-execution", "--scenario", "deny-blocks"),
    )
    (combination,) = report["combinations"]
    assert combination["errors"] == []
    found = {(r["set"], r["id"]): r for r in rows_of(report, combination)}
    ours = {key: row for key, row in found.items() if key[0] == "core"}
    assert len(ours) == 9
    for row in ours.values():
        assert row["adapterStatus"] == "failed", row["id"]
        assert row["status"] == "passed", row["id"]
        assert row["diagnostics"] == {"notAssertedForV1": ["effective"]}, row["id"]
        assert isinstance(row["actual"], dict) and "effective" not in row["actual"]
    returned = found[("altered", "return-skips-original-execution")]
    assert returned["adapterStatus"] == "passed"
    assert returned["status"] == "failed"
    assert returned["actual"]["result"] == {"cached": 2}
    assert returned["error"].startswith("$.result: not expected here")
    denied = found[("altered", "deny-blocks")]
    assert (denied["adapterStatus"], denied["status"]) == ("passed", "passed")
    assert code == 1  # the altered row failed


def test_a_server_that_alters_its_scripted_response_fails_the_row_naming_it(
    tmp_path: Path,
) -> None:
    """The emulator's server, like upstream ones, refuses to send an invalid scripted
    response unless the row says `expectError`. A row whose malformed response comes
    with a positive expectation is answered with a JSON-RPC error instead: over stdio
    the relay records that answer, and the row fails naming the server, not the
    client that (rightly) rejected it. Over HTTP the client's own failure stands."""
    rows = _upstream_rows()
    altered = copy.deepcopy(rows["wrong-response-id"])
    del altered["expectError"]
    altered["expected"] = copy.deepcopy(rows["empty-response-preserves-input"]["expected"])
    path = tmp_path / "altered.json"
    path.write_text(json.dumps({"version": 1, "scenarios": [altered]}))
    code, report = _matrix(
        tmp_path,
        *("--clients", "python", "--servers", EMULATOR),
        *("--transports", "stdio", "--auth", "none", "--scenarios", str(path)),
    )
    assert code == 1
    (combination,) = [c for c in report["combinations"] if c["status"] != "inapplicable"]
    (row,) = rows_of(report, combination)
    assert row["status"] == "failed"
    assert row["error"].startswith("ServerAltered: the server answered {"), row["error"]
    assert "-32600" in row["error"]


def test_a_stdio_server_whose_own_receipts_lack_what_it_answered_fails(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Over stdio the relay records what a v1 server was sent and answered, and saves
    the server's own GET /receipts before each reply goes on: a server that keeps no
    receipt is caught (ReceiptMissing names the server's record), though the rows'
    wire was right."""
    monkeypatch.setenv("UPSTREAM_EMULATOR_FAULT", "forget-receipts")
    code, report = _matrix(
        tmp_path,
        *("--clients", "python", "--servers", EMULATOR, "--transports", "stdio"),
        *("--auth", "none", "--scenarios", str(UPSTREAM), "--scenario", "deny-blocks"),
    )
    assert code == 1
    (combination,) = [c for c in report["combinations"] if c["status"] != "inapplicable"]
    classes = {e["class"]: e["message"] for e in combination["errors"]}
    assert "ReceiptMissing" in classes, combination["errors"]
    assert "the server's own GET /receipts lacks 1 requests" in classes["ReceiptMissing"]
