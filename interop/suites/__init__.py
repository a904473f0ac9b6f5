"""One module per suite, each on the shared machinery in `interop.runtime`.

A suite says which scenario sets it runs by default, how combinations group
into jobs (jobs run in parallel; combinations inside a job run in order), and
how one job runs.
"""

from __future__ import annotations

from interop.suites.auth import AuthSuite
from interop.suites.base import Suite
from interop.suites.catalogue import CatalogueSuite
from interop.suites.compaction import CompactionSuite
from interop.suites.core import CoreSuite
from interop.suites.elicitation import ElicitationSuite
from interop.suites.isolation import IsolationSuite
from interop.suites.lifecycle import LifecycleSuite

SUITES: dict[str, type[Suite]] = {
    "core": CoreSuite,
    "lifecycle": LifecycleSuite,
    "catalogue": CatalogueSuite,
    "isolation": IsolationSuite,
    "auth": AuthSuite,
    "compaction": CompactionSuite,
    "elicitation": ElicitationSuite,
}

__all__ = ["SUITES", "Suite"]
