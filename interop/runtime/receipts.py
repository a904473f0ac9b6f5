"""Receipts: the requests a server says it received, from its log or its control listener."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from interop.contract.check import contract_problem
from interop.jsonvalue import JsonError, loads
from interop.results import CombinationError


def read_receipt_log(path: Path, offset: int) -> tuple[list[Any], list[CombinationError]]:
    """Intercept receipts appended after `offset`; malformed lines are errors."""
    requests: list[Any] = []
    problems: list[CombinationError] = []
    if not path.exists():
        return requests, problems
    with path.open("rb") as handle:
        handle.seek(offset)
        for number, line in enumerate(handle.read().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = loads(line, origin=f"receipt line {number}")
            except JsonError as exc:
                problems.append(CombinationError("receipts", "ReceiptMalformed", str(exc)))
                continue
            problem = contract_problem("receipt-line.schema.json", entry, text=line)
            if problem is not None:
                problems.append(
                    CombinationError("receipts", "ReceiptMalformed", f"line {number}: {problem}")
                )
            elif entry["kind"] == "request":
                requests.append(entry.get("message"))
    return requests, problems
