"""The compaction suite (docs/COMPACTION.md)."""

from interop.suites.compaction.suite import CompactionSuite

__all__ = ["CompactionSuite"]
