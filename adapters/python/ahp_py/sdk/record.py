"""``record``: the frozen ``dataclass`` this adapter uses, without its import cost.

``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``)
and spends about a millisecond on every class it processes; an adapter process
defines some twenty such classes before its first row. ``record`` generates the
same methods from one small source per class: ``__init__`` (positional or by
keyword, in field order, defaults and ``default_factory``), ``__repr__`` (the
fields not marked ``repr=False``), ``__eq__`` (same class, fields in order),
``__hash__`` (frozen records: the fields' tuple; others are unhashable),
``__setattr__``/``__delattr__`` refusing on a frozen record, and
``__match_args__``. Fields are the class's own annotations (no inheritance,
no ``ClassVar``, no ``InitVar``: the classes here use none).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record."""


class Field:
    """A field's options (what ``field()`` returns, before the class is built)."""

    __slots__ = ("default", "default_factory", "repr")

    def __init__(self, default: Any, default_factory: Any, repr: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.repr = repr


@overload
def field(*, default: _T, repr: bool = True) -> _T: ...


@overload
def field(*, default_factory: Callable[[], _T], repr: bool = True) -> _T: ...


@overload
def field(*, repr: bool = True) -> Any: ...


def field(*, default: Any = MISSING, default_factory: Any = MISSING, repr: bool = True) -> Any:
    """Like ``dataclasses.field``: a default or a factory, and whether ``repr`` shows it."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, repr)


@overload
def record(cls: type[_T], /) -> type[_T]: ...


@overload
def record(*, frozen: bool = True) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = True) -> Any:
    """``@record`` is ``@dataclass(frozen=True)``; ``@record(frozen=False)`` is ``@dataclass``."""

    def wrap(cls: type[_T]) -> type[_T]:
        _process(cls, frozen)
        return cls

    return wrap if cls is None else wrap(cls)


def _process(cls: Any, frozen: bool) -> None:
    specs: list[tuple[str, Field]] = []
    seen_default = False
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (no inspect)
    # what dataclasses would honour and this does not: refused, never ignored
    unsupported = [
        name
        for name, kind in annotations.items()
        if str(kind).split("[")[0].rsplit(".", 1)[-1] in ("ClassVar", "InitVar")
    ]
    if unsupported or "__post_init__" in cls.__dict__ or cls.__bases__ != (object,):
        raise TypeError(
            f"record {cls.__qualname__}: no base class, ClassVar, InitVar or __post_init__"
        )
    # the class's own annotations, as dataclasses reads them (not inspect's helper:
    # importing inspect is the cost this module avoids)
    for name in annotations:
        value = cls.__dict__.get(name, MISSING)
        spec = value if isinstance(value, Field) else Field(value, MISSING, True)
        if spec.default is not MISSING:
            setattr(cls, name, spec.default)
        elif isinstance(value, Field):
            delattr(cls, name)
        if spec.default is not MISSING or spec.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {name!r} follows default argument")
        specs.append((name, spec))
    names = tuple(name for name, _ in specs)
    shown = tuple(name for name, spec in specs if spec.repr)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # the real one is compiled at the first instance: a class a process never
        # instantiates costs no compile
        init = _init(cls, specs, frozen)
        cls.__init__ = init
        init(self, *args, **kwargs)

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return _values(self, names) == _values(other, names)
        return NotImplemented

    methods: dict[str, Any] = {"__init__": __init__, "__repr__": __repr__, "__eq__": __eq__}
    if frozen:

        def __hash__(self: Any) -> int:
            return hash(_values(self, names))

        def __setattr__(self: Any, name: str, value: Any) -> None:
            if type(self) is cls or name in names:
                raise FrozenInstanceError(f"cannot assign to field {name!r}")
            super(cls, self).__setattr__(name, value)

        def __delattr__(self: Any, name: str) -> None:
            if type(self) is cls or name in names:
                raise FrozenInstanceError(f"cannot delete field {name!r}")
            super(cls, self).__delattr__(name)

        methods.update(__hash__=__hash__, __setattr__=__setattr__, __delattr__=__delattr__)
    for method_name, function in methods.items():
        function.__qualname__ = f"{cls.__qualname__}.{method_name}"
        setattr(cls, method_name, function)
    if not frozen:
        cls.__hash__ = None
    setattr(cls, "__match_args__", names)  # noqa: B010 - mypy refuses the plain assignment


def _values(instance: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple([getattr(instance, name) for name in names])


def _init(cls: Any, specs: list[tuple[str, Field]], frozen: bool) -> Any:
    """``__init__`` as ``dataclasses`` writes it: one parameter per field, in order."""
    scope: dict[str, Any] = {"MISSING": MISSING, "__setattr": object.__setattr__}
    store = "__setattr(self, {0!r}, {1})" if frozen else "self.{0} = {1}"
    params: list[str] = []
    body: list[str] = []
    for name, spec in specs:
        value = name
        if spec.default is not MISSING:
            scope[f"__default_{name}"] = spec.default
            params.append(f"{name}=__default_{name}")
        elif spec.default_factory is not MISSING:
            scope[f"__factory_{name}"] = spec.default_factory
            params.append(f"{name}=MISSING")
            value = f"__factory_{name}() if {name} is MISSING else {name}"
        else:
            params.append(name)
        body.append("  " + store.format(name, value))
    source = "\n".join([f"def __init__({', '.join(['self', *params])}):", *(body or ["  pass"])])
    namespace: dict[str, Any] = {}
    exec(source, scope, namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init
