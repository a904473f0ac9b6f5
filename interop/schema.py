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

import contextvars
import functools
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import jsonschema
import jsonschema.validators
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from interop.jsonvalue import JsonError, loads
from interop.memo import IdentityMemo

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


def _const_path(condition: Any) -> tuple[tuple[str, ...], str] | None:
    """`(keys, value)` when `condition` only asks that the string `value` sit at `keys`:
    nested `{"properties": {k: ...}, "required": [k]}` down to `{"const": value}`."""
    keys: list[str] = []
    while isinstance(condition, dict):
        if set(condition) == {"const"}:
            value = condition["const"]
            return (tuple(keys), value) if keys and isinstance(value, str) else None
        properties = condition.get("properties")
        if set(condition) != {"properties", "required"} or not isinstance(properties, dict):
            return None
        if len(properties) != 1 or condition["required"] != list(properties):
            return None
        ((key, condition),) = properties.items()
        keys.append(key)
    return None


class _Dispatch:
    """An `allOf` whose every item is `{"if": <a string at a path>, "then": ...}`, one
    value each: which item's `then` an instance meets (see `_all_of`)."""

    def __init__(self, keys: tuple[str, ...], items: dict[str, int]) -> None:
        self.keys, self.items = keys, items

    @staticmethod
    def of(subschemas: list[Any]) -> _Dispatch | None:
        keys: set[tuple[str, ...]] = set()
        items: dict[str, int] = {}
        for index, item in enumerate(subschemas):
            found = (
                _const_path(item["if"])
                if isinstance(item, dict) and set(item) == {"if", "then"}
                else None
            )
            if found is None or found[1] in items:
                return None
            keys.add(found[0])
            items[found[1]] = index
        return _Dispatch(keys.pop(), items) if len(keys) == 1 and len(items) > 1 else None


_DISPATCHES: IdentityMemo[_Dispatch | None] = IdentityMemo()


