"""The client report: one result per scenario row, written atomically.

Blind statuses only: ``completed`` (``actual`` is what the row derived),
``unsupported`` (``error`` names what is not implemented) and ``failed``
(``error`` says why the row could not run).
"""

from __future__ import annotations

from typing import Any

from .readiness import write_json_atomic


def completed(row_id: str, actual: Any) -> dict[str, Any]:
    return {"id": row_id, "status": "completed", "actual": actual}


def unsupported(row_id: str, error: str) -> dict[str, Any]:
    return {"id": row_id, "status": "unsupported", "error": error}


def failed(row_id: str, error: str) -> dict[str, Any]:
    return {"id": row_id, "status": "failed", "error": error}


def write_report(path: str, language: str, results: list[dict[str, Any]], **extra: Any) -> None:
    """``extra``: top-level keys a suite adds (the lifecycle suite's
    ``contentUploads`` and ``receipts``)."""
    write_json_atomic(path, {"language": language, "results": results, **extra})
