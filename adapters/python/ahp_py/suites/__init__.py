"""One module per suite, each declaring its ``SUITE`` (``contract/registry.py``):
its name and the commands it serves. No suite module imports another.

``SUITES`` is this adapter's table: a suite's name is its module's name here.
A new suite adds its module and its name below. ``find`` imports only the
module of the suite asked for, so a process loads one suite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..contract.registry import Suite

SUITES = ("core", "lifecycle", "catalogue", "compaction", "elicitation")


def find(name: str) -> Suite | None:
    """The suite ``name`` (None: this adapter does not implement it)."""
    if name not in SUITES:
        return None
    import importlib

    module = importlib.import_module(f"{__name__}.{name}")
    suite: Suite = module.SUITE
    if suite.name != name:  # pragma: no cover - the table and a module disagree
        raise LookupError(f"module {module.__name__} declares suite {suite.name!r}")
    return suite
