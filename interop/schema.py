"""Strict JSON loading and an ECMA-262-faithful JSON Schema validator for the project's schemas.

Three things differ from a plain ``jsonschema`` setup:

* JSON text is parsed strictly: duplicate object keys and the non-JSON
  constants ``NaN``/``Infinity`` are errors, never silently resolved.
* ``pattern`` follows ECMA-262 semantics: ``$`` matches only at the very end
  (Python's ``$`` also matches before a final newline), ``.`` excludes all
  ECMA line terminators, and ``\\d``/``\\w`` are ASCII-only.
* ``format: uri`` and ``format: date-time`` are asserted, and the checker
  refuses to run when the non-GPL format packages are missing instead of
  silently skipping them.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema.validators
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from interop.jsonvalue import JsonError, loads

StrictJsonError = JsonError  # malformed JSON text, a duplicate key or a non-JSON constant

SCHEMA_SUFFIXES = (".schema.json",)
MEMO_LIMIT = 50_000  # remembered verdicts per schema set (then forgotten at once)
AGGREGATE_SCHEMA = "schema.json"
SCHEMA_MANIFEST = "manifest.json"


def loads_strict(text: str) -> Any:
    """Parse JSON text, rejecting duplicate keys and NaN/Infinity (the harness's one parser)."""
    return loads(text)


def load_json_file(path: Path) -> Any:
    """Read and strictly parse a UTF-8 JSON file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StrictJsonError(f"cannot read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJsonError(f"not UTF-8: {exc.reason} at byte {exc.start}") from exc
    return loads_strict(text)


# ECMA-262 line terminators, which `.` never matches.
_ECMA_DOT = "[^\\n\\r\\u2028\\u2029]"


def ecma_to_python(pattern: str) -> str:
    """Translate an ECMA-262 pattern (in the portable subset we use) to Python ``re``.

    Outside character classes an unescaped ``$`` becomes ``\\Z`` (end of input,
    no final-newline allowance) and an unescaped ``.`` excludes ECMA line
    terminators. Everything else is passed through; ``re.ASCII`` at compile
    time keeps ``\\d``, ``\\w`` and ``\\b`` ASCII like ECMA-262.
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
            # A leading `]` (or `^]`) is literal in Python; ECMA treats `[]` as empty.
            # Our patterns never use either form, so no special handling is needed.
        elif ch == "$":
            out.append("\\Z")
        elif ch == ".":
            out.append(_ECMA_DOT)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


@functools.cache
def compile_ecma(pattern: str) -> re.Pattern[str]:
    return re.compile(ecma_to_python(pattern), re.ASCII)


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not compile_ecma(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


EcmaValidator = jsonschema.validators.extend(
    Draft202012Validator, {"pattern": _ecma_pattern}, version="draft2020-12-ecma"
)


class FormatSupportError(RuntimeError):
    """The format packages needed to assert `uri` and `date-time` are missing."""


def strict_format_checker() -> FormatChecker:
    """A FormatChecker proven to reject bad `uri` and `date-time` values."""
    checker = FormatChecker()
    probes = {
        "uri": "https://bad host/%zz",
        "date-time": "20260915T120000+0000",
    }
    missing = [name for name, bad in probes.items() if checker.conforms(bad, name)]
    if missing:
        raise FormatSupportError(
            "format checking unavailable for "
            + ", ".join(missing)
            + ": install rfc3339-validator and rfc3986-validator (pyproject.toml)"
        )
    return checker


@dataclass(frozen=True)
class SchemaIssue:
    """The first error of a failed validation, with its JSON path."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def json_path(error: ValidationError) -> str:
    out = "$"
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _error_depth(error: ValidationError) -> tuple[int, int]:
    return (len(error.absolute_path), -len(error.absolute_schema_path))


def first_issue(errors: list[ValidationError]) -> SchemaIssue | None:
    """Pick the most specific error: the deepest instance path, found first."""
    if not errors:
        return None
    best = jsonschema.exceptions.best_match(errors)
    leaf = best
    while leaf.context:
        leaf = max(leaf.context, key=_error_depth)
    chosen = leaf if len(leaf.absolute_path) >= len(best.absolute_path) else best
    return SchemaIssue(json_path(chosen), chosen.message)


class SchemaSet:
    """All schema documents of one directory in one registry, validators compiled once."""

    def __init__(self, directory: Path, *, check: bool = False) -> None:
        """`check`: also validate every document against the Draft 2020-12 metaschema
        (a second per directory; `tools/check_conformance.py` and the tests do it for
        ours, so a run does not pay it at every start)."""
        self.directory = directory
        self.documents: dict[str, dict[str, Any]] = {}
        resources: list[tuple[str, Resource[Any]]] = []
        if not directory.is_dir():
            raise FileNotFoundError(f"{directory}: schema directory not found")
        for path in sorted(directory.iterdir()):
            if path.name == SCHEMA_MANIFEST or not path.name.endswith(".json"):
                continue
            document = load_json_file(path)
            if not isinstance(document, dict) or not isinstance(document.get("$id"), str):
                raise StrictJsonError(f"{path}: schema without a string $id")
            if check:
                Draft202012Validator.check_schema(document)
            self.documents[path.name] = document
            resources.append((document["$id"], Resource.from_contents(document, DRAFT202012)))
        self.registry: Registry[Any] = Registry().with_resources(resources)
        self.format_checker = strict_format_checker()
        self._validators: dict[str, Any] = {}
        self._issues: dict[tuple[str, str], SchemaIssue | None] = {}

    def names(self) -> list[str]:
        return sorted(self.documents)

    def validator(self, reference: str) -> Any:
        """Validator for a file name, optionally with a fragment.

        Example: `capabilities.schema.json#/$defs/tool.before`.
        """
        cached = self._validators.get(reference)
        if cached is not None:
            return cached
        name, _, fragment = reference.partition("#")
        document = self.documents.get(name)
        if document is None:
            raise KeyError(f"unknown schema {name!r}")
        schema: dict[str, Any] = {"$ref": document["$id"] + ("#" + fragment if fragment else "")}
        validator = EcmaValidator(
            schema, registry=self.registry, format_checker=self.format_checker
        )
        self._validators[reference] = validator
        return validator

    def issue(self, reference: str, instance: Any) -> SchemaIssue | None:
        """None when valid, otherwise the first error.

        Remembered per exact JSON text (key order kept, so even the error chosen is
        the same): every combination of a run sends the same messages, and
        validation depends on the text alone."""
        try:
            text = json.dumps(instance, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):  # not JSON: judged afresh
            return first_issue(list(self.validator(reference).iter_errors(instance)))
        key = (reference, text)
        if key in self._issues:
            return self._issues[key]
        found = first_issue(list(self.validator(reference).iter_errors(instance)))
        if len(self._issues) >= MEMO_LIMIT:
            self._issues.clear()
        self._issues[key] = found
        return found
