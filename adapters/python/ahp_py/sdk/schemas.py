"""The canonical JSON Schemas: one registry keyed by ``$id``, validators built once.

A validator is named by a schema file (``intercept-request.schema.json``) or by
a definition inside one (``content-item.schema.json#/$defs/messages``, any JSON
pointer into the file); the engine checks every value a response supplies
against the definition of its slot this way.

JSON Schema ``pattern`` is ECMA-262, Python's ``re`` is not: ``$`` also matches
before a final newline and ``\\d``/``\\w`` match non-ASCII digits and letters.
Patterns are therefore rewritten into their Python equivalents when the schema
documents are loaded, so every keyword that reads them (``pattern``,
``patternProperties``, ``additionalProperties``) sees the ECMA meaning.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from . import codec
from .schemacheck import DISCRIMINATED, Check, Compiler, Unsupported

SCHEMA_BASE = "https://interop.ahp.test/schemas/draft/"
INTERCEPT_REQUEST = "intercept-request.schema.json"
INTERCEPT_RESPONSE = "intercept-response.schema.json"
CAPABILITIES_REQUEST = "capabilities-request.schema.json"
CAPABILITIES_RESPONSE = "capabilities-response.schema.json"
OBSERVE_NOTIFICATION = "observe-notification.schema.json"
UPLOAD_RECEIPT = "content-upload-receipt.schema.json"
REQUIRED_FORMATS = ("uri", "date-time")
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
MEMO_LIMIT = 8192

# Keywords whose values are maps from names to subschemas (names are not keywords).
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "dependentSchemas"})
# Keywords whose values are data, never schemas.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "required"})


class SchemaError(RuntimeError):
    """The canonical schema directory is missing or unusable."""


def default_schema_dir() -> Path:
    override = os.environ.get("AHP_SCHEMA_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[4] / "schemas" / "draft"


def ecma_to_python(pattern: str) -> str:
    """Rewrite an ECMA-262 regular expression (no flags) for Python's ``re``."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escape = pattern[i + 1]
            if escape == "d":
                out.append("0-9" if in_class else "[0-9]")
            elif escape == "w":
                out.append("A-Za-z0-9_" if in_class else "[A-Za-z0-9_]")
            elif escape == "D" and not in_class:
                out.append("[^0-9]")
            elif escape == "W" and not in_class:
                out.append("[^A-Za-z0-9_]")
            else:
                out.append(char + escape)
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
            out.append(char)
        elif char == "[":
            in_class = True
            out.append(char)
            if pattern[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
        elif char == "$":
            out.append(r"\Z")
        elif pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
            out.append("(?P<")
            i += 3
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


def translate_patterns(node: Any) -> Any:
    """Copy a schema with every pattern rewritten for Python."""
    if isinstance(node, list):
        return [translate_patterns(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "pattern" and isinstance(value, str):
            out[key] = ecma_to_python(value)
        elif key == "patternProperties" and isinstance(value, dict):
            out[key] = {ecma_to_python(k): translate_patterns(v) for k, v in value.items()}
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: translate_patterns(v) for k, v in value.items()}
        elif key in _DATA_KEYWORDS:
            out[key] = value
        else:
            out[key] = translate_patterns(value)
    return out


def _branch(item: Any) -> tuple[list[str], str] | None:
    """``(path, value)`` when ``item`` is ``{"if": <const at path>, "then": ...}``, the
    ``if`` being nested ``properties``/``required`` down to a string ``const``."""
    if not isinstance(item, dict) or set(item) != {"if", "then"}:
        return None
    node, path = item["if"], []
    while True:
        if not isinstance(node, dict) or set(node) != {"properties", "required"}:
            return None
        properties = node["properties"]
        if not isinstance(properties, dict) or len(properties) != 1:
            return None
        ((key, inner),) = properties.items()
        if node["required"] != [key]:
            return None
        path.append(key)
        if isinstance(inner, dict) and set(inner) == {"const"}:
            return (path, inner["const"]) if isinstance(inner["const"], str) else None
        node = inner


def discriminate(node: Any) -> Any:
    """Copy a schema with each ``allOf`` that only dispatches on one string ``const``
    (one ``if``/``then`` per value of the same property path, as the event, effect and
    capability schemas do) replaced by ``x-ahp-discriminated``, which validates the one
    branch whose value the instance has: the verdict is the ``allOf``'s (see
    ``_discriminated``), without evaluating every other ``if``."""
    if isinstance(node, list):
        return [discriminate(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: (discriminate(v) if k not in _DATA_KEYWORDS else v) for k, v in node.items()}
    items = out.get("allOf")
    if isinstance(items, list) and len(items) > 1:
        found = [_branch(item) for item in items]
        paths = {tuple(f[0]) for f in found if f is not None}
        values = [f[1] for f in found if f is not None]
        if None not in found and len(paths) == 1 and len(set(values)) == len(values):
            out[DISCRIMINATED] = {
                "path": list(paths.pop()),
                "branches": {
                    value: item["then"] for value, item in zip(values, items, strict=True)
                },
                "allOf": items,
            }
            del out["allOf"]
    return out


def _discriminated(validator: Any, spec: dict[str, Any], instance: Any, schema: Any) -> Any:
    """The ``allOf`` of ``discriminate``: an ``if`` fails unless every object on the path
    is there and the value is its ``const``, so at most one ``then`` applies; when a step
    of the path is there but is not an object, every ``if`` holds vacuously and the
    original ``allOf`` is evaluated as written."""
    node = instance
    for key in spec["path"]:
        if not validator.is_type(node, "object"):
            yield from validator.descend(instance, {"allOf": spec["allOf"]})
            return
        if key not in node:
            return
        node = node[key]
    branch = spec["branches"].get(node) if isinstance(node, str) else None
    if branch is not None:
        yield from validator.descend(instance, branch)


# Keywords whose meaning depends on where a subschema sits or on what evaluated it:
# a set that uses one keeps its ``$ref``s (``inline_refs`` does not apply).
_PLACE_KEYWORDS = frozenset(
    {
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)


def _has_key(node: Any, keys: frozenset[str]) -> bool:
    """Whether any object under ``node`` has one of ``keys`` (data included: a
    superset of the keywords used), stopping at the first."""
    if isinstance(node, list):
        return any(_has_key(item, keys) for item in node)
    return isinstance(node, dict) and (
        not keys.isdisjoint(node) or any(_has_key(value, keys) for value in node.values())
    )


def _has_place_keyword(texts: list[bytes], documents: list[Any]) -> bool:
    """``_has_key(documents, _PLACE_KEYWORDS)``, answered from the files' texts when
    they hold no ``\\u`` escape and none of the keywords: every object key then is
    in its file's text as written (a pattern rewritten by ``translate_patterns`` is
    no keyword: its ``$`` becomes ``\\Z``), so no document has one. Otherwise
    the documents are walked."""
    if not any(b"\\u" in text for text in texts) and not any(
        keyword.encode() in text for keyword in _PLACE_KEYWORDS for text in texts
    ):
        return False
    return _has_key(documents, _PLACE_KEYWORDS)


def _canonical(uri: str) -> str:
    """``x.json#`` and ``x.json`` name the same node."""
    document_uri, _, pointer = uri.partition("#")
    return f"{document_uri}#{pointer}" if pointer else document_uri


class _Inliner:
    """Every ``$ref`` replaced by the (shared, already inlined) subschema it names, so
    validation never resolves a reference: ``{"$ref": X}`` alone becomes X's node
    itself, and beside other keywords it becomes one more ``allOf`` item, which is
    the same verdict in Draft 2020-12. A reference back into a subschema that is
    being inlined (a cycle) stays a ``$ref``, made absolute."""

    def __init__(self, documents: dict[str, Any]) -> None:
        from urllib.parse import urljoin

        self._urljoin = urljoin
        self._joined: dict[tuple[str, str], str] = {}  # (base, ref) -> urljoin's answer
        self._documents = documents  # $id -> document
        self._done: dict[str, Any] = {}

    def _join(self, base: str, ref: str) -> str:
        found = self._joined.get((base, ref))
        if found is None:
            found = self._joined[(base, ref)] = self._urljoin(base, ref)
        return found

    def node(self, uri: str, stack: tuple[str, ...] = ()) -> Any:
        found = self._done.get(uri)
        if found is not None:
            return found
        document_uri, _, pointer = uri.partition("#")
        node = self._documents[document_uri]
        for part in pointer.split("/")[1:] if pointer else ():
            key = part.replace("~1", "/").replace("~0", "~")
            node = node[int(key)] if isinstance(node, list) else node[key]
        out = self._walk(node, document_uri, (*stack, uri))
        if isinstance(out, dict):
            out = {k: v for k, v in out.items() if k not in ("$id", "$schema", "$defs")}
        self._done[uri] = out
        return out

    def _walk(self, node: Any, base: str, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [self._walk(item, base, stack) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DATA_KEYWORDS or key == "$ref":
                out[key] = value
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: self._walk(v, base, stack) for k, v in value.items()}
            else:
                out[key] = self._walk(value, base, stack)
        ref = out.pop("$ref", None)
        if not isinstance(ref, str):
            if ref is not None:
                out["$ref"] = ref
            return out
        target = _canonical(self._join(base, ref))
        if target in stack:
            out["$ref"] = target
            return out
        inlined = self.node(target, stack)
        if not out:
            return inlined
        out["allOf"] = [inlined, *out.get("allOf", [])]
        return out


class Formats:
    """The ``format`` checks the canonical schemas use (``REQUIRED_FORMATS``), by the
    functions jsonschema's format checker calls for them (its ``format-nongpl``
    members), each package imported at its first check: a process whose messages
    hold no ``uri`` never compiles rfc3986-validator's expression."""

    names = frozenset(REQUIRED_FORMATS)
    _modules: ClassVar[dict[str, str]] = {
        "uri": "rfc3986_validator",
        "date-time": "rfc3339_validator",
    }

    def __init__(self) -> None:
        from importlib.util import find_spec

        missing = [n for n in REQUIRED_FORMATS if find_spec(self._modules[n]) is None]
        if missing:
            raise SchemaError(f"format checks unavailable: {', '.join(missing)}")
        self._tests: dict[str, Any] = {}

    def conforms(self, instance: Any, name: str) -> bool:
        if not isinstance(instance, str):
            return True
        test = self._tests.get(name)
        if test is None:
            test = self._tests[name] = self._load(name)
        return bool(test(instance))

    @staticmethod
    def _load(name: str) -> Any:
        if name == "uri":
            from rfc3986_validator import validate_rfc3986

            return lambda text: validate_rfc3986(text, rule="URI")
        from rfc3339_validator import validate_rfc3339

        return lambda text: validate_rfc3339(text.upper())


class SchemaSet:
    """Every ``*.schema.json`` of one directory, validated with formats checked.

    An instance is judged by the schema's compiled check (``schemacheck``) when it
    has one; jsonschema, imported on first need (about 170 ms of every process
    start otherwise), judges what a check rejects, words every reason, and judges
    alone a schema the compiler does not cover.
    """

    def __init__(self, directory: Path | None = None, *, discriminated: bool = True) -> None:
        """``discriminated``: the fast paths, the ``allOf`` dispatch (``discriminate``),
        references resolved once at load (``_Inliner``) and the compiled checks; off
        only for the test that compares verdicts with the schemas as written."""
        self.directory = directory or default_schema_dir()
        files = sorted(self.directory.glob("*.schema.json"))
        if not files:
            raise SchemaError(f"no *.schema.json files in {self.directory}")
        self._formats = Formats()
        self._documents: dict[str, dict[str, Any]] = {}
        texts: list[bytes] = []
        for path in files:
            text = path.read_bytes()
            texts.append(text)
            document = translate_patterns(codec.loads(text))
            if isinstance(document, dict) and discriminated:
                if document.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
                    raise SchemaError(f"{path.name} is not a Draft 2020-12 schema")
                # without $schema, jsonschema keeps our validator class when a $ref
                # enters this document (it picks the class by $schema otherwise)
                document = discriminate({k: v for k, v in document.items() if k != "$schema"})
            if not isinstance(document, dict):
                raise SchemaError(f"{path.name} is not a schema object")
            document.setdefault("$id", SCHEMA_BASE + path.name)
            self._documents[path.name] = document
        self._inliner = (
            _Inliner({d["$id"]: d for d in self._documents.values()})
            if discriminated and not _has_place_keyword(texts, list(self._documents.values()))
            else None
        )
        # the compiled checks, only over inlined schemas: there a node's verdict does
        # not depend on where it sits
        self._compiler = (
            Compiler(lambda uri: self._inliner.node(_canonical(uri)), self._formats)  # type: ignore[union-attr]
            if self._inliner is not None
            else None
        )
        self._engine: tuple[Any, Any, Any] | None = None  # jsonschema: class, registry, formats
        self._schemas: dict[str, Any] = {}
        self._validators: dict[str, Any] = {}
        self._checks: dict[str, Check | None] = {}
        self._memo: dict[tuple[str, str], str | None] = {}

    def names(self) -> list[str]:
        return sorted(self._documents)

    def prepare(self, name: str) -> None:
        """Make ready what judging ``name`` needs, before the first message: its
        compiled check, or where there is none its jsonschema validator. Fails
        (``SchemaError``) when ``name`` points at nothing."""
        if self.check(name) is None:
            self.validator(name)

    def _schema(self, name: str) -> Any:
        """The (inlined, where the set inlines) schema node ``name`` names."""
        found = self._schemas.get(name)
        if found is not None:
            return found
        file_name, _, pointer = name.partition("#")
        document = self._documents.get(file_name)
        if document is None:
            raise SchemaError(f"schema {file_name} not found in {self.directory}")
        schema: Any = document
        if pointer:
            schema = {"$ref": document["$id"] + "#" + pointer}
        if self._inliner is not None:
            try:
                schema = self._inliner.node(_canonical(schema.get("$ref", document["$id"])))
            except (KeyError, IndexError, ValueError, TypeError) as exc:
                raise SchemaError(f"definition {name} not found: {exc!r}") from None
        elif pointer:
            self._resolve(schema["$ref"], name)
        self._schemas[name] = schema
        return schema

    def _jsonschema(self) -> tuple[Any, Any, Any]:
        if self._engine is None:
            from jsonschema import Draft202012Validator
            from jsonschema.validators import extend
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012

            checker = Draft202012Validator.FORMAT_CHECKER
            missing = [name for name in REQUIRED_FORMATS if name not in checker.checkers]
            if missing:
                raise SchemaError(f"format checks unavailable: {', '.join(missing)}")
            registry = Registry().with_resources(
                (d["$id"], Resource.from_contents(d, default_specification=DRAFT202012))
                for d in self._documents.values()
            )
            validator_class = extend(Draft202012Validator, {DISCRIMINATED: _discriminated})
            self._engine = (validator_class, registry, checker)
        return self._engine

    def validator(self, name: str) -> Any:
        """The jsonschema validator of a schema file or of ``file#/pointer`` inside
        one, built on first use and kept."""
        found = self._validators.get(name)
        if found is None:
            schema = self._schema(name)
            validator_class, registry, checker = self._jsonschema()
            found = validator_class(schema, registry=registry, format_checker=checker)
            self._validators[name] = found
        return found

    def check(self, name: str) -> Check | None:
        """The compiled check of ``name`` (True: valid), None where it is not
        compiled."""
        if name in self._checks:
            return self._checks[name]
        schema = self._schema(name)
        found = None
        if self._compiler is not None:
            try:
                found = self._compiler.compile(schema)
            except Unsupported:
                found = None
        self._checks[name] = found
        return found

    def _resolve(self, uri: str, name: str) -> None:
        """Fail now, not at validation time, when ``name`` points at nothing."""
        from referencing.exceptions import Unresolvable

        try:
            self._jsonschema()[1].resolver().lookup(uri)
        except Unresolvable as exc:
            raise SchemaError(f"definition {name} not found: {exc}") from None

    def error(self, name: str, instance: Any) -> str | None:
        """None when ``instance`` is valid, else a one-line reason.

        Results are remembered per exact JSON text: a reused server sees the same
        canonical requests from every client, the client sees the same slot
        values in many rows, and validation is deterministic.
        """
        key = (name, codec.dumps(instance))
        if key in self._memo:
            return self._memo[key]
        result = self._error(name, instance)
        if len(self._memo) >= MEMO_LIMIT:
            self._memo.clear()
        self._memo[key] = result
        return result

    def _error(self, name: str, instance: Any) -> str | None:
        check = self.check(name)
        # a compiled check only accepts; what it rejects jsonschema judges and words
        if check is not None and check(instance):
            return None
        validator = self.validator(name)
        if validator.is_valid(instance):
            return None
        from jsonschema.exceptions import best_match

        best = best_match(validator.iter_errors(instance))
        if best is None:
            return f"invalid against {name}"
        where = "/".join(str(part) for part in best.absolute_path) or "(root)"
        return f"{name} at {where}: {best.message[:300]}"


@lru_cache(maxsize=4)
def load(directory: str | None = None) -> SchemaSet:
    """The process-wide schema set (one per directory)."""
    return SchemaSet(Path(directory) if directory else None)
