"""Small units: strict JSON, redaction, manifests, scenario loading."""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path

import pytest

from interop import ROOT
from interop.contract.manifest import AdapterDir, ManifestError, discover, load_manifest
from interop.jsonvalue import JsonError, loads, strict_equal
from interop.redact import Redactor
from interop.results import CombinationError, UnknownErrorClass, error_table
from interop.runtime.receipts import WRAPPED, unwrap_receipts
from interop.suites.core.scenarios import CoreSets, ScenarioError, load_set, load_sets
from interop.suites.core.verify import verify_set


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (None, False, False),
        ([1, 2], [2, 1], False),
        ([1], [1, 1], False),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ({"a": [True]}, {"a": [True]}, True),
        ("1", 1, False),
        (0.5, 0.5, True),
        # equal for Python's ==, told apart only by the walk
        ({"a": [1, {"b": True}]}, {"a": [1, {"b": 1}]}, False),
        ([0.0, {"c": False}], [0, {"c": 0}], False),
        # equal, texts differ (number forms, key order): walked to equal
        ({"a": 1, "b": [2.0, -0.0]}, {"b": [2, 0], "a": 1.0}, True),
        # equal texts
        ({"b": 1, "a": ["x", None]}, {"a": ["x", None], "b": 1}, True),
    ],
)
def test_strict_equal(left: object, right: object, equal: bool) -> None:
    assert strict_equal(left, right) is equal
    assert strict_equal(right, left) is equal


def test_duplicate_keys_and_constants_are_rejected() -> None:
    with pytest.raises(JsonError, match="duplicate key 'a'"):
        loads('{"a": 1, "a": 2}')
    with pytest.raises(JsonError, match="duplicate key 'b'"):
        loads('{"x": [{"a": 1, "b": 2, "c": 3, "b": 2}]}')
    assert loads('{"a": {"a": {"a": 1}}, "b": 2}') == {"a": {"a": {"a": 1}}, "b": 2}
    with pytest.raises(JsonError, match="NaN"):
        loads('{"a": NaN}')


def test_redactor_replaces_every_secret() -> None:
    redact = Redactor()
    redact.add("super-secret-token")
    assert redact("Bearer super-secret-token!") == "Bearer [REDACTED]!"
    encoded = base64.b64encode(b"super-secret-token").decode()
    assert redact(f"basic {encoded} / {encoded.rstrip('=')}") == "basic [REDACTED] / [REDACTED]"
    url = base64.urlsafe_b64encode(b"super-secret-token").decode().rstrip("=")
    assert "super" not in redact(url) and redact(url) == "[REDACTED]"
    assert redact("token: super-secr\n    et-token end") == "token: [REDACTED] end"
    assert redact("a\nb") == "a\nb"
    with pytest.raises(ValueError, match="shorter"):
        redact.add("short")


def test_stable_text_hides_ports_pids_and_run_paths() -> None:
    redact = Redactor()
    redact.add_path("/tmp/ahp-run-x1", "<run>")
    text = "connect 127.0.0.1:43123 failed (pid 991) in /tmp/ahp-run-x1/client-3"
    assert redact.stable(text) == "connect 127.0.0.1:<port> failed (pid <pid>) in <run>/client-3"


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"client": ["x"], "server": ["y"]}, "'language' is a required property"),
        (
            {"language": "x", "server": ["y"]},
            r"\$\.client is required: the adapter plays the client",
        ),
        ({"language": "x", "client": [], "server": ["y"]}, r"\$\.client: \[\] should be non-empty"),
        (
            {"language": "x", "client": ["a"], "server": ["y"], "extensions": {"blind": "yes"}},
            r"\$\.extensions\.blind: 'yes' is not of type 'boolean'",
        ),
        (
            {
                "language": "x",
                "client": ["a"],
                "server": ["y"],
                "extensions": {"serverResue": True},
            },
            r"\$\.extensions: unknown key 'serverResue'; did you mean 'serverReuse'\?",
        ),
        (
            {"language": "x", "client": ["a"], "server": ["y"], "clinet": ["a"]},
            r"\$: unknown key 'clinet'; did you mean 'client'\?",
        ),
        (
            {
                "language": "x",
                "client": ["a"],
                "server": ["y"],
                "extensions": {"profiles": ["odd"]},
            },
            "profiles",
        ),
    ],
)
def test_malformed_manifest_names_file_and_field(
    tmp_path: Path, manifest: dict[str, object], message: str
) -> None:
    path = tmp_path / "adapter.json"
    path.write_text(json.dumps(manifest))
    with pytest.raises(ManifestError, match=message) as info:
        load_manifest(path)
    assert str(path) in str(info.value)


