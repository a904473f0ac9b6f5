"""The toy scenario format: `toy.schema.json` is its whole shape; ids are unique in a file."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from interop.jsonvalue import JsonError, load_file
from interop.suites.base import ScenarioError, set_file, set_name

SCHEMA = Path(__file__).with_name("toy.schema.json")


@dataclass(frozen=True)
class ToyRow:
    id: str
    a: int
    b: int
    expected: int
    raw: dict[str, Any]


@dataclass(frozen=True)
class ToySet:
    name: str
    path: Path
    rows: list[ToyRow]


class ToySets(list[ToySet]):
    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "name": s.name,
                "file": set_file(s.path),
                "sha256": hashlib.sha256(s.path.read_bytes()).hexdigest(),
                "scenarios": len(s.rows),
                "rows": [(row.id, row.expected) for row in s.rows],
            }
            for s in self
        ]

    def row_count(self) -> int:
        return sum(len(s.rows) for s in self)


def _where(document: Any, path: list[Any]) -> str:
    """`scenarios[1] (id 'x'): field` for a JSON path into the document."""
    if len(path) >= 2 and path[0] == "scenarios" and isinstance(path[1], int):
        row = document["scenarios"][path[1]]
        named = f" (id {row['id']!r})" if isinstance(row, dict) and "id" in row else ""
        rest = ".".join(str(p) for p in path[2:])
        return f"scenarios[{path[1]}]{named}" + (f": {rest}" if rest else "")
    return ".".join(str(p) for p in path) or "the file"


def load_set(path: Path) -> ToySet:
    try:
        document = load_file(path)
    except (OSError, JsonError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    validator = Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    for error in sorted(validator.iter_errors(document), key=lambda e: list(e.path)):
        raise ScenarioError(f"{path}: {_where(document, list(error.path))}: {error.message}")
    rows = [ToyRow(r["id"], r["a"], r["b"], r["expected"], r) for r in document["scenarios"]]
    ids = [row.id for row in rows]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ScenarioError(f"{path}: the id {twice[0]!r} is used twice")
    return ToySet(set_name(path), path.resolve(), rows)


def load_sets(paths: list[Path]) -> ToySets:
    return ToySets(load_set(p) for p in paths)