def _all_of(
    validator: Any, subschemas: list[Any], instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """Draft 2020-12 `allOf`, with the same errors, minus the work that cannot yield
    one: in a dispatching `allOf` (`_Dispatch`) every `if` but the instance's own is
    false, so only that item is evaluated; when a step of the path is there but is
    not an object every `if` holds vacuously, and all items are evaluated."""
    dispatch = _DISPATCHES.made(
        (subschemas,), lambda: _Dispatch.of(subschemas) if isinstance(subschemas, list) else None
    )
    if dispatch is not None:
        node = instance
        for key in dispatch.keys:
            if not isinstance(node, dict):
                break
            if key not in node:
                return  # no `if` holds: nothing applies
            node = node[key]
        else:
            index = dispatch.items.get(node) if isinstance(node, str) else None
            if index is not None:
                yield from validator.descend(instance, subschemas[index], schema_path=index)
            return
    for index, subschema in enumerate(subschemas):
        yield from validator.descend(instance, subschema, schema_path=index)


ITEM_MEMO_LIMIT = 200_000  # remembered valid array items (then forgotten at once)
_VALID_ITEMS: IdentityMemo[set[str]] = IdentityMemo()
_ITEM_COUNT = [0]


def _items(
    validator: Any, items: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """Draft 2020-12 `items`, with the same errors, minus the items already found valid
    against this very subschema: a report or a receipt log is an array of items most
    of which every combination sends alike, byte for byte. Only with references
    followed at load (`inline_references`), so an item's verdict depends on the item
    and the subschema alone. Items are told apart by their exact JSON text."""
    if items is False or not isinstance(instance, list):
        yield from _ITEMS_AS_WRITTEN(validator, items, instance, schema)
        return
    valid = _VALID_ITEMS.made((items,), set)
    for index in range(len(schema.get("prefixItems", [])), len(instance)):
        try:
            text = json.dumps(instance[index], ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            text = None  # not JSON: judged afresh
        if text is not None and text in valid:
            continue
        failed = False
        for error in validator.descend(instance=instance[index], schema=items, path=index):
            failed = True
            yield error
        if not failed and text is not None:
            if _ITEM_COUNT[0] >= ITEM_MEMO_LIMIT:
                _VALID_ITEMS.clear()
                _ITEM_COUNT[0] = 0
                valid = _VALID_ITEMS.made((items,), set)
            valid.add(text)
            _ITEM_COUNT[0] += 1


# `PlainEcmaValidator` evaluates every keyword as written (the fast paths' reference)
PlainEcmaValidator = jsonschema.validators.extend(
    Draft202012Validator, {"pattern": _ecma_pattern}, version="draft2020-12-ecma"
)
_ITEMS_AS_WRITTEN = PlainEcmaValidator.VALIDATORS["items"]
EcmaValidator = jsonschema.validators.extend(PlainEcmaValidator, {"allOf": _all_of})
# with references followed at load, valid array items are remembered too (`_items`)
InlinedEcmaValidator = jsonschema.validators.extend(EcmaValidator, {"items": _items})


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


# Keywords that read where a subschema sits or what else evaluated the instance: a
# directory whose documents use one keeps its references (no `inline_references`).
PLACE_DEPENDENT = frozenset(
    {"$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef"}
    | {"unevaluatedItems", "unevaluatedProperties"}
)
_NOT_SCHEMAS = frozenset({"const", "default", "enum", "examples", "required"})
_NAMED_SCHEMAS = frozenset(
    {"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
)


def _uses(node: Any, keywords: frozenset[str]) -> bool:
    if isinstance(node, list):
        return any(_uses(item, keywords) for item in node)
    return isinstance(node, dict) and (
        not keywords.isdisjoint(node) or any(_uses(v, keywords) for v in node.values())
    )


def inline_references(documents: dict[str, Any]) -> Callable[[str], Any]:
    """A lookup from an absolute URI (`file#/pointer` or a document's `$id`) to its
    subschema with every `$ref` below it already followed, so validation resolves
    nothing: a node that is only `{"$ref": u}` becomes u's (shared) node, and a `$ref`
    beside other keywords becomes one more `allOf` item, the same verdict in Draft
    2020-12. A reference back into a node still being followed (a cycle) stays, made
    absolute. `documents` maps each `$id` to its document."""
    followed: dict[str, Any] = {}

    def key(uri: str) -> str:
        base, _, pointer = uri.partition("#")
        return base + "#" + pointer if pointer else base

    def follow(uri: str, open_: frozenset[str]) -> Any:
        if uri in followed:
            return followed[uri]
        base, _, pointer = uri.partition("#")
        node = documents[base]
        for step in pointer.split("/")[1:] if pointer else []:
            step = step.replace("~1", "/").replace("~0", "~")
            node = node[int(step)] if isinstance(node, list) else node[step]
        done = rebuild(node, base, open_ | {uri})
        if isinstance(done, dict):  # an embedded document's own keywords go
            done = {k: v for k, v in done.items() if k not in ("$id", "$schema", "$defs")}
        followed[uri] = done
        return done

    def rebuild(node: Any, base: str, open_: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [rebuild(item, base, open_) for item in node]
        if not isinstance(node, dict):
            return node
        out = {
            k: v
            if k in _NOT_SCHEMAS or k == "$ref"
            else {n: rebuild(s, base, open_) for n, s in v.items()}
            if k in _NAMED_SCHEMAS and isinstance(v, dict)
            else rebuild(v, base, open_)
            for k, v in node.items()
        }
        reference = out.get("$ref")
        if not isinstance(reference, str):
            return out
        target = key(urljoin(base, reference))
        if target in open_:
            return {**out, "$ref": target}
        del out["$ref"]
        if not out:
            return follow(target, open_)
        return {**out, "allOf": [follow(target, open_), *out.get("allOf", [])]}

    return lambda uri: follow(key(uri), frozenset())


class SchemaSet:
    """All schema documents of one directory in one registry, validators compiled once."""

    def __init__(self, directory: Path, *, check: bool = False, fast: bool = True) -> None:
        """`check`: also validate every document against the Draft 2020-12 metaschema
        (a second per directory; `tools/check_conformance.py` and the tests do it for
        ours, so a run does not pay it at every start). `fast`: the fast paths, the
        dispatching `allOf` (`_all_of`), references followed once
        (`inline_references`) and, with those, valid array items remembered
        (`_items`); off only for the test that compares both."""
        self._class = EcmaValidator if fast else PlainEcmaValidator
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
        by_id = {d["$id"]: d for d in self.documents.values()}
        self._inlined = (
            inline_references(by_id)
            if fast and not _uses(list(by_id.values()), PLACE_DEPENDENT)
            else None
        )
        if self._inlined is not None:
            self._class = InlinedEcmaValidator
        self.format_checker = strict_format_checker()
        self._validators: dict[str, Any] = {}
        self._issues: dict[tuple[str, str | bytes], SchemaIssue | None] = {}

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
        uri = document["$id"] + ("#" + fragment if fragment else "")
        schema: Any = {"$ref": uri}
        if self._inlined is not None:
            try:
                schema = self._inlined(uri)
            except (KeyError, IndexError, ValueError, TypeError):
                raise KeyError(f"{reference}: no such subschema") from None
        validator = self._class(schema, registry=self.registry, format_checker=self.format_checker)
        self._validators[reference] = validator
        return validator

    def issue(
        self, reference: str, instance: Any, *, text: str | bytes | None = None
    ) -> SchemaIssue | None:
        """None when valid, otherwise the first error.

        Remembered per exact JSON text (key order kept, so even the error chosen is
        the same): every combination of a run sends the same messages, and
        validation depends on the text alone. `text`: the exact text `instance`
        was parsed from, used as it is (a receipt line), so it is not encoded
        again."""
        if text is None:
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


OUR_DRAFT = Path(__file__).resolve().parents[1] / "schemas" / "draft"
# The canonical schemas the wire is judged by: ours, or (`judged_by`) the spec's, when
# a contract v1 adapter takes part and `--spec` gave them, as upstream drivers judge.
_JUDGED_BY: contextvars.ContextVar[Path] = contextvars.ContextVar("judged_by", default=OUR_DRAFT)


@functools.cache
def _schema_set(directory: Path) -> SchemaSet:
    return SchemaSet(directory)


def canonical() -> SchemaSet:
    """The canonical schemas the current combination's wire is judged by."""
    return _schema_set(_JUDGED_BY.get())


@contextmanager
def judged_by(directory: Path | None) -> Iterator[None]:
    """Judge the wire with `directory`'s schemas within (None: ours)."""
    token = _JUDGED_BY.set(directory or OUR_DRAFT)
    try:
        yield
    finally:
        _JUDGED_BY.reset(token)