def test_adapter_dir_with_interop_manifest(tmp_path: Path) -> None:
    sdk = tmp_path / "sdk-py"
    (sdk / "interop").mkdir(parents=True)
    (sdk / "interop" / "adapter.json").write_text(
        json.dumps({"language": "python", "client": ["c"], "server": ["s"]})
    )
    found = discover(tmp_path / "none", [AdapterDir(sdk)])
    # named after its language; its commands run from the SDK's root (contract v1)
    assert list(found) == ["python"] and found["python"].profiles == ("compat",)
    assert found["python"].directory == sdk.resolve()
    with pytest.raises(ManifestError, match=r"no adapter\.json"):
        discover(tmp_path / "none", [AdapterDir(tmp_path)])


def test_adapter_dir_names_and_clashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ours = tmp_path / "adapters" / "python"
    ours.mkdir(parents=True)
    manifest = {"language": "python", "client": ["c"], "server": ["s"]}
    (ours / "adapter.json").write_text(json.dumps(manifest))
    sdk = tmp_path / "python-sdk"
    (sdk / "interop").mkdir(parents=True)
    (sdk / "interop" / "adapter.json").write_text(json.dumps(manifest))
    found = discover(tmp_path / "adapters", [AdapterDir(sdk), AdapterDir(sdk)])
    assert sorted(found) == ["python", "python-2", "python-3"]
    assert "name it with --adapter-dir NAME=" in capsys.readouterr().err
    named = discover(tmp_path / "adapters", [AdapterDir.parse(f"upstream-py={sdk}")])
    assert named["upstream-py"].directory == sdk.resolve()
    with pytest.raises(ManifestError, match="already taken"):
        discover(tmp_path / "adapters", [AdapterDir.parse(f"python={sdk}")])
    with pytest.raises(ValueError, match="letters, digits"):
        AdapterDir.parse(f"bad name!={sdk}")
    assert AdapterDir.parse("./a=b").name is None  # a path that holds '='


def test_scenario_file_problems_are_named(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    request = {"id": "a", "params": {"event": {"id": "a"}}}
    row = {"id": "a", "request": request, "response": None, "expectError": True, "tags": []}
    path.write_text(json.dumps({"version": 1, "scenarios": [row, row]}))
    with pytest.raises(
        ScenarioError, match=r"scenarios\[1\] \(id 'a'\): duplicate scenario id 'a'"
    ):
        load_set(path)
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "scenarios": [
                    {
                        "id": "a",
                        "request": request,
                        "response": None,
                        "expected": {},
                        "expectError": True,
                        "tags": [],
                    }
                ],
            }
        )
    )
    with pytest.raises(ScenarioError, match=r"\(id 'a'\): expected: .*exactly one of"):
        load_set(path)
    path.write_text('{"version": 1, "scenarios": [}')
    with pytest.raises(ScenarioError, match="malformed JSON"):
        load_set(path)
    big = {"id": "a", "request": request, "response": {"result": {"n": [1, 2**53]}}, "tags": []}
    path.write_text(json.dumps({"version": 1, "scenarios": [{**big, "expectError": True}]}))
    with pytest.raises(
        ScenarioError, match=r"\(id 'a'\): the number at \$\.response\.result\.n\[1\]"
    ):
        load_set(path)
    edge = {**big, "response": {"result": {"n": [2**53 - 1, -(2**53 - 1), 0.5]}}}
    path.write_text(json.dumps({"version": 1, "scenarios": [{**edge, "expectError": True}]}))
    assert load_set(path).ids == ["a"]
    lone = {**big, "response": {"result": {"text": ["ok", "x\ud800"]}}}
    path.write_text(json.dumps({"version": 1, "scenarios": [{**lone, "expectError": True}]}))
    with pytest.raises(
        ScenarioError, match=r"\(id 'a'\): the string at \$\.response\.result\.text\[1\]"
    ):
        load_set(path)
    lone_key = {**big, "response": {"result": {"\udc00": 1}}}
    path.write_text(json.dumps({"version": 1, "scenarios": [{**lone_key, "expectError": True}]}))
    with pytest.raises(ScenarioError, match=r"\$\.response\.result \(a key\)"):
        load_set(path)
    paired = {**big, "response": {"result": {"text": "\U0001f600 \u00e9"}}}
    path.write_text(json.dumps({"version": 1, "scenarios": [{**paired, "expectError": True}]}))
    assert load_set(path).ids == ["a"]  # a pair (json.dumps writes \ud83d\ude00) is one code point


