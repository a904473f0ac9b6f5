"""`python -m interop repro BUNDLE [--client NAME]`: would another client derive the
same thing from these exact bytes?

A core bundle (interop/report/bundles.py) holds the failed row's scenario row and,
when its recheck had a capture, what the server really answered. This replays
that answer, the captured one or else the scripted one (said so), to a client:
the row is run with the answer as its scripted response, served unchanged by our
Python server, and judged against the row's expected outcome. The run goes into
`BUNDLE/repro-<client>/`. Exit 0 when the client derives the expected outcome
from those bytes, 1 when it does not, 2 when the bundle cannot be replayed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from interop import ROOT

REPLAYER = "python"  # the server that sends the replayed answer unchanged


def _captured(bundle: Path, request_id: Any) -> tuple[Any, str] | None:
    """The server's answer to `request_id` in the bundle's capture, and where from."""
    frames = bundle / "capture.json"
    if frames.is_file():
        for frame in json.loads(frames.read_text(encoding="utf-8")):
            try:
                request = json.loads(frame["request"]["body"])
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(request, dict) and request.get("id") == request_id:
                answer = frame["answer"]
                if answer["status"] != 200:
                    return {"httpStatus": answer["status"]}, "capture.json"
                return json.loads(answer["body"]), "capture.json"
    lines = bundle / "capture.jsonl"
    if lines.is_file():
        for line in lines.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("request") == request_id and "reply" in entry:
                return entry["reply"], "capture.jsonl"
    return None


def repro_command(bundle: Path, client: str | None) -> int:
    try:
        record = json.loads((bundle / "row.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"error: {bundle}/row.json: {exc} (is it a repro bundle?)", file=sys.stderr)
        return 2
    scenario = record.get("scenario")
    if record.get("suite") != "core" or not isinstance(scenario, dict):
        print(
            f"error: {bundle}: repro replays core rows only; run `sh {bundle}/rerun.sh` "
            "to run this row again",
            file=sys.stderr,
        )
        return 2
    request_id = scenario["request"].get("id")
    found = _captured(bundle, request_id)
    if found is None:
        answer, origin = scenario["response"], "the scripted response (no capture in the bundle)"
    else:
        answer, origin = found[0], f"the answer the server really sent ({found[1]})"
    if isinstance(answer, dict) and "httpStatus" in answer:
        print(
            f"the server refused the request with HTTP {answer['httpStatus']}: there is no "
            "answer to replay (the bundle's row.json says whom the refusal was charged to)",
            file=sys.stderr,
        )
        return 2
    name = client or str(record["combination"]["client"])
    folder = bundle / f"repro-{name}"
    folder.mkdir(exist_ok=True)
    row = {k: v for k, v in scenario.items() if k != "response"}
    row["response"] = answer
    scenarios = folder / "scenarios.json"
    scenarios.write_text(json.dumps({"version": 1, "scenarios": [row]}, indent=1), "utf-8")
    argv = [sys.executable, "-m", "interop", "matrix", "--suite", "core"]
    argv += ["--scenarios", str(scenarios), "--clients", name, "--servers", REPLAYER]
    argv += ["--transports", "http", "--auth", "none", "--recheck", "0", "--quiet"]
    argv += ["--profile", str(record.get("profile") or "strict")]
    for adapter, directory in (record.get("adapters") or {}).items():
        path = Path(str(directory).replace("<repo>", str(ROOT))).resolve()
        built_in = path.is_relative_to(ROOT / "adapters")  # found without naming it
        if adapter == name and not built_in:
            argv += ["--adapter-dir", f"{adapter}={path}"]
    argv += ["--output", str(folder / "report.json")]
    print(f"replaying {origin} to {name}: {' '.join(argv)}", file=sys.stderr)
    done = subprocess.run(argv, cwd=ROOT, check=False)
    try:
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        print(f"error: the replay wrote no report (status {done.returncode})", file=sys.stderr)
        return 2
    rows = [
        r
        for c in report["combinations"]
        for result in c.get("results", {}).values()
        for r in result.get("rows", [])
    ]
    passed = not rows and report["summary"]["rows"]["passed"] == 1
    if passed:
        print(f"{name} derived the expected outcome from these bytes", file=sys.stderr)
        return 0
    said = rows[0].get("error") if rows else "no verdict"
    print(f"{name} did not derive the expected outcome from these bytes: {said}", file=sys.stderr)
    return 1
