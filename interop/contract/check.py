"""Validation of every contract file against `schemas/contract/` (one error: file, field, rule)."""

from __future__ import annotations

import functools
from typing import Any

from interop import ROOT
from interop.schema import SchemaSet

CONTRACT_SCHEMAS = ROOT / "schemas" / "contract"


@functools.cache
def _schemas() -> SchemaSet:
    return SchemaSet(CONTRACT_SCHEMAS)


def contract_problem(schema: str, value: Any, *, text: str | bytes | None = None) -> str | None:
    """None when `value` satisfies `schemas/contract/<schema>`, else `field: rule`.

    `schema` is a file name, optionally with a fragment
    (`control.schema.json#/$defs/health`); `text`, the JSON text `value` was
    parsed from, if at hand (see `SchemaSet.issue`).
    """
    issue = _schemas().issue(schema, value, text=text)
    return None if issue is None else f"{issue.path}: {issue.message}"
