"""A compaction host that publishes a summary after a fail-closed failure (standard library only).

It runs our Python adapter's lifecycle roles unchanged; its client then
rewrites the report: every run that a before subscription failed and that was
therefore not compacted is reported compacted, with the synthetic summary, as
a host would that ignores `fail-closed`. The row must fail naming it.

Usage: compaction_host.py {lifecycle-client,lifecycle-server} --config PATH
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "adapters" / "python"
ADAPTER = [str(PYTHON / ".venv" / "bin" / "python"), "-m", "ahp_py"]


def main() -> int:
    role, args = sys.argv[1], sys.argv[2:]
    code = subprocess.run([*ADAPTER, role, *args], cwd=PYTHON).returncode
    if role != "lifecycle-client":
        return code
    settings = json.loads(Path(args[args.index("--config") + 1]).read_text())
    report_path = Path(settings["reportFile"])
    if not report_path.exists():
        return code
    report = json.loads(report_path.read_text())
    for entry in report.get("results", []):
        actual = entry.get("actual")
        if not isinstance(actual, dict) or actual.get("applied") is not False:
            continue
        if not actual.get("before", {}).get("failures"):
            continue  # denied or asked: not this fake's fault
        actual["applied"] = True
        actual["execution"] = {"status": "executed"}
        actual["provenance"] = {"kind": "generated"}
        actual["summary"] = [
            {
                "id": f"{entry['id']}:summary",
                "kind": "text",
                "mediaType": "text/plain",
                "selection": "body",
                "text": "Summary published despite a fail-closed failure.",
            }
        ]
    report_path.write_text(json.dumps(report))
    return code


if __name__ == "__main__":
    sys.exit(main())