def _set_file(path: Path, ids: list[str], **outside: object) -> Path:
    rows = [
        {
            "id": i,
            "request": {"id": i, "params": {"event": {"id": i}}},
            "response": None,
            "expectError": True,
            "tags": [],
        }
        for i in ids
    ]
    path.write_text(json.dumps({"version": 1, **outside, "scenarios": rows}))
    return path


def test_core_sets_run_as_one_file_and_rows_keep_their_set(tmp_path: Path) -> None:
    one = _set_file(tmp_path / "one.json", ["a", "b"])
    two = _set_file(tmp_path / "two.json", ["c"])
    clash = _set_file(tmp_path / "clash.json", ["a"])
    # a core file is exactly {version, scenarios}: a set that differs outside them is
    # made in memory (another suite's file may carry more: tests/test_merged_sets.py)
    loaded = load_set(_set_file(tmp_path / "other.json", ["d"]))
    other = dataclasses.replace(loaded, document={**loaded.document, "note": "differs"})
    with pytest.raises(ScenarioError, match=r"other\.json: note: unknown key"):
        load_set(_set_file(tmp_path / "other.json", ["d"], note="differs outside scenarios"))
    (run,) = load_sets([one, two]).runs()
    assert run.name == "one+two" and run.ids == ["a", "b", "c"]
    assert [run.origin(i) for i in run.ids] == ["one", "one", "two"]
    written = json.loads(run.write_full(tmp_path / "full.json").read_text())
    assert [r["id"] for r in written["scenarios"]] == ["a", "b", "c"]
    blind = json.loads(run.write_blind(tmp_path / "blind.json").read_text())
    assert all("expectError" not in r for r in blind["scenarios"])
    # shared ids or a different file outside `scenarios`: each set runs alone
    assert [r.name for r in load_sets([one, clash, two]).runs()] == ["one", "clash+two"]
    assert [r.name for r in CoreSets([load_set(one), other]).runs()] == ["one", "other"]
    report = {
        "language": "python",
        "results": [
            {"id": i, "status": "completed", "actual": {"rejected": True}} for i in run.ids
        ],
    }
    verdict = verify_set(
        run,
        report=report,
        receipts=[],
        client_exit=0,
        language="python",
        blind=True,
        stage="client[one+two]",
        wire=False,
    )
    assert [(row.set, row.id, row.status) for row in verdict.rows] == [
        ("one", "a", "passed"),
        ("one", "b", "passed"),
        ("two", "c", "passed"),
    ], verdict.errors


