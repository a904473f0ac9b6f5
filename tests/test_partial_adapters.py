"""A partial adapter (docs/CONTRACT.md, "Partial adapters"): what it declares it lacks is
`unsupported` with the reason, never failed, and smoke checks only what it declares.

The adapter under test is the fake (tests/fakes/fake_adapter.py) with its `client`
command removed and `extensions.roles` / `extensions.auth` declaring a server that
supports `none` and `bearer`; its peer is a whole fake.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.cli import main
from interop.contract.manifest import ManifestError, load_manifest
from tests.conftest import named


def _server_only(make: Callable[..., Path], name: str = "srv") -> Path:
    directory = make(name, roles={"*": ["server"]}, auth=["none", "bearer"])
    manifest = json.loads((directory / "adapter.json").read_text())
    del manifest["client"]
    (directory / "adapter.json").write_text(json.dumps(manifest))
    return directory


def test_a_server_only_adapter_passes_smoke_on_what_it_declares(
    tmp_path: Path, fake_adapter: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    reference = fake_adapter("reference")
    root = tmp_path / "references"
    shutil.copytree(reference, root / "reference")
    argv = ["smoke", "--adapter-dir", named(_server_only(fake_adapter))]
    code = main([*argv, "--adapters-root", str(root), "--reference", "reference"])
    output = capsys.readouterr().err
    assert code == 0, output
    assert "FAIL" not in output
    assert "--   the client: not checked (extensions.roles gives srv no client" in output
    assert "ok   server starts" in output


def test_what_a_partial_adapter_lacks_is_unsupported_with_the_reason(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    server_only, peer = _server_only(fake_adapter), fake_adapter("peer")
    output = tmp_path / "out" / "report.json"
    argv = ["matrix", "--suite", "core", "--scenarios", str(small_set), "--quiet"]
    argv += ["--output", str(output), "--auth", "none", "bearer", "mtls"]
    argv += ["--adapter-dir", named(server_only), "--adapter-dir", named(peer)]
    argv += ["--adapters-root", str(tmp_path / "no-builtin-adapters")]
    assert main(argv) == 0
    report: dict[str, Any] = json.loads(output.read_text())
    seen: dict[tuple[str, str, str, str], tuple[str, set[str]]] = {}
    for c in report["combinations"]:
        rows = [r for b in c["results"].values() for r in b["rows"]]
        reasons = {str(r.get("error")) for r in rows if r["status"] == "unsupported"}
        seen[(c["client"], c["server"], c["transport"], c["auth"])] = (c["status"], reasons)
    assert seen[("peer", "srv", "http", "none")][0] == "passed"
    assert seen[("peer", "srv", "http", "bearer")][0] == "passed"
    assert seen[("peer", "srv", "stdio", "none")][0] == "passed"
    status, reasons = seen[("peer", "srv", "http", "mtls")]
    assert status == "unsupported"
    assert reasons == {
        "srv does not support the mtls auth mode (its manifest's extensions.auth: none, bearer)"
    }
    for key in [("srv", "peer", "http", "none"), ("srv", "srv", "stdio", "none")]:
        status, reasons = seen[key]
        assert status == "unsupported", key
        assert reasons == {
            "srv has no client for the core suite (its manifest's extensions.roles: *: server)"
        }, key
    assert not [c for c in report["combinations"] if c["status"] == "failed"]


def test_a_missing_core_command_names_the_role_and_the_fix(
    fake_adapter: Callable[..., Path],
) -> None:
    directory = fake_adapter("half")
    manifest = json.loads((directory / "adapter.json").read_text())
    del manifest["client"]
    (directory / "adapter.json").write_text(json.dumps(manifest))
    with pytest.raises(
        ManifestError, match=r"\$\.client is required.*\"roles\": \{\"\*\": \[\"server\"\]\}"
    ):
        load_manifest(directory / "adapter.json", "half")


def test_a_server_that_writes_headers_and_body_apart_is_flagged_slow(
    tmp_path: Path, fake_adapter: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Two writes without TCP_NODELAY: each answer waits on the client's delayed ACK.
    Our Python client meets it and an honest fake server on the same rows; only the
    two-writes server is flagged, and it passes every row all the same. Sixty rows, so
    the delayed ACKs (about 40 ms each) outweigh a client's start-up on a loaded
    machine (with eight rows a busy machine's start-up hid them)."""
    upstream = json.loads((ROOT / "scenarios" / "upstream" / "scenarios.json").read_text())
    small_set = tmp_path / "sixty.json"
    rows = [s for s in upstream["scenarios"] if s.get("expectError") is not True][:60]
    small_set.write_text(json.dumps({"version": 1, "scenarios": rows}))
    slow = fake_adapter("slowpoke", server="two-writes", roles={"*": ["server"]})
    honest = fake_adapter("quick", roles={"*": ["server"]})
    for directory in (slow, honest):
        manifest = json.loads((directory / "adapter.json").read_text())
        del manifest["client"]
        (directory / "adapter.json").write_text(json.dumps(manifest))
    output = tmp_path / "out" / "report.json"
    argv = ["matrix", "--suite", "core", "--scenarios", str(small_set), "--quiet"]
    argv += ["--output", str(output), "--auth", "none", "--transports", "http"]
    argv += ["--clients", "python", "--servers", "slowpoke", "quick"]
    argv += ["--adapter-dir", named(slow), "--adapter-dir", named(honest)]
    assert main(argv) == 0
    timings = json.loads(output.with_name("report.timings.json").read_text())
    flagged = {(e["adapter"], e["role"]) for e in timings["slowSides"]}
    assert flagged == {("slowpoke", "server")}, timings["perRow"]
    assert "SLOW slowpoke as server over http in core" in capsys.readouterr().err
