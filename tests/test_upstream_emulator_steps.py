"""The harness's step suites (lifecycle, catalogue) against the upstream-contract emulator.

The emulator (tests/fakes/upstream_sdk) now has the `lifecycleClient` and
`lifecycleServer` roles of an upstream SDK checkout, written from the contract
descriptions alone (stdlib only, nothing of `interop/` or `adapters/`). Its
server records receipts as upstream servers do (held intercepts, `observed`
answered with an adversarial frame, held observers recorded `observer-blocked`
without `scenario`, `discovery` / `observed` / `rejected` in the catalogue);
its client runs a small step engine and, like upstream's, crashes on an effect
its request did not advertise. Run against our Python adapter over real
sockets and pipes, it shows that the harness runs a contract v1 checkout's
step suites: vectors pass, our extension rows are unsupported and never run,
and a crash fails only its own row.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.cli import main
from interop.report.document import rows_of
from interop.suites.lifecycle.probes import EXPECTED, V1_PROBES

SDK = ROOT / "tests" / "fakes" / "upstream_sdk"
ENTRY = SDK / "src" / "upstream_emulator" / "interop.py"
UPSTREAM = ROOT / "scenarios" / "upstream"
LIFECYCLE_VECTORS = UPSTREAM / "lifecycle-scenarios.json"
CHAIN_VECTORS = UPSTREAM / "observation-chain-scenarios.json"
CATALOGUE_VECTORS = UPSTREAM / "catalogue-scenarios.json"
OURS = ROOT / "scenarios" / "lifecycle.json"
EMULATOR = "upstream"  # the name the emulator's checkout is given with --adapter-dir
HELD = "lc-chain-held-observers"  # the one chain with held observers that v1 can run
PROBES = "receiver-probes"
# Upstream's probes (the ones a contract v1 server gets) that the emulator's server
# fails like the upstream receiver it stands for: every observation is answered 200
# with the adversarial frame (AHP-HTTP-001 wants 202 or 204), and body refs and
# their size and hash are not checked. The probes of our contract only are
# unsupported for it, never failed.
EMULATOR_PROBE_GAPS = {
    "observe-a-stored-ref-accepted",
    "observe-with-size-in-the-body-400",
    "observe-with-hash-in-the-body-400",
    "observe-the-same-again-accepted",
    "observe-a-never-uploaded-ref-409",
}


def _matrix(tmp_path: Path, suite: str, *argv: str) -> tuple[int, dict[str, Any]]:
    output = tmp_path / "out" / "report.json"
    base = ["matrix", "--adapter-dir", f"{EMULATOR}={SDK}", "--suite", suite]
    code = main([*base, "--profile", "compat", "--quiet", "--output", str(output), *argv])
    return code, json.loads(output.read_text())


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in json.loads(path.read_text())["scenarios"]}


def _by_transport(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["transport"]: c for c in report["combinations"] if c["auth"] == "none"}


def test_the_checkout_names_the_four_upstream_commands() -> None:
    manifest = json.loads((SDK / "interop" / "adapter.json").read_text())
    assert set(manifest) == {"language", "client", "server", "lifecycleClient", "lifecycleServer"}
    for key in ("lifecycleClient", "lifecycleServer"):
        assert manifest[key][:2] == ["python3", "src/upstream_emulator/interop.py"]


def test_python_client_passes_the_vectors_against_the_emulator_lifecycle_server(
    tmp_path: Path,
) -> None:
    """Every upstream lifecycle and chain vector passes on the transports it runs on,
    and so does our chain with held observers; the emulator's server records
    each held observer itself (`observer-blocked`, no `scenario`, checked directly
    below). The receiver probes the emulator fails are exactly its known gaps."""
    code, report = _matrix(
        tmp_path,
        "lifecycle",
        *("--clients", "python", "--servers", EMULATOR),
        *("--transports", "http", "stdio", "--auth", "none"),
        *("--scenarios", str(LIFECYCLE_VECTORS), str(CHAIN_VECTORS), str(OURS)),
        # every upstream id (none starts with "lc-"), and our held-observer chain
        *("--scenario", "[!l]*", "--scenario", "late-*", "--scenario", HELD),
    )
    vectors = {**_rows(LIFECYCLE_VECTORS), **_rows(CHAIN_VECTORS)}
    assert _rows(OURS)[HELD]["chain"]["holdObservers"] is True
    for transport, combination in _by_transport(report).items():
        assert combination["errors"] == [], (transport, combination["errors"])
        rows = rows_of(report, combination)
        scenario_rows = [r for r in rows if r["set"] != PROBES]
        assert {r["id"] for r in scenario_rows} == {*vectors, HELD}, transport
        for row in scenario_rows:
            runs_here = transport in vectors.get(row["id"], {}).get("transports", [transport])
            wanted = "passed" if runs_here else "inapplicable"
            assert row["status"] == wanted, (transport, row["id"], row.get("error"))
        held = [r for r in scenario_rows if r["id"] == HELD]
        assert [r["status"] for r in held] == ["passed"]
        probes = {r["id"]: r for r in rows if r["set"] == PROBES}
        if transport == "http":
            failed = {name for name, r in probes.items() if r["status"] == "failed"}
            assert failed == EMULATOR_PROBE_GAPS
            unsupported = {name for name, r in probes.items() if r["status"] == "unsupported"}
            assert unsupported == set(EXPECTED) - V1_PROBES
            assert all("our contract only" in probes[n]["error"] for n in unsupported)
    assert code == 1  # the probe rows above


def _serve(tmp_path: Path, scenarios: list[dict[str, Any]], transport: str = "http") -> Any:
    (tmp_path / "srv").mkdir()
    scenario_file = tmp_path / "srv" / "scenarios.json"
    scenario_file.write_text(json.dumps({"version": 1, "scenarios": scenarios}))
    config = {
        "suite": "lifecycle",
        "transport": transport,
        "readinessFile": str(tmp_path / "srv" / "ready.json"),
        "scenarioFile": str(scenario_file),
        "auth": {"mode": "none"},
        "uploadAuth": {"token": "upload-token"},
    }
    (tmp_path / "srv" / "config.json").write_text(json.dumps(config))
    command = [sys.executable, str(ENTRY), "lifecycle-server"]
    return subprocess.Popen(
        [*command, "--config", str(tmp_path / "srv" / "config.json")],
        cwd=SDK,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _readiness(tmp_path: Path) -> dict[str, Any]:
    ready = tmp_path / "srv" / "ready.json"
    deadline = time.monotonic() + 10
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return dict(json.loads(ready.read_text()))


def _post(url: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        data = answer.read()
        return answer.status, json.loads(data) if data else None


def test_the_emulator_server_records_held_observers_itself(tmp_path: Path) -> None:
    """Upstream servers record a held observer as `{kind: "observer-blocked", id:
    <event id>}` (no `scenario`) before its `observed` entry, and answer it (200,
    the adversarial frame) only once `<request id>:observers` is released."""
    row = _rows(OURS)[HELD]
    process = _serve(tmp_path, [row])
    try:
        ready = _readiness(tmp_path)
        assert ready["endpoint"].count("/") == 2  # the bare base URL
        assert ready["uploadEndpoint"].endswith("/content")
        note = copy.deepcopy(row["chainProof"]["observations"][0])
        event_id = note["params"]["event"]["id"]
        answers: list[tuple[int, Any]] = []
        observe = ready["endpoint"] + "/observe"
        sender = threading.Thread(target=lambda: answers.append(_post(observe, note)))
        sender.start()
        control = ready["controlEndpoint"]
        assert _post(control + "/wait-observed", {"eventId": event_id, "count": 1})[0] == 200
        sender.join(0.3)
        assert answers == []  # held
        with urllib.request.urlopen(control + "/receipts", timeout=10) as answer:
            entries = json.loads(answer.read())["entries"]
        assert [e["kind"] for e in entries] == ["observer-blocked", "observed"]
        assert entries[0] == {"kind": "observer-blocked", "id": event_id}
        released = row["requests"]["a"]["id"] + ":observers"
        _post(control + "/release", {"id": released})
        sender.join(10)
        ((status, frame),) = answers
        assert status == 200 and frame["id"] == "unsolicited-observer"
        assert frame["result"]["effects"] == [
            {"type": "deny", "reason": "observer must not decide"}
        ]
        assert _post(control + "/shutdown", {})[1] == {"ok": True}
        assert process.wait(10) == 0
    finally:
        process.kill()
        process.wait()


def test_the_emulator_stdio_server_dies_on_an_unknown_request_id(tmp_path: Path) -> None:
    row = _rows(LIFECYCLE_VECTORS)["denied-boundary-observed"]
    process = _serve(tmp_path, [row], transport="stdio")
    try:
        _readiness(tmp_path)
        stray = copy.deepcopy(row["requests"]["a"])
        stray["id"] = "no-such-request"
        _, errors = process.communicate(json.dumps(stray).encode() + b"\n", timeout=10)
        assert process.returncode == 1
        assert b"cannot serve" in errors
    finally:
        process.kill()
        process.wait()


def _extension_ids() -> list[str]:
    """Our rows that need the operational-failure extension, found from their fields."""
    found = []
    for sid, row in _rows(OURS).items():
        subscriptions = (row.get("chain") or {}).get("subscriptions", [])
        faulted = any(
            isinstance(entry, dict) and "fault" in entry
            for sequence in row.get("responseSequences", {}).values()
            for entry in sequence
        )
        if (
            faulted
            or row.get("observeFaults")
            or any("timeoutMs" in s or s.get("backend") == "unreachable" for s in subscriptions)
        ):
            found.append(sid)
    return found


def test_our_extension_rows_are_unsupported_and_never_run(tmp_path: Path) -> None:
    extension = _extension_ids()
    assert len(extension) == 12
    selection = [arg for sid in extension for arg in ("--scenario", sid)]
    code, report = _matrix(
        tmp_path,
        "lifecycle",
        *("--clients", "python", "--servers", EMULATOR),
        *("--transports", "http", "stdio", "--auth", "none"),
        *("--scenarios", str(OURS), *selection),
    )
    for transport, combination in _by_transport(report).items():
        assert combination["errors"] == [], transport
        rows = [r for r in rows_of(report, combination) if r["set"] != PROBES]
        assert sorted(r["id"] for r in rows) == sorted(extension)
        for row in rows:
            assert row["status"] == "unsupported", (transport, row["id"])
            assert "operational failures" in row["error"], row["error"]
            assert row.get("adapterStatus") is None and row.get("actual") is None
    # never run: no client or server of the set was started, so no log was kept
    logs = tmp_path / "out" / "report-logs"
    assert not logs.exists() or not any(logs.rglob("*-lifecycle*.log"))
    assert code == 0


def test_an_emulator_client_crash_fails_only_its_row(tmp_path: Path) -> None:
    """The upstream lifecycle client crashes (traceback, exit 1, no report) when a
    staged reply carries an effect its request does not advertise. The set's run
    then has no report; each row runs again alone, so the crash fails only the row
    that causes it, and the others are judged on their own."""
    vectors = _rows(LIFECYCLE_VECTORS)
    chosen = ["cancel-before-reply", "denied-boundary-observed", "ask-boundary-observed"]
    rows = [copy.deepcopy(vectors[sid]) for sid in chosen]
    # the ask row again, renamed, with `ask` taken out of what the request advertises
    crashing = json.loads(
        json.dumps(vectors["ask-boundary-observed"]).replace("ask-boundary-observed", "no-ask")
    )
    crashing["requests"]["a"]["params"]["capabilities"]["effects"].remove("ask")
    assert [e["type"] for e in crashing["responses"]["a"]["result"]["effects"]] == ["ask"]
    rows.insert(1, crashing)
    path = tmp_path / "crash.json"
    path.write_text(json.dumps({"version": 1, "scenarios": rows}))
    code, report = _matrix(
        tmp_path,
        "lifecycle",
        *("--clients", EMULATOR, "--servers", "python"),
        *("--transports", "http", "stdio", "--auth", "none", "--scenarios", str(path)),
        "--full-report",
    )
    for transport, combination in _by_transport(report).items():
        assert combination["errors"] == [], (transport, combination["errors"])
        found = {r["id"]: r for r in rows_of(report, combination) if r["set"] == "crash"}
        assert sorted(found) == sorted([*chosen, "no-ask"])
        crashed = found.pop("no-ask")
        assert crashed["status"] == "failed"
        assert crashed["error"].startswith("run alone:"), crashed["error"]
        assert "ReportMissing" in crashed["error"]
        for sid, row in found.items():
            assert row["status"] == "passed", (transport, sid, row.get("error"))
            assert "runAlone" in row.get("diagnostics", {}), sid
    log = tmp_path / "out" / "report-logs" / "upstream--python--stdio--none"
    assert "UnadvertisedEffect" in (log / "client-crash.no-ask.log").read_text()
    assert code == 1


def test_python_client_against_the_emulator_catalogue_server(tmp_path: Path) -> None:
    """One discovery receipt (read, valid, equal to the client's report: no
    combination error), the compat manifest checks pass, and every row the
    emulator's receiver can judge passes. It checks notifications minimally and
    keeps no lineage, so the two rows whose events only the full event schemas
    reject and the three lineage rejections are accepted and fail there, naming
    the errorKind the receiver should have given. The receiver probes still run
    (they judge the receiver alone): its discovery passes, and every observe probe
    fails on the 200 it answers where the spec wants 202 or 204 (AHP-HTTP-001)."""
    code, report = _matrix(
        tmp_path,
        "catalogue",
        *("--clients", "python", "--servers", EMULATOR),
        *("--transports", "http", "--auth", "none", "--scenarios", str(CATALOGUE_VECTORS)),
    )
    vectors = _rows(CATALOGUE_VECTORS)
    not_judged = {
        "typed-model-error-required": "schema",
        "typed-execution-enum": "schema",
        "wrong-known-task-parent": "lineage",
        "source-local-cycle": "lineage",
        "no-op-actual-task": "lineage",
    }
    (combination,) = report["combinations"]
    assert combination["errors"] == []
    rows = {r["id"]: r for r in rows_of(report, combination) if r["set"] == "catalogue-scenarios"}
    assert sorted(rows) == sorted(vectors)
    for sid, row in rows.items():
        if sid in not_judged:
            assert row["status"] == "failed"
            assert row["error"].startswith("DeliveryMismatch:"), row["error"]
            assert f'expected "{not_judged[sid]}"' in row["error"]
        else:
            assert row["status"] == "passed", (sid, row.get("error"))
    registrations = [s for s, r in vectors.items() if r["category"] == "registration"]
    assert len(registrations) == 13 and all(rows[s]["status"] == "passed" for s in registrations)
    probes = {
        r["id"]: r for r in rows_of(report, combination) if r["set"] == "catalogue-receiver-probes"
    }
    assert probes.pop("capabilities-200-with-the-same-id")["status"] == "passed"
    assert probes and all(r["status"] == "failed" for r in probes.values()), probes
    assert all("got 200" in r["error"] or "got false" in r["error"] for r in probes.values())
    assert code == 1


def test_a_lineage_reading_of_ours_is_not_held_against_a_v1_server(tmp_path: Path) -> None:
    """Our catalogue rows whose verdict rests on a lineage reading beyond what the
    spec says a receiver checks carry `reading`: with a contract v1 server they are
    unsupported, naming it; our own servers are still held to them."""
    ours = ROOT / "scenarios" / "catalogue.json"
    reading, plain = "cat-lin-noop-file-equal", "cat-lin-redelivery"
    assert "reading" in _rows(ours)[reading] and "reading" not in _rows(ours)[plain]
    _, report = _matrix(
        tmp_path,
        "catalogue",
        *("--clients", "python", "--servers", EMULATOR, "python"),
        *("--transports", "stdio", "--auth", "none", "--scenarios", str(ours)),
        *("--scenario", reading, "--scenario", plain),
    )
    by_server = {c["server"]: c for c in report["combinations"]}
    emulated = {r["id"]: r for r in rows_of(report, by_server[EMULATOR])}
    assert emulated[reading]["status"] == "unsupported"
    assert (
        "a file update whose before and after are equal is a no-op" in (emulated[reading]["error"])
    )
    assert emulated[plain]["status"] == "passed", emulated[plain].get("error")
    python = {r["id"]: r for r in rows_of(report, by_server["python"])}
    assert python[reading]["status"] == python[plain]["status"] == "passed"
