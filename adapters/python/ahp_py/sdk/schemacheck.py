"""A schema compiled once into closures that only answer "valid or not".

``jsonschema`` evaluates a schema by walking it for every instance: a new
validator object per subschema, a generator per keyword. A core row's three or
four messages cost milliseconds that way. ``compile_check`` walks the schema
once and returns one function per subschema, with each keyword's work bound in
a closure, so a valid message costs a few dozen function calls.

The closures give Draft 2020-12's verdict, keyword by keyword as ``jsonschema``
4 defines it (equality that keeps booleans apart from numbers, ``integer``
accepting ``1.0``, ``contains`` with ``minContains``/``maxContains``, the
``uniqueItems`` test, formats through the same ``FormatChecker``). They cover the
keywords the canonical schemas use; a schema with any other keyword is not
compiled (``Unsupported``) and keeps ``jsonschema``. The caller uses a check only
to accept: an instance it rejects is evaluated by ``jsonschema`` again, which
also words the reason (``SchemaSet._error``). The inlined schemas this compiles
hold a ``$ref`` only where a reference cycles; ``resolve`` gives its node.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

# ``schemas.discriminate``'s stand-in for an ``allOf`` that dispatches on a ``const``.
DISCRIMINATED = "x-ahp-discriminated"

# Keywords that never change a verdict.
_ANNOTATIONS = frozenset(
    {"title", "description", "$comment", "default", "examples", "deprecated", "$schema"}
    # ``$defs`` are reached only through a ``$ref``; every ``$ref`` left is absolute
    | {"$defs", "definitions", "$id"}
)


class Unsupported(Exception):
    """The schema uses a keyword (or form) the compiler does not evaluate."""


def _yes(_instance: Any) -> bool:
    return True


def _no(_instance: Any) -> bool:
    return False


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    import numbers  # the abstract number types: only for what JSON never parses to

    return isinstance(value, numbers.Number)


_TYPES: dict[str, Check] = {
    "array": lambda value: isinstance(value, list),
    "boolean": lambda value: isinstance(value, bool),
    "integer": _is_integer,
    "null": lambda value: value is None,
    "number": _is_number,
    "object": lambda value: isinstance(value, dict),
    "string": lambda value: isinstance(value, str),
}


def equal(one: Any, two: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``, containers compared
    item by item the same way."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return len(one) == len(two) and all(
            key in two and equal(value, two[key]) for key, value in one.items()
        )
    if isinstance(one, bool) or isinstance(two, bool):
        return False  # the same boolean is the same object, caught above
    return bool(one == two)


_TRUE, _FALSE = object(), object()


def _unbool(value: Any) -> Any:
    return _TRUE if value is True else _FALSE if value is False else value


def unique(items: list[Any]) -> bool:
    """``uniqueItems`` as ``jsonschema`` tests it: sorted neighbours when the items
    sort, else every pair."""
    try:
        ordered = sorted(_unbool(item) for item in items)
        return not any(
            equal(a, b) for a, b in zip(ordered, itertools.islice(ordered, 1, None), strict=False)
        )
    except (NotImplementedError, TypeError):
        seen: list[Any] = []
        for item in items:
            item = _unbool(item)
            if any(equal(other, item) for other in seen):
                return False
            seen.append(item)
        return True


class Compiler:
    """Compiles schemas of one set; shared subschemas (the inliner shares them) and
    cycles compile once."""

    def __init__(self, resolve: Callable[[str], Any], formats: Any) -> None:
        """``formats``: ``names`` (the formats it checks) and ``conforms(instance,
        name)``; a schema with another format is not compiled."""
        self._resolve = resolve
        self._formats = formats
        self._done: dict[int, Check] = {}
        self._nodes: list[Any] = []  # keeps every compiled node alive, so ids stay unique

    def compile(self, node: Any) -> Check:
        if node is True:
            return _yes
        if node is False:
            return _no
        if not isinstance(node, dict):
            raise Unsupported(f"a schema that is a {type(node).__name__}")
        found = self._done.get(id(node))
        if found is not None:
            return found
        late: list[Check] = []

        def ahead(instance: Any) -> bool:  # a cycle back into ``node``
            return late[0](instance)

        self._done[id(node)] = ahead
        self._nodes.append(node)
        try:
            check = self._node(node)
        except Unsupported:
            del self._done[id(node)]
            raise
        late.append(check)
        self._done[id(node)] = check
        return check

    def _node(self, node: dict[str, Any]) -> Check:
        checks: list[Check] = []
        for keyword, value in node.items():
            if keyword in _ANNOTATIONS or keyword in ("then", "else"):
                continue  # ``then``/``else`` are read by ``if``, ignored without it
            make = _KEYWORDS.get(keyword)
            if make is None:
                raise Unsupported(f"keyword {keyword}")
            made = make(self, value, node)
            if made is not None:
                checks.append(made)
        if not checks:
            return _yes
        if len(checks) == 1:
            return checks[0]
        first, *rest = checks
        if len(rest) == 1:
            second = rest[0]
            return lambda instance: first(instance) and second(instance)
        return lambda instance: first(instance) and all(check(instance) for check in rest)

    # -- keywords: each returns a check, or None when it never fails ------------------

    def _type(self, value: Any, _node: Any) -> Check:
        names = value if isinstance(value, list) else [value]
        if any(name not in _TYPES for name in names):
            raise Unsupported(f"type {names}")
        tests = [_TYPES[name] for name in names]
        if len(tests) == 1:
            return tests[0]
        return lambda instance: any(test(instance) for test in tests)

    def _const(self, value: Any, _node: Any) -> Check:
        if isinstance(value, str):
            return lambda instance: isinstance(instance, str) and instance == value
        return lambda instance: equal(instance, value)

    def _enum(self, value: Any, _node: Any) -> Check:
        if not isinstance(value, list):
            raise Unsupported("enum that is not an array")
        if all(isinstance(each, str) for each in value):
            names = frozenset(value)
            return lambda instance: isinstance(instance, str) and instance in names
        return lambda instance: any(equal(each, instance) for each in value)

    def _properties(self, value: Any, _node: Any) -> Check | None:
        pairs = [(name, self.compile(sub)) for name, sub in value.items()]
        pairs = [(name, check) for name, check in pairs if check is not _yes]
        if not pairs:
            return None

        def check(instance: Any) -> bool:
            if not isinstance(instance, dict):
                return True
            for name, sub in pairs:  # noqa: SIM110 (a loop: no generator per call)
                if name in instance and not sub(instance[name]):
                    return False
            return True

        return check

    def _required(self, value: Any, _node: Any) -> Check | None:
        names = list(value)
        if not names:
            return None
        return lambda instance: (
            not isinstance(instance, dict) or all(name in instance for name in names)
        )

    def _additional(self, value: Any, node: dict[str, Any]) -> Check | None:
        if value is True:
            return None
        known = frozenset(node.get("properties", {}))
        patterns = "|".join(node.get("patternProperties", {}))
        search = re.compile(patterns).search if patterns else None
        sub = None if value is False else self.compile(value)

        def check(instance: Any) -> bool:
            if not isinstance(instance, dict):
                return True
            for name in instance:
                if name in known or (search is not None and search(name)):
                    continue
                if sub is None or not sub(instance[name]):
                    return False
            return True

        return check

    def _pattern_properties(self, value: Any, _node: Any) -> Check:
        pairs = [(re.compile(pattern).search, self.compile(sub)) for pattern, sub in value.items()]

        def check(instance: Any) -> bool:
            if not isinstance(instance, dict):
                return True
            return all(
                sub(item)
                for name, item in instance.items()
                for search, sub in pairs
                if search(name)
            )

        return check

    def _property_names(self, value: Any, _node: Any) -> Check:
        sub = self.compile(value)
        return lambda instance: (
            not isinstance(instance, dict) or all(sub(name) for name in instance)
        )

    def _min_properties(self, value: Any, _node: Any) -> Check:
        return lambda instance: not isinstance(instance, dict) or len(instance) >= value

    def _items(self, value: Any, node: dict[str, Any]) -> Check:
        prefix = len(node.get("prefixItems", []))
        if value is False:
            return lambda instance: not isinstance(instance, list) or len(instance) <= prefix
        sub = self.compile(value)
        return lambda instance: (
            not isinstance(instance, list)
            or all(sub(item) for item in itertools.islice(instance, prefix, None))
        )

    def _prefix_items(self, value: Any, _node: Any) -> Check:
        subs = [self.compile(item) for item in value]
        return lambda instance: (
            not isinstance(instance, list)
            or all(sub(item) for sub, item in zip(subs, instance, strict=False))
        )

    def _contains(self, value: Any, node: dict[str, Any]) -> Check:
        sub = self.compile(value)
        least = node.get("minContains", 1)
        most = node.get("maxContains")

        def check(instance: Any) -> bool:
            if not isinstance(instance, list):
                return True
            matches = sum(1 for item in instance if sub(item))
            return least <= matches and (most is None or matches <= most)

        return check

    def _min_items(self, value: Any, _node: Any) -> Check:
        return lambda instance: not isinstance(instance, list) or len(instance) >= value

    def _max_items(self, value: Any, _node: Any) -> Check:
        return lambda instance: not isinstance(instance, list) or len(instance) <= value

    def _unique_items(self, value: Any, _node: Any) -> Check | None:
        if not value:
            return None
        return lambda instance: not isinstance(instance, list) or unique(instance)

    def _min_length(self, value: Any, _node: Any) -> Check:
        return lambda instance: not isinstance(instance, str) or len(instance) >= value

    def _max_length(self, value: Any, _node: Any) -> Check:
        return lambda instance: not isinstance(instance, str) or len(instance) <= value

    def _pattern(self, value: Any, _node: Any) -> Check:
        search = re.compile(value).search
        return lambda instance: not isinstance(instance, str) or search(instance) is not None

    def _format(self, value: Any, _node: Any) -> Check:
        formats = self._formats
        if value not in formats.names:
            raise Unsupported(f"format {value}")
        return lambda instance: bool(formats.conforms(instance, value))

    def _all_of(self, value: Any, _node: Any) -> Check:
        subs = [self.compile(item) for item in value]
        return lambda instance: all(sub(instance) for sub in subs)

    def _any_of(self, value: Any, _node: Any) -> Check:
        subs = [self.compile(item) for item in value]
        return lambda instance: any(sub(instance) for sub in subs)

    def _one_of(self, value: Any, _node: Any) -> Check:
        subs = [self.compile(item) for item in value]
        return lambda instance: sum(1 for sub in subs if sub(instance)) == 1

    def _not(self, value: Any, _node: Any) -> Check:
        sub = self.compile(value)
        return lambda instance: not sub(instance)

    def _if(self, value: Any, node: dict[str, Any]) -> Check | None:
        condition = self.compile(value)
        then = self.compile(node["then"]) if "then" in node else _yes
        otherwise = self.compile(node["else"]) if "else" in node else _yes
        if then is _yes and otherwise is _yes:
            return None
        return lambda instance: then(instance) if condition(instance) else otherwise(instance)

    def _ref(self, value: Any, _node: Any) -> Check:
        if not isinstance(value, str):
            raise Unsupported("$ref that is not a string")
        target = self._resolve(value)
        if target is None:
            raise Unsupported(f"$ref {value}")
        return self.compile(target)

    def _discriminated(self, value: Any, _node: Any) -> Check:
        """``schemas.discriminate``'s ``allOf``: the one branch the value on the path
        names; a step that is not an object leaves the ``allOf`` as written."""
        path = list(value["path"])
        branches = {name: self.compile(sub) for name, sub in value["branches"].items()}
        whole = self._all_of(value["allOf"], None)

        def check(instance: Any) -> bool:
            node = instance
            for key in path:
                if not isinstance(node, dict):
                    return whole(instance)
                if key not in node:
                    return True
                node = node[key]
            branch = branches.get(node) if isinstance(node, str) else None
            return branch is None or branch(instance)

        return check


def _bound(test: Callable[[Any, Any], bool]) -> Callable[[Compiler, Any, Any], Check]:
    """``minimum`` and its kin: numbers only (a boolean is not one)."""

    def make(_compiler: Compiler, bound: Any, _node: Any) -> Check:
        return lambda instance: not _is_number(instance) or test(instance, bound)

    return make


def _never_fails(_compiler: Compiler, _value: Any, _node: Any) -> None:
    """A keyword read by another (``minContains`` by ``contains``)."""
    return None


_KEYWORDS: dict[str, Callable[[Compiler, Any, dict[str, Any]], Check | None]] = {
    "type": Compiler._type,
    "const": Compiler._const,
    "enum": Compiler._enum,
    "properties": Compiler._properties,
    "required": Compiler._required,
    "additionalProperties": Compiler._additional,
    "patternProperties": Compiler._pattern_properties,
    "propertyNames": Compiler._property_names,
    "minProperties": Compiler._min_properties,
    "items": Compiler._items,
    "prefixItems": Compiler._prefix_items,
    "contains": Compiler._contains,
    "minContains": _never_fails,
    "maxContains": _never_fails,
    "minItems": Compiler._min_items,
    "maxItems": Compiler._max_items,
    "uniqueItems": Compiler._unique_items,
    "minLength": Compiler._min_length,
    "maxLength": Compiler._max_length,
    "pattern": Compiler._pattern,
    "format": Compiler._format,
    "minimum": _bound(lambda value, bound: value >= bound),
    "maximum": _bound(lambda value, bound: value <= bound),
    "exclusiveMinimum": _bound(lambda value, bound: value > bound),
    "exclusiveMaximum": _bound(lambda value, bound: value < bound),
    "allOf": Compiler._all_of,
    "anyOf": Compiler._any_of,
    "oneOf": Compiler._one_of,
    "not": Compiler._not,
    "if": Compiler._if,
    "$ref": Compiler._ref,
    DISCRIMINATED: Compiler._discriminated,
}