def test_docs_errors_is_the_error_table() -> None:
    assert error_table() in (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")


def test_an_unknown_error_class_is_refused() -> None:
    with pytest.raises(UnknownErrorClass):
        CombinationError("stage", "NoSuchClass", "message")


def test_redactor_finds_secrets_whole_and_split_across_lines() -> None:
    redactor = Redactor()
    secret = "s3cret-token-value"
    redactor.add(secret)
    assert redactor(f"a {secret} b") == "a [REDACTED] b"
    assert redactor("a s3cret-tok\n      en-value b") == "a [REDACTED] b"
    assert redactor("x s3cret\r\n  -token\n\n\t-value y s3cret-token-value") == (
        "x [REDACTED] y [REDACTED]"
    )
    assert redactor("s3cret-token-\nvalue\ns3cret-token-\n value") == "[REDACTED]\n[REDACTED]"
    untouched = "no secret\n  here s3cret-token\n-other"
    assert redactor(untouched) == untouched


def test_redactor_finds_secrets_inside_longer_runs_and_after_later_additions() -> None:
    redactor = Redactor()
    redactor.add("eyJhbGciOi.payload-part")  # '.' joins the alphabet
    assert redactor("tokeneyJhbGciOi.payload-partXYZ") == "token[REDACTED]XYZ"
    assert redactor("eyJhbGciOi.payload-par") == "eyJhbGciOi.payload-par"  # a prefix is not one
    redactor.add("a+b/c=d e!f")  # later: the next call sees it, spaces and all
    assert redactor("<a+b/c=d e!f>") == "<[REDACTED]>"
    redactor.add("overlap-one-two")
    redactor.add("one-two-three")  # overlapping secrets: no character of either is left
    left = redactor("overlap-one-two-three")
    assert "overlap" not in left and "three" not in left
    assert redactor("x " * 50_000 + "overlap-one-two") == "x " * 50_000 + "[REDACTED]"


def test_schema_verdicts_are_remembered_by_exact_text(tmp_path: Path) -> None:
    from interop.schema import SchemaSet

    (tmp_path / "n.schema.json").write_text(
        json.dumps(
            {
                "$id": "https://example.test/n.schema.json",
                "type": "object",
                "properties": {"n": {"type": "integer"}},
            }
        )
    )
    schemas = SchemaSet(tmp_path)
    value: dict[str, object] = {"n": 1}
    assert schemas.issue("n.schema.json", value) is None
    value["n"] = True  # the same object, another text: judged afresh
    found = schemas.issue("n.schema.json", value)
    assert found is not None and found.path == "$.n"
    assert schemas.issue("n.schema.json", {"n": True}) == found
    assert schemas.issue("n.schema.json", {"n": 1.0}) is None  # 2020-12: 1.0 is an integer
    assert schemas.issue("n.schema.json", {"n": 1.5}) is not None
    assert schemas.issue("n.schema.json", {"n": {1}}) is not None  # not JSON: never remembered


def test_slots_hand_out_shares_in_the_jobs_order() -> None:
    import threading

    from interop.runner import Slots

    slots = Slots(1)
    started: list[int] = []

    def job(ticket: int, share: float) -> None:
        slots.take(ticket, share)
        started.append(ticket)

    slots.take(0, 0.5)
    later = threading.Thread(target=job, args=(2, 0.5))
    later.start()
    later.join(0.2)
    assert started == []  # ticket 1 has not started: ticket 2 waits its turn
    first = threading.Thread(target=job, args=(1, 1.0))
    first.start()
    first.join(0.2)
    assert started == []  # a whole slot is not free while ticket 0 holds half
    slots.give(0.5)
    first.join(5)
    assert started == [1]
    slots.give(1.0)
    later.join(5)
    assert started == [1, 2]
    blocked = threading.Thread(target=job, args=(3, 1.0))
    blocked.start()
    slots.open()  # an interrupted run: whoever waits starts
    blocked.join(5)
    assert started == [1, 2, 3]


def test_owned_processes_finds_each_owners_descendants_exactly() -> None:
    """The /proc children walk finds what psutil's parent map finds, grandchildren
    included, and a marker matches its owner only (`o` is not `o1`)."""
    import os
    import subprocess
    import time

    import psutil

    from interop.runtime import process

    started = [
        subprocess.Popen(
            ["sh", "-c", "sleep 30 & sleep 30 & wait"],
            env={**os.environ, process.OWNER_VARIABLE: owner},
        )
        for owner in ("o1", "o1", "o2")
    ]
    try:
        deadline = time.monotonic() + 10
        while len(process.owned_processes("o1")) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        walked = sorted(p.pid for p in process.owned_processes("o1"))
        mapped = sorted(
            p.pid for p in psutil.Process().children(recursive=True) if process._owner_of(p) == "o1"
        )
        assert len(walked) == 6 and walked == mapped
        assert len(process.owned_processes("o2")) == 3
        assert process.owned_processes("o") == []
    finally:
        for owner in ("o1", "o2"):
            process.kill_owner(owner, grace=1.0)
        for child in started:
            child.wait()
    assert process.owned_processes("o1") == []


def test_receipts_compare_strictly_with_remembered_request_texts() -> None:
    """A receipt equal to its request passes (other number forms, other key order);
    one that turns a boolean into a number fails, also after the request's text is
    remembered."""
    from interop.suites.common import check_receipts

    request = {"id": "r1", "params": {"flag": True, "n": 1.0, "list": [0, False]}}
    requests = {"r1": request}
    same = {"params": {"list": [0, False], "n": 1, "flag": True}, "id": "r1"}
    assert check_receipts([same], requests, {"r1"}, "s") == []
    assert check_receipts([json.loads(json.dumps(request))], requests, {"r1"}, "s") == []
    for changed in (
        {"id": "r1", "params": {"flag": 1, "n": 1.0, "list": [0, False]}},
        {"id": "r1", "params": {"flag": True, "n": 1.0, "list": [False, False]}},
        {"id": "r1", "params": {"flag": True, "n": 2, "list": [0, False]}},
    ):
        errors = check_receipts([changed], requests, {"r1"}, "s")
        assert [e.error_class for e in errors] == ["ReceiptMismatch"], changed


def test_registry_counts_the_cpu_of_exited_processes_with_their_children(
    tmp_path: Path,
) -> None:
    """A process's CPU is read when it has exited, before it is reaped: its own and
    that of the children it waited for, under its adapter and role."""
    import sys

    from interop.runtime import process

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass\n"
    parent = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {burn!r}])\n{burn}"
    registry = process.Registry()
    spawned = registry.spawn(
        [sys.executable, "-c", parent], owner="cpu-test", adapter="x", label="client", cwd=tmp_path
    )
    assert process.wait_exit(spawned, 30) == 0
    spawned.close()
    assert registry.cpu["x"]["client"] >= 0.3  # the child's 0.2 s and its own 0.2 s
    silent = registry.spawn(
        [sys.executable, "-c", ""], owner="cpu-test", label="server", cwd=tmp_path
    )
    process.wait_exit(silent, 30)
    silent.close()
    assert list(registry.cpu) == ["x"]  # no adapter named: not counted


