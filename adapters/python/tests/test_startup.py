"""What keeps an adapter process's start cheap, and that it changes nothing.

Every role imports only what it needs: a client never imports the listener
(``http.server``), and no role imports ``dataclasses`` (``inspect``, ``ast``),
``uuid`` (``platform``) or ``tempfile``. The stand-ins (``sdk/record.py``,
``ContentStore``'s references, ``write_json_atomic``'s temporary file) behave as
what they replace. No timing is asserted.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from ahp_py.contract.readiness import write_json_atomic
from ahp_py.sdk import codec, schemas
from ahp_py.sdk.record import FrozenInstanceError, field, record
from ahp_py.sdk.upload import ContentStore

HERE = Path(__file__).resolve().parents[1]
NEVER = ("dataclasses", "inspect", "ast", "uuid", "platform", "tempfile")
SERVER_ONLY = ("http.server", "socketserver", "ahp_py.sdk.listener", "ahp_py.contract.server")


def imported(program: str) -> set[str]:
    """The modules in ``sys.modules`` after ``program`` ran in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", f"{program}\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    return set(done.stdout.split())


@pytest.mark.parametrize(
    "module",
    [
        "ahp_py.suites.core",
        "ahp_py.suites.lifecycle",
        "ahp_py.suites.catalogue",
        "ahp_py.suites.compaction",
        "ahp_py.suites.elicitation",
        "ahp_py.contract.peer",
        "ahp_py.contract.steps",
        "ahp_py.contract.registry",
    ],
)
def test_a_client_imports_no_listener(module: str) -> None:
    modules = imported(f"import {module}")
    assert modules.isdisjoint(NEVER + SERVER_ONLY), sorted(modules & {*NEVER, *SERVER_ONLY})


@pytest.mark.parametrize("suite", ["core", "lifecycle", "catalogue", "compaction", "elicitation"])
def test_a_command_loads_only_its_suite(suite: str) -> None:
    modules = imported(f"from ahp_py import suites\nsuites.find({suite!r})")
    loaded = {m for m in modules if m.startswith("ahp_py.suites.")}
    assert loaded == {f"ahp_py.suites.{suite}"}


def test_a_server_imports_its_listener_and_no_more() -> None:
    modules = imported("import ahp_py.suites.lifecycle, ahp_py.contract.server")
    assert {"http.server", "ahp_py.sdk.listener"} <= modules
    assert modules.isdisjoint(NEVER), sorted(modules & set(NEVER))


def test_the_schema_load_imports_nothing_heavy() -> None:
    program = (
        "from ahp_py.sdk import schemas\n"
        "from ahp_py.sdk.boundaries import DEFINITIONS\n"
        "s = schemas.load()\n"
        "for name in (schemas.INTERCEPT_REQUEST, schemas.INTERCEPT_RESPONSE, *DEFINITIONS):\n"
        "    s.prepare(name)\n"
    )
    modules = imported(program)
    assert modules.isdisjoint(NEVER), sorted(modules & set(NEVER))


# record is dataclass(frozen=True) -------------------------------------------


@record
class Point:
    x: int
    y: str = "y"
    hidden: list[int] = field(default_factory=list, repr=False)
    tag: str | None = field(default=None, repr=False)


@dataclasses.dataclass(frozen=True)
class DataPoint:
    x: int
    y: str = "y"
    hidden: list[int] = dataclasses.field(default_factory=list, repr=False)
    tag: str | None = dataclasses.field(default=None, repr=False)


@record(frozen=False)
class Mutable:
    items: list[int]
    count: int = 0


