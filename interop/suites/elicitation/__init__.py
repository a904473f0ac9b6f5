"""The elicitation suite (docs/ELICITATION.md)."""

from interop.suites.elicitation.suite import ElicitationSuite

__all__ = ["ElicitationSuite"]
