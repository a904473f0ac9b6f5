"""`python -m interop scenarios [--check]`: every suite's declared generator, in suite order,
and the index of scenario files and their schemas.

Each suite that writes its own scenario files declares the script that writes them
(`Declaration.generator`); this runs each one as its own process (`--check`: each
exits 1 unless the files on disk are byte for byte what it writes), so the noxfile,
CI and a newcomer name no generator and no suite. It then writes
`schemas/scenario-files.json`: every default scenario file with the schema of its
format, from the declarations, which every adapter's tests read to validate the same
files against the same schemas (`--check`: 1 unless the index is as written).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.suites import DECLARATIONS

INDEX = ROOT / "schemas" / "scenario-files.json"


def index() -> dict[str, Any]:
    """Each default scenario file once (the first suite that runs it), with its schema."""
    files: dict[str, dict[str, Any]] = {}
    for declared in DECLARATIONS.values():
        upstream = {d.path for d in declared.sets if d.upstream}
        for path, schema in declared.schemas():
            if Path(path).is_absolute():
                continue  # a suite kept outside this repository
            files.setdefault(
                path,
                {"file": path, "schema": f"{schema}.schema.json", "suite": declared.name}
                | {"upstream": path in upstream},
            )
    return {
        "description": "Every scenario file of the suites and the schema of its format; "
        "written by `python -m interop scenarios` from the suites' declarations.",
        "files": sorted(files.values(), key=lambda f: str(f["file"])),
    }


def _index_text() -> str:
    return json.dumps(index(), indent=2) + "\n"


def generate_command(check: bool) -> int:
    """0 when every generator succeeded; else 1, naming each one that did not."""
    failed: list[str] = []
    for declared in DECLARATIONS.values():
        if declared.generator is None:
            continue
        argv = [sys.executable, declared.generator, *(["--check"] if check else [])]
        if subprocess.run(argv, cwd=ROOT, check=False).returncode != 0:
            failed.append(f"{declared.name} ({declared.generator})")
    text = _index_text()
    if not check:
        INDEX.write_text(text, encoding="utf-8")
    elif not INDEX.is_file() or INDEX.read_text(encoding="utf-8") != text:
        failed.append(f"{INDEX.relative_to(ROOT)} (run `python -m interop scenarios`)")
    if failed:
        print(f"scenario generators failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
