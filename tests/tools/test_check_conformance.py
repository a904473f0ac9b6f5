"""Tests for tools/check_conformance.py and its helpers (schemas, strict JSON, ECMA patterns)."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import interop.schema as js

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import check_conformance as cc  # noqa: E402
from edit_boundaries import edit_problem  # noqa: E402

UPSTREAM = REPO / "scenarios" / "upstream"
FIXTURES = UPSTREAM / "fixtures"
SCENARIOS = UPSTREAM / "scenarios.json"
SCHEMA_DIR = REPO / "schemas" / "draft"
HASH = "a" * 64


@pytest.fixture(scope="module")
def schemas() -> js.SchemaSet:
    return cc.load_schemas(SCHEMA_DIR)


# ------------------------------------------------------------------ helpers


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n")


def run_cli(*args: str) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, str(REPO / "tools" / "check_conformance.py"), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode, proc.stdout.splitlines() + proc.stderr.splitlines()


@pytest.fixture()
def fixture_copy(tmp_path: Path) -> Path:
    """A private copy of the upstream fixture tree (the real one is never modified)."""
    target = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, target)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def manifest_of(tree: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((tree / "draft" / "manifest.json").read_text())
    return manifest


def save_manifest(tree: Path, manifest: dict[str, Any]) -> None:
    write_json(tree / "draft" / "manifest.json", manifest)


def case_named(manifest: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(c for c in manifest["cases"] if c["id"] == case_id)


def rewrite_fixture(tree: Path, case_id: str, data: bytes) -> None:
    """Replace a fixture file and keep its manifest hash in step."""
    manifest = manifest_of(tree)
    case = case_named(manifest, case_id)
    (tree.parent / case["path"]).write_bytes(data)
    case["sha256"] = hashlib.sha256(data).hexdigest()
    save_manifest(tree, manifest)


def assert_one_line_problems(problems: list[str], *needles: str) -> None:
    assert problems, "expected at least one problem"
    assert all("\n" not in p for p in problems)
    joined = "\n".join(problems)
    for needle in needles:
        assert needle in joined, joined


# ------------------------------------------------------------------ the real inputs


def test_upstream_fixtures_all_match(schemas: js.SchemaSet) -> None:
    report = cc.run_fixtures(FIXTURES, schemas)
    assert report.problems == []
    assert (report.cases, report.matched) == (150, 150)


def test_upstream_scenarios_are_well_formed(schemas: js.SchemaSet) -> None:
    assert cc.check_scenarios([SCENARIOS], schemas) == []


def test_cli_summary_and_exit_code() -> None:
    code, lines = run_cli("--fixtures", str(FIXTURES), "--scenarios", str(SCENARIOS))
    assert code == 0, lines
    assert lines[-1] == "150 cases, 150 match; 105 scenarios in 1 files, 0 problems"


def test_cli_without_a_mode_is_a_usage_error() -> None:
    code, lines = run_cli()
    assert code == 2
    assert any("--fixtures" in line for line in lines)


# ------------------------------------------------------------------ ECMA-262 patterns


def test_dollar_newline_trap_exists_in_python_re() -> None:
    assert re.search("^[a-f0-9]{64}$", HASH + "\n") is not None


def test_dollar_newline_trap_is_closed() -> None:
    pattern = js.compile_ecma("^[a-f0-9]{64}$")
    assert pattern.search(HASH)
    assert pattern.search(HASH + "\n") is None


def test_sha256_schema_rejects_trailing_newline(schemas: js.SchemaSet) -> None:
    ref = "common.schema.json#/$defs/sha256"
    assert schemas.issue(ref, HASH) is None
    issue = schemas.issue(ref, HASH + "\n")
    assert issue is not None and "does not match" in issue.message


def test_translation_keeps_classes_and_escapes() -> None:
    assert js.ecma_to_python(r"^a[$.]\$\.b$") == "^a[$.]\\$\\.b\\Z"


def test_dot_and_digit_follow_ecma() -> None:
    assert js.compile_ecma("^a.b$").search("a\u2028b") is None
    assert js.compile_ecma("^a.b$").search("a-b")
    assert js.compile_ecma(r"^\d$").search("\u0663") is None  # Arabic-Indic three


def all_patterns() -> Iterator[tuple[str, str]]:
    def walk(node: Any, name: str) -> Iterator[tuple[str, str]]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern" and isinstance(value, str):
                    yield name, value
                else:
                    yield from walk(value, name)
        elif isinstance(node, list):
            for value in node:
                yield from walk(value, name)

    for path in sorted(SCHEMA_DIR.glob("*.json")):
        yield from walk(json.loads(path.read_text()), path.name)


def test_patterns_stay_in_the_portable_subset() -> None:
    patterns = list(all_patterns())
    assert patterns
    for name, pattern in patterns:
        assert not re.search(r"\(\?[=!<]", pattern), (name, pattern)  # lookaround
        assert not re.search(r"\\[1-9]", pattern), (name, pattern)  # backreference
        assert "(?P" not in pattern and "(?i" not in pattern, (name, pattern)
        re.compile(js.ecma_to_python(pattern))


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_patterns_compile_as_ecma262_unicode_regexps() -> None:
    patterns = sorted({p for _, p in all_patterns()})
    script = "for (const p of JSON.parse(process.argv[1])) new RegExp(p, 'u');"
    proc = subprocess.run(
        ["node", "-e", script, json.dumps(patterns)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr


# ------------------------------------------------------------------ formats


def test_formats_are_asserted(schemas: js.SchemaSet) -> None:
    uri, date_time = "common.schema.json#/$defs/uri", "common.schema.json#/$defs/dateTime"
    assert schemas.issue(uri, "urn:uuid:5b7de29e-a9e0-41a8-bf26-d94b05f0656d") is None
    assert schemas.issue(uri, "https://bad host/%zz") is not None
    assert schemas.issue(uri, "relative/path") is not None
    assert schemas.issue(date_time, "2026-08-24T08:51:14Z") is None
    assert schemas.issue(date_time, "20260915T120000+0000") is not None
    assert schemas.issue(date_time, "2026-02-30T00:00:00Z") is not None


def test_missing_format_packages_fail_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    class Permissive(jsonschema.FormatChecker):  # type: ignore[misc]
        def conforms(self, instance: object, format: str) -> bool:
            return True

    monkeypatch.setattr(js, "FormatChecker", Permissive)
    with pytest.raises(js.FormatSupportError, match="uri, date-time"):
        js.strict_format_checker()


# ------------------------------------------------------------------ strict JSON


def test_duplicate_keys_are_rejected_at_any_depth() -> None:
    with pytest.raises(js.StrictJsonError, match="duplicate key 'a'"):
        js.loads_strict('{"x": {"a": 1, "a": 2}}')


def test_non_json_constants_are_rejected() -> None:
    with pytest.raises(js.StrictJsonError, match="NaN"):
        js.loads_strict('{"x": NaN}')


# ------------------------------------------------------------------ fixtures: bad input


def test_tampered_fixture_fails_on_hash(fixture_copy: Path) -> None:
    case = case_named(manifest_of(fixture_copy), "http.deny-response.valid")
    path = fixture_copy.parent / case["path"]
    path.write_bytes(path.read_bytes().replace(b"approval", b"approvaI"))
    problems = cc.check_fixtures(fixture_copy)
    assert_one_line_problems(problems, "case http.deny-response.valid", "sha256 mismatch")
    assert len(problems) == 1


@pytest.mark.parametrize(
    ("case_id", "key", "needle"),
    [
        ("http.deny-response.valid", "expectedValid", "expected invalid, got valid"),
        ("http.atomic-unknown.invalid", "expectedValid", "$.result.effects[1].type"),
        (
            "stdio.deny-response-multiple.invalid",
            "aggregateExpectedValid",
            "schema.json (aggregate)",
        ),
        (
            "http.contextual-elicitation-content-url.invalid",
            "contextualExpectedValid",
            "edit boundary user.elicitation.result",
        ),
        ("http.contextual-tool-output-append.valid", "contextualExpectedValid", "expected invalid"),
    ],
)
def test_flipped_expectation_fails(fixture_copy: Path, case_id: str, key: str, needle: str) -> None:
    manifest = manifest_of(fixture_copy)
    case = case_named(manifest, case_id)
    case[key] = not case[key]
    save_manifest(fixture_copy, manifest)
    problems = cc.check_fixtures(fixture_copy)
    assert_one_line_problems(problems, f"case {case_id}", needle)
    assert len(problems) == 1


def test_flipped_expectation_fails_the_cli(fixture_copy: Path) -> None:
    manifest = manifest_of(fixture_copy)
    case_named(manifest, "http.intercept-request-id-mismatch.invalid")["expectedValid"] = True
    save_manifest(fixture_copy, manifest)
    code, lines = run_cli("--fixtures", str(fixture_copy))
    assert code == 1
    assert "intercept request id differs from params.event.id" in lines[0]
    assert lines[-1] == "150 cases, 149 match; FAILED (1 problems)"


def mutate_manifest(tree: Path, change: Any) -> list[str]:
    manifest = manifest_of(tree)
    change(manifest)
    save_manifest(tree, manifest)
    return cc.check_fixtures(tree)


def test_unknown_schema_name_fails(fixture_copy: Path) -> None:
    def change(m: dict[str, Any]) -> None:
        case_named(m, "http.deny-response.valid")["schema"] = "schema/draft/tool-error.schema.json"

    problems = mutate_manifest(fixture_copy, change)
    assert_one_line_problems(problems, "case http.deny-response.valid", "unknown schema name")
    assert len(problems) == 1


def test_duplicate_case_id_fails(fixture_copy: Path) -> None:
    def change(m: dict[str, Any]) -> None:
        m["cases"].append(copy.deepcopy(m["cases"][0]))

    assert_one_line_problems(mutate_manifest(fixture_copy, change), "duplicate case id")


def test_missing_fixture_file_fails(fixture_copy: Path) -> None:
    case = case_named(manifest_of(fixture_copy), "http.deny-response.valid")
    (fixture_copy.parent / case["path"]).unlink()
    assert_one_line_problems(
        cc.check_fixtures(fixture_copy), "case http.deny-response.valid", "missing file"
    )


def test_unlisted_fixture_file_fails(fixture_copy: Path) -> None:
    (fixture_copy / "draft" / "http" / "stray.valid.json").write_text("{}\n")
    assert_one_line_problems(cc.check_fixtures(fixture_copy), "stray.valid.json is not listed")


def test_unknown_case_field_fails(fixture_copy: Path) -> None:
    def change(m: dict[str, Any]) -> None:
        case_named(m, "http.deny-response.valid")["expectedVlaid"] = True

    assert_one_line_problems(
        mutate_manifest(fixture_copy, change), "unknown case fields expectedVlaid"
    )


def test_malformed_manifest_fails(fixture_copy: Path) -> None:
    (fixture_copy / "draft" / "manifest.json").write_text('{"cases": [')
    assert_one_line_problems(cc.check_fixtures(fixture_copy), "manifest.json: malformed JSON")


def test_duplicate_key_in_manifest_fails(fixture_copy: Path) -> None:
    (fixture_copy / "draft" / "manifest.json").write_text('{"cases": [], "cases": []}')
    assert_one_line_problems(cc.check_fixtures(fixture_copy), "duplicate key 'cases'")


def test_duplicate_key_in_fixture_fails(fixture_copy: Path) -> None:
    data = (
        b'{"jsonrpc":"2.0","id":"evt_http_002","id":"x",'
        b'"result":{"protocolVersion":"draft","effects":[]}}'
    )
    rewrite_fixture(fixture_copy, "http.no-effect-response.valid", data)
    assert_one_line_problems(
        cc.check_fixtures(fixture_copy), "case http.no-effect-response.valid", "duplicate key 'id'"
    )


def test_malformed_fixture_fails(fixture_copy: Path) -> None:
    rewrite_fixture(fixture_copy, "http.no-effect-response.valid", b'{"jsonrpc":')
    assert_one_line_problems(
        cc.check_fixtures(fixture_copy), "case http.no-effect-response.valid", "malformed JSON"
    )


@pytest.mark.parametrize(
    ("suffix", "needle"),
    [(b"", "not terminated by LF"), (b"\r\n", "carriage return"), (b"\n\n", "more than one line")],
)
def test_stdio_framing_is_enforced(fixture_copy: Path, suffix: bytes, needle: str) -> None:
    case = case_named(manifest_of(fixture_copy), "stdio.no-effect-response.valid")
    line = (fixture_copy.parent / case["path"]).read_bytes().rstrip(b"\n")
    rewrite_fixture(fixture_copy, "stdio.no-effect-response.valid", line + suffix)
    assert_one_line_problems(
        cc.check_fixtures(fixture_copy), "case stdio.no-effect-response.valid", needle
    )


# ------------------------------------------------------------------ message rules


def load_fixture(case_id: str) -> Any:
    manifest = json.loads((FIXTURES / "draft" / "manifest.json").read_text())
    return json.loads((UPSTREAM / case_named(manifest, case_id)["path"]).read_text())


def test_http_intercept_request_id_must_equal_event_id(schemas: js.SchemaSet) -> None:
    request = load_fixture("http.intercept-request.valid")
    assert cc.message_problem(schemas, "intercept-request.schema.json", request) is None
    request["id"] = "other"
    assert cc.message_problem(schemas, "schema.json", request) == (
        "$.id: intercept request id differs from params.event.id"
    )


def test_intercept_response_envelope_is_open(schemas: js.SchemaSet) -> None:
    response: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": "x",
        "futureMetadata": {"ignored": True},
        "result": {"protocolVersion": "draft", "effects": [], "futureMetadata": 1},
    }
    assert schemas.issue("intercept-response.schema.json", response) is None
    response["result"]["effects"] = [{"type": "allow", "extra": 1}]
    assert schemas.issue("intercept-response.schema.json", response) is not None


def test_registration_rules_beyond_missing_content(schemas: js.SchemaSet) -> None:
    """The upstream invalid registrations also lack `content`; show each real rule alone."""
    doc = load_fixture("registration.intercept-observation-event.invalid")
    doc["hooks"][0]["subscriptions"][0]["content"] = {"default": "metadata"}
    issue = schemas.issue("registration.schema.json", doc)
    assert issue is not None and "turn.end" in issue.message

    doc = load_fixture("registration.observe-policy-fields.invalid")
    doc["hooks"][0]["subscriptions"][0]["content"] = {"default": "metadata"}
    issue = schemas.issue("registration.schema.json", doc)
    assert issue is not None and "timeoutMs" in issue.message

    doc = load_fixture("registration.portable.valid")
    doc["hooks"][1]["id"] = doc["hooks"][0]["id"]
    assert "duplicate backend id" in (
        cc.message_problem(schemas, "registration.schema.json", doc) or ""
    )


def test_elicitation_payload_text_is_checked(schemas: js.SchemaSet) -> None:
    message = load_fixture("http.catalogue-user.elicitation.result.valid")
    assert cc.message_problem(schemas, "observe-notification.schema.json", message) is None
    message["params"]["event"]["elicitation"]["result"]["text"] = '{"action": "maybe"}'
    problem = cc.message_problem(schemas, "observe-notification.schema.json", message)
    assert problem is not None and problem.startswith("$.params.event.elicitation.result.text")


def test_capability_narrowing_follows_the_event(schemas: js.SchemaSet) -> None:
    request = load_fixture("http.intercept-request.valid")
    request["params"]["capabilities"] = {"effects": ["deny", "inject"]}
    issue = schemas.issue("intercept-request.schema.json", request)
    assert issue is not None and issue.path == "$.params.capabilities"  # inject without its block
    request["params"]["capabilities"] = {
        "effects": ["inject"],
        "inject": {"context": {"append": True, "deliverAt": ["now"]}},
    }
    assert schemas.issue("intercept-request.schema.json", request) is None


# ------------------------------------------------------------------ edit boundaries


def modify(target: str, operation: str, value: Any) -> dict[str, Any]:
    effect = {"type": "modify", "target": target, "operation": operation, "value": value}
    return {
        "jsonrpc": "2.0",
        "id": "e",
        "result": {"protocolVersion": "draft", "effects": [effect]},
    }


def text_message(role: str, selection: str = "body") -> dict[str, Any]:
    part: dict[str, Any] = {
        "id": "p",
        "kind": "text",
        "mediaType": "text/plain",
        "selection": selection,
    }
    if selection == "body":
        part["text"] = "t"
    return {"id": "m", "role": role, "parts": [part]}


def context(
    event: str, current: dict[str, Any], mode: str = "", action: str = ""
) -> dict[str, Any]:
    return {"event": event, "current": current, "mode": mode, "action": action}


def test_whole_list_replace_over_withheld_content_is_rejected(schemas: js.SchemaSet) -> None:
    ctx = context("tool.after", {"output": [text_message("tool", "omit")]})
    assert "withheld" in (edit_problem(schemas, modify("output", "replace", []), ctx) or "")
    assert edit_problem(schemas, modify("output", "merge", [text_message("tool")]), ctx) is None


def test_outbound_messages_keep_the_assistant_role(schemas: js.SchemaSet) -> None:
    ctx = context("user.message.outbound", {"content": []})
    assert (
        edit_problem(schemas, modify("content", "merge", [text_message("assistant")]), ctx) is None
    )
    assert "role 'assistant'" in (
        edit_problem(schemas, modify("content", "merge", [text_message("user")]), ctx) or ""
    )


def test_target_must_belong_to_the_boundary(schemas: js.SchemaSet) -> None:
    ctx = context("tool.after", {"output": []})
    assert "not editable at tool.after" in (
        edit_problem(schemas, modify("input", "merge", {}), ctx) or ""
    )


def test_return_shape_depends_on_the_boundary(schemas: js.SchemaSet) -> None:
    response = {
        "jsonrpc": "2.0",
        "id": "e",
        "result": {"protocolVersion": "draft", "effects": [{"type": "return", "value": 3}]},
    }
    assert edit_problem(schemas, response, context("tool.before", {"input": {}})) is None
    assert "must be a list" in (
        edit_problem(schemas, response, context("model.request.before", {})) or ""
    )
    assert "no supplied result" in (
        edit_problem(schemas, response, context("tool.after", {})) or ""
    )


# ------------------------------------------------------------------ scenarios: bad input


@pytest.fixture()
def scenario_file(tmp_path: Path) -> Path:
    document = json.loads(SCENARIOS.read_text())
    document["scenarios"] = document["scenarios"][:3] + [
        s for s in document["scenarios"] if s["id"] == "deny-missing-reason"
    ]
    path = tmp_path / "core.json"
    write_json(path, document)
    return path


def edit_scenarios(path: Path, change: Any) -> list[str]:
    document = json.loads(path.read_text())
    change(document["scenarios"])
    write_json(path, document)
    return cc.check_scenarios([path])


def test_small_scenario_file_is_clean(scenario_file: Path) -> None:
    assert cc.check_scenarios([scenario_file]) == []


def test_duplicate_scenario_ids_fail(scenario_file: Path) -> None:
    problems = edit_scenarios(scenario_file, lambda s: s.append(copy.deepcopy(s[0])))
    assert_one_line_problems(
        problems,
        f"scenario {json.loads(SCENARIOS.read_text())['scenarios'][0]['id']}: duplicate id",
    )


def test_request_ids_must_equal_the_scenario_id(scenario_file: Path) -> None:
    def change(s: list[dict[str, Any]]) -> None:
        s[0]["request"]["params"]["event"]["id"] = "elsewhere"

    assert_one_line_problems(
        edit_scenarios(scenario_file, change), "$.params.event.id differs from the scenario id"
    )


def test_schema_invalid_tag_must_match_the_response(scenario_file: Path) -> None:
    def tag_valid(s: list[dict[str, Any]]) -> None:
        s[0]["tags"].append("schema-invalid")

    assert_one_line_problems(
        edit_scenarios(scenario_file, tag_valid), "tagged schema-invalid but valid"
    )


def test_untagged_invalid_response_fails(scenario_file: Path) -> None:
    def untag(s: list[dict[str, Any]]) -> None:
        s[3]["tags"].remove("schema-invalid")

    assert_one_line_problems(
        edit_scenarios(scenario_file, untag),
        "scenario deny-missing-reason: response",
        "$.result.effects[1]",
    )


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda s: s[0].update(expectError=True), "exactly one of expected and expectError"),
        (lambda s: s[0].update(hostExpected={}), "hostExpected is allowed only beside expectError"),
        (lambda s: s[3].update(expectError=1), "deny-missing-reason: expectError: must be true"),
        (lambda s: s[0].update(note="x"), ": note: unknown key"),
        (lambda s: s[0].pop("tags"), ": tags: missing"),
        (lambda s: s[0]["expected"].update(decison="allow"), ": expected.decison: unknown key"),
        (lambda s: s[1]["expected"].update(executed="yes"), ": expected.executed: expected a"),
    ],
)
def test_scenario_shape_rules(scenario_file: Path, change: Any, needle: str) -> None:
    assert_one_line_problems(edit_scenarios(scenario_file, change), needle)


def test_malformed_and_missing_scenario_files_fail(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 1, "scenarios": [')
    dup = tmp_path / "dup.json"
    dup.write_text('{"version": 1, "version": 1, "scenarios": []}')
    problems = cc.check_scenarios([broken, dup, tmp_path / "absent.json"])
    assert_one_line_problems(
        problems,
        "broken.json: malformed JSON",
        "dup.json: duplicate key 'version'",
        "absent.json: cannot read",
    )
    assert len(problems) == 3


def test_scenario_problems_fail_the_cli(scenario_file: Path) -> None:
    edit_scenarios(scenario_file, lambda s: s.append(copy.deepcopy(s[1])))
    code, lines = run_cli("--scenarios", str(scenario_file))
    assert code == 1
    assert "duplicate id" in lines[0]


# ------------------------------------------------------------------ schema set


def test_schema_manifest_lists_every_schema() -> None:
    manifest = json.loads((SCHEMA_DIR / "manifest.json").read_text())
    listed = {entry["file"]: entry["$id"] for entry in manifest["schemas"]}
    on_disk = {p.name for p in SCHEMA_DIR.glob("*.json") if p.name != "manifest.json"}
    assert set(listed) == on_disk
    for name, schema_id in listed.items():
        document = json.loads((SCHEMA_DIR / name).read_text())
        assert document["$id"] == schema_id == manifest["baseId"] + name
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_refs_are_relative() -> None:
    for path in SCHEMA_DIR.glob("*.json"):
        for ref in re.findall(r'"\$ref": "([^"]*)"', path.read_text()):
            assert "://" not in ref, (path.name, ref)


def test_unknown_schema_is_a_key_error(schemas: js.SchemaSet) -> None:
    with pytest.raises(KeyError):
        schemas.validator("tool-error.schema.json")
