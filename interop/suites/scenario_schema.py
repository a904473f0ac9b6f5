"""Scenario files checked against the JSON Schema of their format (`schemas/scenarios/`).

Every scenario format has a schema named after it (`core`, `lifecycle`, `catalogue`,
`compaction`, `compaction-host`, `elicitation`: `schemas/scenarios/<name>.schema.json`),
and a suite's loader calls `validate_document(path, document, name)` before anything
else reads the file. What a schema cannot say (ids unique in a file, a request id
equal to its row's, references between a row's parts) stays in the loaders.

A problem is one line naming the row (its index, and its id when it has one) and
the field (its JSON path below the row), e.g.

    scenarios/core.json: scenarios[12] (id 'deny-1'): expected.decison: unknown key
    (did you mean 'decision'?); the keys here are decision, permission, executed, ...

When a file has several problems, the first in document order is the one named.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema import ValidationError

from interop import ROOT
from interop.schema import SchemaSet
from interop.suites.base import ScenarioError

SCHEMA_DIR = ROOT / "schemas" / "scenarios"
SUFFIX = ".schema.json"
COMMON = "common"  # shared definitions: no file is of this format

JsonPath = tuple[str | int, ...]


@functools.cache
def schemas() -> SchemaSet:
    """Every scenario schema, in one registry, loaded once per process."""
    return SchemaSet(SCHEMA_DIR)


def formats() -> list[str]:
    """The format names a suite may declare: one per schema file but the shared one."""
    return sorted(
        name.removesuffix(SUFFIX)
        for name in schemas().names()
        if name.endswith(SUFFIX) and name != COMMON + SUFFIX
    )


def schema_file(name: str) -> str:
    """`core` -> `core.schema.json` (a name no schema has is a programming error)."""
    if name not in formats():
        raise ValueError(f"no scenario schema {name!r}; the formats are {', '.join(formats())}")
    return name + SUFFIX


@dataclass(frozen=True)
class Problem:
    """One place where a document breaks its format's schema."""

    path: JsonPath  # where, in the document (for a missing key: the key's own path)
    text: str  # what is wrong there
    row: int | None = None  # the row's index in `scenarios`, when the place is in a row
    row_id: str | None = None  # the row's id, when it has a usable one

    @property
    def where(self) -> str:
        """`scenarios[12] (id 'deny-1')`, or "" outside the rows."""
        if self.row is None:
            return ""
        named = f" (id {self.row_id!r})" if self.row_id is not None else ""
        return f"scenarios[{self.row}]{named}"

    @property
    def field(self) -> str:
        """The JSON path below the row (from the top outside the rows); "" for the row."""
        return dotted(self.path[2:] if self.row is not None else self.path)

    @property
    def detail(self) -> str:
        """`field: text`: the problem without naming the row."""
        return ": ".join(part for part in (self.field, self.text) if part)

    def __str__(self) -> str:
        return ": ".join(part for part in (self.where, self.detail) if part)


def dotted(path: Iterable[str | int]) -> str:
    """`expected.states["lc-a:a"].flow`, `steps[3].op`: a JSON path without the `$`."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _PLAIN_KEY.match(step):
            out += f".{step}" if out else step
        else:
            out += f"[{json.dumps(step, ensure_ascii=False)}]"
    return out


_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")


def row_where(path: Path, index: int, raw: Any) -> str:
    """`<file>: scenarios[3] (id 'x')`: how a loader names a row in its own checks."""
    found = Problem((), "", index, _row_id(raw))
    return f"{path}: {found.where}"


def validate_document(path: Path, document: Any, name: str) -> None:
    """Check a parsed scenario file against `schemas/scenarios/<name>.schema.json`;
    the first problem (in document order) raises ScenarioError naming the file, the
    row and the field."""
    validator = schemas().validator(schema_file(name))
    if validator.is_valid(document):
        return
    found = _problems(document, validator.iter_errors(document), every_row=False)
    raise ScenarioError(f"{path}: {found[0]}")


def problems(document: Any, name: str) -> list[Problem]:
    """Every row's first problem, and the first one outside the rows, in document order
    (`tools/check_conformance.py` lists them all)."""
    validator = schemas().validator(schema_file(name))
    return _problems(document, validator.iter_errors(document), every_row=True)


def row_problem(row: Any, name: str) -> str | None:
    """One row against its format's row definition (`#/$defs/row`): the first problem
    as `field: text`, or None (`tools/scenario_lint.py`)."""
    validator = schemas().validator(schema_file(name) + "#/$defs/row")
    if validator.is_valid(row):
        return None
    wrapped = {"scenarios": [row]}  # so that paths and row ids read as in a file
    errors = []
    for error in validator.iter_errors(row):
        error.path.extendleft([0, "scenarios"])
        errors.append(error)
    return _problems(wrapped, errors, every_row=False)[0].detail


# ---------------------------------------------------------------- choosing and wording


def _row_id(raw: Any) -> str | None:
    sid = raw.get("id") if isinstance(raw, dict) else None
    return sid if isinstance(sid, str) and sid else None


def _problems(
    document: Any, errors: Iterable[ValidationError], *, every_row: bool
) -> list[Problem]:
    found = sorted(
        (_position(document, place), _RANK.get(str(error.validator), len(_RANK)), n, place, error)
        for n, error in enumerate(errors)
        for place in [_place(error)]
    )
    chosen: list[Problem] = []
    seen: set[int | None] = set()
    for _, _, _, place, error in found:
        row = place[1] if len(place) >= 2 and place[0] == "scenarios" else None
        if not isinstance(row, int):
            row = None
        if row in seen:
            continue
        seen.add(row)
        raw = document["scenarios"][row] if row is not None else None
        chosen.append(Problem(place, _text(error), row, _row_id(raw)))
        if not every_row:
            break
    return chosen


# at one place, the error that explains most: an unknown key (often a misspelt one),
# then a missing one, then a wrong type
_RANK = {"additionalProperties": 0, "required": 1, "type": 2, "const": 3, "enum": 3}


def _place(error: ValidationError) -> JsonPath:
    """The path of the field an error is about: a missing or unknown key's own path."""
    path: JsonPath = tuple(error.absolute_path)
    if error.validator == "required":
        return (*path, _missing(error))
    if error.validator == "additionalProperties":
        extra = _extra(error)
        return (*path, extra[0]) if extra else path
    if error.validator == "dependentRequired":
        return (*path, _dependent(error)[0])
    return path


