"""`python -m interop scenarios [--check]`: every suite's declared generator, in suite order.

Each suite that writes its own scenario files declares the script that writes them
(`Declaration.generator`); this runs each one as its own process (`--check`: each
exits 1 unless the files on disk are byte for byte what it writes), so the noxfile,
CI and a newcomer name no generator and no suite.
"""

from __future__ import annotations

import subprocess
import sys

from interop import ROOT
from interop.suites import DECLARATIONS


def generate_command(check: bool) -> int:
    """0 when every generator succeeded; else 1, naming each one that did not."""
    failed: list[str] = []
    for declared in DECLARATIONS.values():
        if declared.generator is None:
            continue
        argv = [sys.executable, declared.generator, *(["--check"] if check else [])]
        if subprocess.run(argv, cwd=ROOT, check=False).returncode != 0:
            failed.append(f"{declared.name} ({declared.generator})")
    if failed:
        print(f"scenario generators failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
