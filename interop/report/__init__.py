"""Reports: deterministic JSON, JUnit XML, HTML, and the terminal summary."""

from __future__ import annotations

from interop.report.document import build_document, build_timings
from interop.report.write import write_reports

__all__ = ["build_document", "build_timings", "write_reports"]
