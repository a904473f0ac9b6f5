"""The core suite: one intercept response applied by a client, every row, every combination."""

from interop.suites.core.suite import CoreSuite

__all__ = ["CoreSuite"]
