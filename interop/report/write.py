"""Writing every report file beside the JSON report, all redacted, none deleted that is not ours.

For `--output DIR/NAME.json` the run writes `NAME.json`, `NAME.xml`,
`NAME.html`, `NAME.timings.json` and the folder `NAME-logs/` (adapter logs,
`harness.log`). A rerun replaces a logs folder only when it carries the
marker this module puts in it.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.jsonvalue import dumps_canonical, dumps_compact
from interop.redact import Redactor
from interop.report.html import build_html
from interop.report.junit import build_junit

LOGS_MARKER = ".ahp-interop-logs"


@dataclass(frozen=True)
class ReportPaths:
    json: Path
    xml: Path
    html: Path
    timings: Path
    logs: Path

    @classmethod
    def for_output(cls, output: Path) -> ReportPaths:
        stem = output.name[: -len(output.suffix)] if output.suffix else output.name
        return cls(
            json=output,
            xml=output.with_name(stem + ".xml"),
            html=output.with_name(stem + ".html"),
            timings=output.with_name(stem + ".timings.json"),
            logs=output.with_name(stem + "-logs"),
        )

    def prepare_logs(self) -> None:
        """An empty logs folder; an existing one is removed only if a run made it."""
        if self.logs.exists():
            if not (self.logs / LOGS_MARKER).exists():
                raise FileExistsError(
                    f"{self.logs} exists and was not made by this harness: "
                    "choose another --output or move it away"
                )
            shutil.rmtree(self.logs)
        self.logs.mkdir(parents=True)
        (self.logs / LOGS_MARKER).write_text("made by python -m interop; safe to delete\n")

    def harness_log(self, text: str) -> None:
        with (self.logs / "harness.log").open("a", encoding="utf-8") as log:
            log.write(text.rstrip() + "\n")


def _atomic_write(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def write_reports(
    paths: ReportPaths, document: dict[str, Any], timings: dict[str, Any], redactor: Redactor
) -> list[Path]:
    """The JSON report (compact), JUnit XML, HTML and timings, each written atomically."""
    paths.json.parent.mkdir(parents=True, exist_ok=True)
    document = {**document, "logDir": paths.logs.name}
    text = redactor.stable(dumps_compact(document)) + "\n"
    redacted = json.loads(text)
    files = {
        paths.json: text.encode("utf-8"),
        paths.xml: redactor.bytes(build_junit(redacted)),
        paths.html: redactor.bytes(build_html(redacted, run=timings, logs_dir=paths.logs)),
        paths.timings: dumps_canonical(timings).encode("utf-8"),
    }
    for path, data in files.items():
        _atomic_write(path, data)
    return list(files)
