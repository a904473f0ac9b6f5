"""The report commands: combine shard reports, render HTML, diff two reports, fetch a baseline.

`python -m interop report combine SHARD.json... --output FILE` writes the
unsharded run's report (JSON, JUnit, HTML and merged timings, as a run does);
`report html REPORT... --output FILE` renders one page (several reports are
combined first; `--baseline OLD.json` shows what changed);
`report previous ...` downloads the previous successful nightly's report
artifact with the GitHub CLI (the nightly's baseline); `python -m interop diff
OLD.json NEW.json` prints what changed and exits 1 on a regression. Each
returns the process exit code and prints its problems on stderr.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.coverage import coverage
from interop.jsonvalue import JsonError, dumps_canonical, load_file
from interop.known import KnownFailures
from interop.known import apply as apply_known
from interop.redact import Redactor
from interop.report.combine import CombineError, combine
from interop.report.diff import DiffError, diff
from interop.report.write import ReportPaths, write_reports


class ReportCommandError(ValueError):
    """A report command cannot do its job (the message names the file and why)."""


def _load(path: Path) -> dict[str, Any]:
    try:
        document = load_file(path)
    except (OSError, JsonError) as exc:
        raise ReportCommandError(f"{path}: {exc}") from None
    if not isinstance(document, dict):
        raise ReportCommandError(f"{path}: not a report (a JSON object)")
    return document


def _timings(reports: list[Path]) -> dict[str, Any]:
    """The shards' timings merged: every combination, suites added up, the longest total
    (the shards ran side by side). A shard without a timings file adds nothing."""
    merged: dict[str, Any] = {
        "totalSeconds": 0.0,
        "processStarts": 0,
        "suites": {},
        "combinations": {},
    }
    for report in reports:
        paths = ReportPaths.for_output(report)
        if not paths.timings.exists():
            continue
        timings = json.loads(paths.timings.read_text(encoding="utf-8"))
        merged["totalSeconds"] = max(merged["totalSeconds"], timings.get("totalSeconds", 0.0))
        merged["processStarts"] += timings.get("processStarts", 0)
        for suite, seconds in timings.get("suites", {}).items():
            merged["suites"][suite] = round(merged["suites"].get(suite, 0.0) + seconds, 3)
        merged["combinations"].update(timings.get("combinations", {}))
    merged["suites"] = dict(sorted(merged["suites"].items()))
    merged["combinations"] = dict(sorted(merged["combinations"].items()))
    return merged


def combined(reports: list[Path]) -> dict[str, Any]:
    """One report from several: a single report as it is, shards combined."""
    documents = [_load(p) for p in reports]
    if len(documents) == 1 and "shard" not in documents[0]:
        return documents[0]
    try:
        return combine(documents)
    except CombineError as exc:
        raise ReportCommandError(f"cannot combine {', '.join(map(str, reports))}: {exc}") from None


def combine_command(reports: list[Path], output: Path, known: KnownFailures | None) -> int:
    document = combined(reports)
    problems: list[str] = []
    if known is not None:
        document, problems = apply_known(document, known, complete=not document["incomplete"])
    document["coverage"] = coverage(document, ROOT)
    paths = ReportPaths.for_output(output)
    written = write_reports(paths, document, _timings(reports), Redactor())
    for problem in problems:
        print(f"known failures ({known.path.name if known else ''}): {problem}", file=sys.stderr)
    print(f"combined {len(reports)} reports into {written[0]}", file=sys.stderr)
    counts = document["summary"]["combinations"]
    return 1 if counts.get("failed") or problems else 0


def html_command(reports: list[Path], output: Path, baseline: Path | None) -> int:
    from interop.report.html import build_html  # the page's module is large: load it here

    document = combined(reports)
    extra: dict[str, Any] = {}
    if baseline is not None and not baseline.exists():
        print(f"no baseline report at {baseline}: the page shows no changes", file=sys.stderr)
    elif baseline is not None:
        try:
            extra["baseline"] = diff(_load(baseline), document).as_json()
        except DiffError as exc:
            raise ReportCommandError(f"--baseline {baseline}: {exc}") from None
    page = build_html(document, **extra)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(page)
    print(f"wrote {output}", file=sys.stderr)
    return 0


def diff_command(old: Path, new: Path, *, baseline_optional: bool, as_json: bool) -> int:
    if baseline_optional and not old.exists():
        print(f"no baseline report at {old}: nothing to compare", file=sys.stderr)
        return 0
    try:
        result = diff(_load(old), _load(new))
    except DiffError as exc:
        raise ReportCommandError(str(exc)) from None
    if as_json:
        print(dumps_canonical(result.as_json()), end="")
    else:
        for line in result.lines():
            print(line)
    return 1 if result.regression else 0


def previous_command(repository: str, workflow: str, artifact: str, output: Path) -> int:
    """Download `artifact` of the newest successful run of `workflow` into `output`
    (GitHub CLI, GH_TOKEN). No such run (the first nightly): nothing downloaded, 0."""
    if shutil.which("gh") is None:
        raise ReportCommandError("report previous needs the GitHub CLI (gh) on PATH")
    listed = subprocess.run(
        [
            *("gh", "run", "list", "--repo", repository, "--workflow", workflow),
            *("--status", "success", "--limit", "1", "--json", "databaseId"),
        ],
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:
        raise ReportCommandError(f"gh run list failed: {listed.stderr.strip()}")
    runs = json.loads(listed.stdout or "[]")
    if not runs:
        print(f"no successful run of {workflow} yet: no baseline", file=sys.stderr)
        return 0
    run_id = str(runs[0]["databaseId"])
    output.mkdir(parents=True, exist_ok=True)
    fetched = subprocess.run(
        [
            "gh",
            "run",
            "download",
            run_id,
            "--repo",
            repository,
            "--name",
            artifact,
            "--dir",
            str(output),
        ],
        capture_output=True,
        text=True,
    )
    if fetched.returncode != 0:
        print(
            f"run {run_id} has no artifact {artifact!r} ({fetched.stderr.strip()}): no baseline",
            file=sys.stderr,
        )
        return 0
    print(f"downloaded {artifact} of run {run_id} into {output}", file=sys.stderr)
    return 0


def summary_command(reports: list[Path], baseline: Path | None) -> int:
    """`report summary`: Markdown on stdout (interop/report/summary.py)."""
    from interop.report.summary import summary_markdown

    document = combined(reports)
    changes = None
    if baseline is not None and baseline.exists():
        try:
            changes = diff(_load(baseline), document).as_json()
        except DiffError as exc:
            raise ReportCommandError(f"--baseline {baseline}: {exc}") from None
    sys.stdout.write(summary_markdown(document, changes))
    return 0
