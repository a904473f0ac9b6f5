"""`report summary`: a report as Markdown, for a CI job's summary page.

    ahp-interop report summary REPORT.json [--baseline OLD.json] >> "$GITHUB_STEP_SUMMARY"

The counts per suite, the distinct failures (as the terminal prints them), what
changed since the baseline when one is given, and the coverage lines: what an
SDK author reads first on a CI run's page. Written from the report alone.
"""

from __future__ import annotations

from typing import Any

from interop.coverage import coverage_lines
from interop.report.terminal import failure_summary

SHOWN = 40  # failure lines kept; the HTML page and the JSON have them all
STATUSES = ("passed", "failed", "flaky", "known-failing", "unsupported", "inapplicable", "not-run")


def summary_markdown(document: dict[str, Any], changes: dict[str, Any] | None = None) -> str:
    counts = document.get("summary", {})
    rows = counts.get("rows", {})
    verdict = "failed" if rows.get("failed") or rows.get("flaky") else "passed"
    if document.get("incomplete"):
        verdict = "incomplete"
    out = [f"## AHP Interop Matrix: {verdict}", ""]
    out += ["| suite | " + " | ".join(STATUSES) + " |", "|---" * (len(STATUSES) + 1) + "|"]
    for suite, figures in sorted(counts.get("suites", {}).items()):
        combos = figures.get("combinations", {})
        out.append(f"| {suite} | " + " | ".join(str(combos.get(s, 0)) for s in STATUSES) + " |")
    out += ["", "Combinations per suite above; rows: " + ", ".join(
        f"{rows.get(s, 0)} {s}" for s in STATUSES if rows.get(s)
    ) + ".", ""]  # fmt: skip
    if changes is not None:
        regressions = changes.get("regressions", [])
        out.append(f"### Since the baseline: {len(regressions)} regression(s)")
        out += [f"- `{r}`" for r in regressions[:SHOWN]] + [""]
    failures = failure_summary(document)
    if failures:
        out += ["### Failures", "", "```", *failures[:SHOWN]]
        if len(failures) > SHOWN:
            out.append(f"... {len(failures) - SHOWN} more lines in the report")
        out += ["```", ""]
    lines = coverage_lines(document.get("coverage", {}))
    if lines:
        out += ["### Coverage by requirement", "", "```", *lines, "```", ""]
    return "\n".join(out) + "\n"