def test_record_matches_frozen_dataclass() -> None:
    for kind in (Point, DataPoint):
        one: Any = kind(1)
        assert (one.x, one.y, one.hidden, one.tag) == (1, "y", [], None)
        assert kind(1, "z", [2], "t").hidden == [2]
        assert kind(1).hidden is not kind(1).hidden  # a new list each time
        assert kind(x=1, tag="t") == kind(1, "y", [], "t")
        assert kind(1) != kind(2) and kind(1) != (1, "y", [], None)
        assert kind.__match_args__ == ("x", "y", "hidden", "tag")
        with pytest.raises(TypeError):
            kind()
        with pytest.raises(AttributeError, match="cannot assign to field 'x'"):
            one.x = 2
        with pytest.raises(AttributeError, match="cannot delete field 'y'"):
            del one.y
        with pytest.raises(TypeError):
            hash(kind(1, "y", [1]))  # a list field is unhashable
    assert repr(Point(1, "z", [3])) == "Point(x=1, y='z')"
    assert repr(DataPoint(1, "z", [3])) == "DataPoint(x=1, y='z')"
    assert Point.y == DataPoint.y == "y" and Point.tag is None
    assert not hasattr(Point, "hidden") and not hasattr(DataPoint, "hidden")
    with pytest.raises(FrozenInstanceError):
        Point(1).x = 3


def test_a_record_hashes_as_a_dataclass() -> None:
    @record
    class Pair:
        a: int
        b: str

    @dataclasses.dataclass(frozen=True)
    class DataPair:
        a: int
        b: str

    assert hash(Pair(1, "b")) == hash(DataPair(1, "b")) == hash((1, "b"))
    assert len({Pair(1, "b"), Pair(1, "b"), Pair(2, "b")}) == 2


def test_an_unfrozen_record_is_a_plain_dataclass() -> None:
    value = Mutable([1])
    value.count += 1
    value.items.append(2)
    assert value == Mutable([1, 2], 1) and repr(value) == "Mutable(items=[1, 2], count=1)"
    with pytest.raises(TypeError):
        hash(value)


def test_a_field_without_a_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b'"):

        @record
        class Bad:
            a: int = 0
            b: int


# the other stand-ins -----------------------------------------------------------


def test_content_references_are_uuid4_urns() -> None:
    store = ContentStore()
    refs = {store.put(b"x") for _ in range(200)}
    assert len(refs) == 200
    for ref in refs:
        assert ref.startswith("urn:uuid:")
        parsed = uuid.UUID(ref[len("urn:uuid:") :])
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == ref[len("urn:uuid:") :]


def test_atomic_writes_leave_a_private_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "ready.json"
    write_json_atomic(target, {"a": 1})
    write_json_atomic(str(target), {"a": 2})
    assert target.read_bytes() == b'{"a":2}\n'
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600  # as tempfile.mkstemp makes it
    assert [p.name for p in tmp_path.iterdir()] == ["ready.json"]
    with pytest.raises(FileNotFoundError):
        write_json_atomic(tmp_path / "missing" / "r.json", {})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"a": object()})
    assert [p.name for p in tmp_path.iterdir()] == ["ready.json"]


def test_the_place_keyword_shortcut_agrees_with_the_walk(tmp_path: Path) -> None:
    texts = [p.read_bytes() for p in sorted(schemas.default_schema_dir().glob("*.schema.json"))]
    documents = [schemas.translate_patterns(codec.loads(t)) for t in texts]
    assert not schemas._has_place_keyword(texts, documents)
    assert not schemas._has_key(documents, schemas._PLACE_KEYWORDS)
    for text in (
        b'{"$defs": {"a": {"$anchor": "x"}}}',
        b'{"items": {"\\u0024anchor": "x"}}',  # escaped: found by the walk
        b'{"unevaluatedProperties": false}',
        b'{"const": {"$dynamicRef": "#a"}}',  # data counts too (a superset)
    ):
        document = codec.loads(text)
        assert schemas._has_place_keyword([*texts, text], [*documents, document])
    escaped_no_keyword = b'{"title": "caf\\u00e9"}'
    assert not schemas._has_place_keyword(
        [*texts, escaped_no_keyword], [*documents, codec.loads(escaped_no_keyword)]
    )


def test_record_refuses_what_it_would_ignore() -> None:
    """A base class, a ClassVar or a __post_init__ would be honoured by dataclasses
    and silently ignored here, so ``record`` refuses them."""
    from typing import ClassVar

    from ahp_py.sdk.record import record

    class Base:
        pass

    class WithBase(Base):
        a: int

    class WithClassVar:
        a: int
        b: ClassVar[int] = 1

    class WithPostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    for cls in (WithBase, WithClassVar, WithPostInit):
        with pytest.raises(TypeError, match="no base class"):
            record(cls)
