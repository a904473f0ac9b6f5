"""Signals at sampled moments of a run: each ends it promptly with nothing left behind.

`tools/signal_moments.py --moments 50` is the full version (50 moments per
signal over a real grid); this samples a few moments over fake adapters.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from interop import ROOT
from tests.conftest import named

sys.path.insert(0, str(ROOT / "tools"))
import signal_moments


@pytest.mark.parametrize(
    ("name", "delay"),
    [("INT", 0.05), ("TERM", 0.4), ("HUP", 0.9), ("TERM", 1.6), ("INT", 2.5), ("HUP", 0.0)],
)
def test_a_signal_at_any_moment_leaves_nothing(
    tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path, name: str, delay: float
) -> None:
    adapter = fake_adapter("fake")
    argv = ["--adapter-dir", named(adapter), "--adapters-root", str(tmp_path / "none")]
    argv += ["--suite", "core", "--scenarios", str(small_set), "--auth", "none", "bearer"]
    result = signal_moments.moment(name, delay, argv, grace=15.0)
    assert result.problems == [], result


def test_an_interrupt_inside_a_string_exec_still_exits_130_under_python_m(
    tmp_path: Path,
) -> None:
    """CPython marks a run whose string `exec` ended in KeyboardInterrupt (as a
    dataclass being made while a signal lands does) and, under `python -m`, ends it
    by SIGINT (-2) even though the interrupt was caught: the harness clears that mark
    so its own code (130, "interrupted") stands."""
    import os
    import subprocess

    module = tmp_path / "interrupted_in_exec.py"
    module.write_text(
        "import sys\n"
        "import interop.cli\n"
        "def boom():\n"
        "    exec('raise KeyboardInterrupt', {})\n"
        "interop.cli.main = boom\n"
        "from interop.__main__ import main\n"
        "sys.exit(main())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-m", "interrupted_in_exec"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (result.returncode, result.stderr.strip()) == (130, "interrupted")
