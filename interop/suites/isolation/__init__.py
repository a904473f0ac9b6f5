"""The sender isolation suite (docs/ISOLATION.md): uploads carry no event credential."""

from interop.suites.isolation.suite import IsolationSuite

__all__ = ["IsolationSuite"]