def _position(document: Any, path: JsonPath) -> tuple[int, ...]:
    """Where `path` sits in the document: list indexes and key positions, so sorting
    follows the file (a key that is not there sorts after the object's keys)."""
    out: list[int] = []
    node = document
    for step in path:
        if isinstance(node, list) and isinstance(step, int):
            out.append(step)
            node = node[step] if 0 <= step < len(node) else None
        elif isinstance(node, dict) and isinstance(step, str):
            keys = list(node)
            out.append(keys.index(step) if step in node else len(keys))
            node = node.get(step)
        else:
            out.append(0)
            node = None
    return tuple(out)


def _missing(error: ValidationError) -> str:
    instance = error.instance if isinstance(error.instance, dict) else {}
    wanted = error.validator_value if isinstance(error.validator_value, list) else []
    return next((k for k in wanted if isinstance(k, str) and k not in instance), "?")


def _extra(error: ValidationError) -> list[str]:
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = schema.get("properties", {})
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    instance = error.instance if isinstance(error.instance, dict) else {}
    return [
        key for key in instance if key not in known and not any(p.search(key) for p in patterns)
    ]


def _dependent(error: ValidationError) -> tuple[str, str]:
    """(the key present, the key it needs beside it)."""
    instance = error.instance if isinstance(error.instance, dict) else {}
    needs = error.validator_value if isinstance(error.validator_value, dict) else {}
    for key, wanted in needs.items():
        if key in instance:
            for other in wanted:
                if other not in instance:
                    return key, other
    return "?", "?"


_JSON_TYPES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def shown(value: Any, limit: int = 60) -> str:
    """A value as JSON, cut to `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _listed(values: Sequence[Any]) -> str:
    return ", ".join(v if isinstance(v, str) else shown(v) for v in values)


def _hint(given: Any, options: Iterable[Any]) -> str:
    """` (did you mean 'x'?)` for a string close to one of `options`, else ""."""
    if not isinstance(given, str):
        return ""
    strings = [o for o in options if isinstance(o, str)]
    close = difflib.get_close_matches(given, strings, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _text(error: ValidationError) -> str:
    """What is wrong, in words, with the failing schema's description when it has one."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    described = schema.get("description")
    value, instance, keyword = error.validator_value, error.instance, error.validator
    if keyword == "not":
        return described or "not allowed here"
    if keyword == "additionalProperties":
        extra = _extra(error)
        known = list(schema.get("properties", {}))
        head = "unknown key" + (_hint(extra[0], known) if extra else "")
        text = f"{head}; the keys here are {', '.join(known)}" if known else head
        others = extra[1:]
        if others:
            text += f" (also unknown here: {', '.join(others)})"
    elif keyword == "required":
        text = "missing; required here: " + ", ".join(value)
    elif keyword == "dependentRequired":
        text = f"needs {_dependent(error)[1]!r} beside it"
    elif keyword == "type":
        wanted = [value] if isinstance(value, str) else list(value)
        text = (
            f"expected {' or '.join(_JSON_TYPES.get(t, t) for t in wanted)}, "
            f"got {_type_of(instance)}"
        )
    elif keyword == "enum":
        text = f"{shown(instance)} is not one of {_listed(value)}{_hint(instance, value)}"
    elif keyword == "const":
        text = f"must be {shown(value)}, got {shown(instance)}"
    elif keyword == "minItems":
        text = "must not be empty" if value == 1 else f"needs at least {value} items"
    elif keyword == "maxItems":
        text = "must be empty" if value == 0 else f"may hold at most {value} items"
    elif keyword == "minLength":
        text = "must be a non-empty string" if value == 1 else f"needs {value} characters"
    elif keyword == "minimum":
        text = f"must be at least {value}, got {shown(instance)}"
    elif keyword == "maximum":
        text = f"must be at most {value}, got {shown(instance)}"
    elif keyword == "uniqueItems":
        text = "holds the same item twice"
    elif keyword == "pattern":
        if described:  # the description says what the pattern stands for
            return f"{shown(instance)} is not {described}"
        text = f"{shown(instance)} does not match {value}"
    else:
        text = error.message
    return f"{text}; {described}" if described else text
