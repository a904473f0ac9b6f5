"""The suites, found by their declarations: one package per suite, nothing else lists them.

Every package under this folder whose `__init__` holds a `SUITE` (an
`interop.suites.declaration.Declaration`) is a suite; `DECLARATIONS` holds them in
their declared order and `SUITES` their classes by name. `AHP_INTEROP_SUITE_PATH`
(folders separated by the platform's path separator) adds folders whose suite
packages join them, as `interop.suites.<name>`: a suite kept outside this repository,
or a test's own. Each suite says which scenario sets it runs by default, how
combinations group into jobs (jobs run in parallel; combinations inside a job run in
order), how one job runs, and how its rows are judged (`interop.suites.base.Suite`).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from pathlib import Path
from typing import Any

from interop.suites.base import Suite
from interop.suites.declaration import Declaration

SUITE_PATH_ENV = "AHP_INTEROP_SUITE_PATH"


def _extend_path() -> None:
    """The folders of `AHP_INTEROP_SUITE_PATH` searched for suite packages too."""
    for folder in os.environ.get(SUITE_PATH_ENV, "").split(os.pathsep):
        if folder and str(Path(folder).resolve()) not in __path__:
            if not Path(folder).is_dir():
                raise SystemExit(f"{SUITE_PATH_ENV}: {folder} is not a folder")
            __path__.append(str(Path(folder).resolve()))


def _declarations() -> dict[str, Declaration]:
    _extend_path()
    found: list[Declaration] = []
    for module in pkgutil.iter_modules(__path__):
        if not module.ispkg:
            continue
        declared = getattr(importlib.import_module(f"{__name__}.{module.name}"), "SUITE", None)
        if declared is None:
            continue
        if not isinstance(declared, Declaration) or declared.name != module.name:
            raise SystemExit(
                f"interop/suites/{module.name}: SUITE must be a Declaration named "
                f"{module.name!r} (interop/suites/declaration.py)"
            )
        found.append(declared)
    found.sort(key=lambda d: (d.order, d.name))
    return {d.name: d for d in found}


DECLARATIONS: dict[str, Declaration] = _declarations()
SUITES: dict[str, type[Suite[Any]]] = {
    name: declared.suite for name, declared in DECLARATIONS.items()
}

__all__ = ["DECLARATIONS", "SUITES", "SUITE_PATH_ENV", "Declaration", "Suite"]
