"""`python -m interop smoke`: an honest adapter passes, each broken copy fails with its fix."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from interop import ROOT
from interop.cli import main
from tests.conftest import named


def _smoke(tmp_path: Path, directory: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    reference_root = tmp_path / "references"
    if not reference_root.exists():
        shutil.copytree(directory.parent / "reference", reference_root / "reference")
    argv = ["smoke", "--adapter-dir", named(directory), "--adapters-root", str(reference_root)]
    code = main([*argv, "--reference", "reference"])
    return code, capsys.readouterr().err


@pytest.fixture
def adapters(fake_adapter: Callable[..., Path]) -> Callable[..., Path]:
    fake_adapter("reference")

    def make(server: str = "honest", **extensions: object) -> Path:
        return fake_adapter("under-test", server=server, **extensions)

    return make


def test_an_honest_adapter_passes_every_check(
    tmp_path: Path, adapters: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = _smoke(tmp_path, adapters(), capsys)
    assert code == 0, output
    assert "FAIL" not in output
    assert "an event it cannot know is reported unsupported" in output


@pytest.mark.parametrize(
    ("server", "failing", "fix"),
    [
        ("no-readiness", "server starts", "writes the readiness file atomically"),
        ("stdout-garbage", "an HTTP server prints nothing on stdout", "stderr only"),
        ("ignore-release", "a barrier holds the reply", "until POST /release"),
        ("server-grandchild", "nothing of the server is left running", "Kill the whole"),
    ],
)
def test_a_broken_server_fails_its_check_with_the_fix(
    tmp_path: Path,
    adapters: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    server: str,
    failing: str,
    fix: str,
) -> None:
    code, output = _smoke(tmp_path, adapters(server=server), capsys)
    assert code == 1
    failed = [line for line in output.splitlines() if line.startswith("FAIL")]
    assert any(failing in line for line in failed), output
    assert fix in output


def test_a_misspelt_manifest_key_is_named_with_the_right_one(
    tmp_path: Path, adapters: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    directory = adapters()
    manifest = json.loads((directory / "adapter.json").read_text())
    manifest["extensions"]["serverReuse "] = manifest["extensions"].pop("serverReuse")
    (directory / "adapter.json").write_text(json.dumps(manifest))
    code, output = _smoke(tmp_path, directory, capsys)
    assert code == 1
    assert "unknown key 'serverReuse '; did you mean 'serverReuse'?" in output
    assert "fix:" in output


@pytest.mark.skipif(
    not (ROOT / "adapters" / "python" / ".venv").is_dir(), reason="the Python adapter is not built"
)
@pytest.mark.parametrize("name", ["python", "typescript"])
def test_our_adapters_pass(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    other = "typescript" if name == "python" else "python"
    argv = ["smoke", "--adapter-dir", named(ROOT / "adapters" / name), "--reference", other]
    code = main([*argv, "--no-build"])
    assert code == 0, capsys.readouterr().err


UPSTREAM_SDK = ROOT / "tests" / "fakes" / "upstream_sdk"
ELICITATION_CHECKS = (
    "the elicitation receiver (interop/elicitation.*) announces its endpoint",
    "POST /receipts with the event token answers 200 and a list",
    "another token is refused 401",
    "an upload with the upload token answers 201 {ref, size, sha256}",
)


def _smoke_v1(sdk: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["smoke", "--adapter-dir", f"upstream={sdk}", "--no-build"])
    return code, capsys.readouterr().err


def test_a_v1_sdks_elicitation_receiver_is_checked_by_upstreams_convention(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, output = _smoke_v1(UPSTREAM_SDK, capsys)
    assert code == 0, output
    for check in ELICITATION_CHECKS:
        assert f"ok   {check}" in output, check


def test_a_v1_receiver_taking_any_token_fails_with_the_fix(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UPSTREAM_EMULATOR_FAULT", "elicitation-any-token")
    code, output = _smoke_v1(UPSTREAM_SDK, capsys)
    assert code == 1
    assert "FAIL another token is refused 401: answered 200" in output
    assert "exactly one Authorization: Bearer" in output


COMPACTION_CHECKS = (
    "the compaction-wire receiver (interop/compaction_wire.*) announces its endpoint",
    "a valid context.compact.before (inline text) is answered with its scope's action and recorded",
    "an invalid request (no trigger) is answered -32602 and not recorded",
)


def test_a_v1_sdks_compaction_wire_receiver_is_checked_by_upstreams_convention(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, output = _smoke_v1(UPSTREAM_SDK, capsys)
    assert code == 0, output
    for check in COMPACTION_CHECKS:
        assert f"ok   {check}" in output, check


@pytest.mark.parametrize(
    ("fault", "failed"),
    [
        ("compaction-wire-body-refs", COMPACTION_CHECKS[1]),  # refuses inline text
        ("compaction-wire-accept-all", COMPACTION_CHECKS[2]),  # records what it must refuse
    ],
)
def test_a_wrong_compaction_wire_receiver_fails_with_the_fix(
    fault: str,
    failed: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("UPSTREAM_EMULATOR_FAULT", fault)
    code, output = _smoke_v1(UPSTREAM_SDK, capsys)
    assert code == 1
    assert f"FAIL {failed}: answered 200" in output, output
    others = [c for c in COMPACTION_CHECKS if c != failed]
    assert all(f"ok   {c}" in output for c in others), output


@pytest.mark.parametrize(
    ("adapter", "check"),
    [("elicitation.py", ELICITATION_CHECKS[0]), ("compaction_wire.py", COMPACTION_CHECKS[0])],
)
def test_a_v1_sdk_without_a_non_core_adapter_is_not_checked_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], adapter: str, check: str
) -> None:
    sdk = tmp_path / "sdk"
    shutil.copytree(UPSTREAM_SDK, sdk, ignore=shutil.ignore_patterns("__pycache__"))
    (sdk / "interop" / adapter).unlink()
    code, output = _smoke_v1(sdk, capsys)
    assert code == 0, output
    assert f"--   {check}: not checked" in output
