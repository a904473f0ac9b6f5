"""The lifecycle suite (docs/LIFECYCLE.md): steps, chains, uploads, receiver probes."""

from interop.suites.lifecycle.suite import LifecycleSuite

__all__ = ["LifecycleSuite"]
