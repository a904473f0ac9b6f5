"""Row-id patterns as `--scenario` takes them (`fnmatch` rules, case-sensitive)."""

from __future__ import annotations


def exact(row_id: str) -> str:
    """A row id as a `--scenario` pattern that matches only itself."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in row_id)
