"""Shared fixtures: fake adapters on disk and a small scenario file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from interop import ROOT

FAKE = Path(__file__).parent / "fakes" / "fake_adapter.py"


def named(directory: Path) -> str:
    """`NAME=PATH` for `--adapter-dir`: a test's adapter is named after its folder (an
    extra adapter is otherwise named after its manifest's language)."""
    return f"{directory.name}={directory}"


def matrix_argv(dirs: list[Path], scenario_file: Path, output: Path, *extra: str) -> list[str]:
    """`python -m interop` arguments for a quiet run over only the given adapters."""
    argv = ["matrix", "--suite", "core", "--scenarios", str(scenario_file), "--output", str(output)]
    argv.append("--quiet")
    argv += ["--auth", "none", "--adapters-root", str(output.parent / "no-builtin-adapters")]
    for directory in dirs:
        argv += ["--adapter-dir", named(directory)]
    return [*argv, *extra]


@pytest.fixture
def fake_adapter(tmp_path: Path) -> Callable[..., Path]:
    """Make an adapter directory named `name` whose client/server misbehave as told."""

    def make(
        name: str, client: str = "honest", server: str = "honest", **extensions: object
    ) -> Path:
        directory = tmp_path / "adapters" / name
        directory.mkdir(parents=True)
        manifest = {
            "language": "fake",
            "client": [sys.executable, str(FAKE), "client", "--behaviour", client],
            "server": [sys.executable, str(FAKE), "server", "--behaviour", server],
            "extensions": {
                "receiptLog": True,
                "serverReuse": True,
                "profiles": ["strict"],
                **extensions,
            },
        }
        (directory / "adapter.json").write_text(json.dumps(manifest))
        return directory

    return make


@pytest.fixture
def small_set(tmp_path: Path) -> Path:
    """Eight upstream scenarios: positives, a rejection and a host-layer row."""
    upstream = json.loads((ROOT / "scenarios" / "upstream" / "scenarios.json").read_text())
    wanted = [
        "empty-response-preserves-input",
        "deny-blocks",
        "ask-defers-execution",
        "return-null-preserved",
        "modify-merge-shallow-null-literal",
        "modify-then-unknown-rejects-entire-response",
        "wrong-response-id",
        "invalid-task-zero-rejects-staged-message",
    ]
    chosen = [s for s in upstream["scenarios"] if s["id"] in wanted]
    assert len(chosen) == len(wanted)
    path = tmp_path / "small.json"
    path.write_text(json.dumps({"version": 1, "scenarios": chosen}, indent=1))
    return path


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's install (`./install.sh`) into a fresh environment, once per session."""
    venv = tmp_path_factory.mktemp("install") / "env"
    env = {**os.environ, "PYTHON": sys.executable}
    subprocess.run([str(ROOT / "install.sh"), str(venv)], check=True, env=env, timeout=600)
    return venv
