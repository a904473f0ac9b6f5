"""Writing every report file beside the JSON report, all redacted."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from interop.jsonvalue import dumps_canonical
from interop.redact import Redactor
from interop.report.html import build_html
from interop.report.junit import build_junit


def _atomic_write(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def write_reports(
    output: Path, document: dict[str, Any], timings: dict[str, Any], redactor: Redactor
) -> list[Path]:
    """`report.json` (given path), `report.xml`, `report.html`, `timings.json` beside it."""
    output.parent.mkdir(parents=True, exist_ok=True)
    text = redactor.stable(dumps_canonical(document))
    redacted = json.loads(text)
    files = {
        output: text.encode("utf-8"),
        output.with_suffix(".xml"): redactor.bytes(build_junit(redacted)),
        output.with_suffix(".html"): redactor.bytes(build_html(redacted)),
        output.with_name("timings.json"): dumps_canonical(timings).encode("utf-8"),
    }
    for path, data in files.items():
        _atomic_write(path, data)
    return list(files)
