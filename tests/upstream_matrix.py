"""Matrix runs with the upstream-contract emulator (tests/fakes/upstream_sdk) on one
side, for the tests of the suites that drive a contract v1 SDK's non-core adapters."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.cli import main
from interop.report.document import rows_of

SDK = ROOT / "tests" / "fakes" / "upstream_sdk"
EMULATOR = "upstream"


def run_v1(
    tmp_path: Path, suite: str, client: str, server: str, *argv: str, sdk: Path = SDK
) -> dict[str, Any]:
    """One compat run of `suite` with the emulator named EMULATOR; `client` and
    `server` may name several adapters, separated by spaces."""
    output = tmp_path / "out" / "report.json"
    args = ["matrix", "--adapter-dir", f"{EMULATOR}={sdk}", "--profile", "compat", "--quiet"]
    args += ["--suite", suite, "--clients", *client.split(), "--servers", *server.split()]
    args += ["--output", str(output), *argv]
    main(args)
    return json.loads(output.read_text())


def rows_between(report: dict[str, Any], client: str, server: str) -> dict[str, dict[str, Any]]:
    """The rows, by id, of the one applicable combination of `client` and `server`."""
    (combination,) = [
        c
        for c in report["combinations"]
        if (c["client"], c["server"]) == (client, server) and c["status"] != "inapplicable"
    ]
    return {r["id"]: r for r in rows_of(report, combination)}


def picked(*ids: str) -> list[str]:
    return [arg for i in ids for arg in ("--scenario", i)]


def sdk_without_lifecycle_commands(tmp_path: Path) -> Path:
    """A copy of the emulator whose adapter.json declares only its core commands."""
    sdk = tmp_path / "sdk"
    shutil.copytree(SDK, sdk, ignore=shutil.ignore_patterns("__pycache__"))
    manifest_path = sdk / "interop" / "adapter.json"
    manifest = json.loads(manifest_path.read_text())
    for key in ("lifecycleClient", "lifecycleServer"):
        del manifest[key]
    manifest_path.write_text(json.dumps(manifest))
    return sdk