def test_a_signal_while_the_command_line_is_parsed_ends_in_130_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seen by the signal moments test: SIGTERM 0.4 s after start landed in argparse,
    before `interrupts.handled`, and the harness died of its KeyboardInterrupt."""
    import signal

    import interop.__main__ as entry
    import interop.cli

    def parsing(argv: list[str] | None = None) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(interop.cli, "main", parsing)
    import gc

    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    thresholds = gc.get_threshold()
    try:
        assert entry.main() == 130
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        gc.set_threshold(*thresholds)
    assert "interrupted" in capsys.readouterr().err


def test_wrapped_receipts_are_read_and_checked() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": "a",
        "method": "hooks/intercept",
        "params": {"event": {"id": "a"}},
    }
    plain, problems, shape = unwrap_receipts([request])
    assert plain == [request] and not problems and shape is None
    wrapped = {"id": "a", "method": "hooks/intercept", "eventId": "a", "message": request}
    read, problems, shape = unwrap_receipts([wrapped, {**wrapped, "accepted": True}])
    assert read == [request, request] and not problems and shape == WRAPPED
    for bad, named in (
        ({**wrapped, "id": "b"}, "id 'b'"),
        ({**wrapped, "method": "hooks/observe"}, "method"),
        ({**wrapped, "eventId": "z"}, "eventId"),
        ({**wrapped, "accepted": False}, "accepted"),
        ({"id": "a", "message": request}, "no 'method'"),
        ({**wrapped, "message": "text"}, "not a JSON-RPC request"),
    ):
        _, problems, _ = unwrap_receipts([bad])
        assert len(problems) == 1 and named in problems[0].message, (bad, problems)
        assert problems[0].error_class == "ReceiptMalformed"
