#!/usr/bin/env python3
"""Check golden fixtures and scenario files against the project's own JSON Schemas.

    python3 tools/check_conformance.py --fixtures scenarios/upstream/fixtures
    python3 tools/check_conformance.py --scenarios scenarios/core.json \
        scenarios/upstream/scenarios.json

Exit status 0 only when every fixture case matches its expectations and every
scenario is well formed; otherwise each problem is printed on one line
(file, case or scenario id, schema, JSON path) and the status is 1. Bad
invocations and a missing format package exit 2.

Importable API: `load_schemas`, `validator_for`, `check_fixtures`,
`run_fixtures`, `check_scenarios`, `message_problem`.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # the harness of this checkout, not another one installed
    sys.path.insert(0, str(REPO_ROOT))

from edit_boundaries import edit_problem  # noqa: E402

from interop.schema import (  # noqa: E402
    AGGREGATE_SCHEMA,
    FormatSupportError,
    SchemaSet,
    StrictJsonError,
    load_json_file,
    loads_strict,
)
from interop.suites.scenario_schema import problems as format_problems  # noqa: E402

DEFAULT_SCHEMA_DIR = REPO_ROOT / "schemas" / "draft"

# Upstream names its schemas `schema/draft/<file>`; ours live in schemas/draft/<file>
# under the same file names, so the mapping is identity on the file name. A name
# we do not have (for example the removed tool-error.schema.json) is an error.
UPSTREAM_SCHEMA_PREFIX = "schema/draft/"

BINDINGS = {"stdio-jsonl": ".jsonl", "http-json": ".json", "registration-json": ".json"}
WIRE_BINDINGS = {"stdio-jsonl", "http-json"}
CASE_REQUIRED = {"id", "path", "binding", "schema", "expectedValid", "requirements", "sha256"}
CASE_OPTIONAL = {"aggregateExpectedValid", "eventSchema", "contextualExpectedValid", "editContext"}
EDIT_CONTEXT_KEYS = {"event", "current", "mode", "action"}
REQUIREMENT_ID = re.compile(r"AHP-[A-Z]+-[0-9]{3}\Z")
SHA256_HEX = re.compile(r"[a-f0-9]{64}\Z")

SCENARIO_FORMAT = "core"  # schemas/scenarios/core.schema.json: the files' shape
SCHEMA_INVALID_TAG = "schema-invalid"
INTERCEPT_REQUEST = "intercept-request.schema.json"
INTERCEPT_RESPONSE = "intercept-response.schema.json"
ELICITATION_PAYLOADS = {
    ("user.elicitation.request", "request"): "mcp-elicitation.schema.json#/$defs/requestParams",
    ("user.elicitation.result", "result"): "mcp-elicitation.schema.json#/$defs/result",
}


class InputError(Exception):
    """Input the checker cannot judge: the run fails with this one-line reason."""


# ------------------------------------------------------------------ schemas


@functools.cache
def load_schemas(directory: Path = DEFAULT_SCHEMA_DIR) -> SchemaSet:
    """All schemas of a directory in one registry; cached per directory."""
    return SchemaSet(Path(directory), check=True)


def validator_for(name: str, directory: Path = DEFAULT_SCHEMA_DIR) -> Any:
    """The cached validator for one schema file (optionally `file#/json/pointer`)."""
    return load_schemas(directory).validator(name)


def map_schema_name(upstream: str, schemas: SchemaSet) -> str:
    """Our schema file for an upstream schema path; InputError when we have none."""
    name = (
        upstream[len(UPSTREAM_SCHEMA_PREFIX) :]
        if upstream.startswith(UPSTREAM_SCHEMA_PREFIX)
        else ""
    )
    if name not in schemas.documents:
        raise InputError(f"unknown schema name {upstream!r}")
    return name


# ------------------------------------------------------------------ message rules


def message_problem(schemas: SchemaSet, schema: str, message: Any) -> str | None:
    """None when the message is valid against `schema` and the rules outside JSON Schema."""
    issue = schemas.issue(schema, message)
    if issue is not None:
        return f"{schema}: {issue}"
    return semantic_problem(schemas, message)


def semantic_problem(schemas: SchemaSet, message: Any) -> str | None:
    """Rules JSON Schema cannot state.

    Intercept id correlation, embedded MCP elicitation payloads, unique backend ids.
    """
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    event = params.get("event") if isinstance(params, dict) else None
    if (
        message.get("method") == "hooks/intercept"
        and isinstance(event, dict)
        and message.get("id") != event.get("id")
    ):
        return "$.id: intercept request id differs from params.event.id"
    if isinstance(event, dict):
        problem = _elicitation_payload_problem(schemas, event)
        if problem:
            return problem
    hooks = message.get("hooks")
    if isinstance(hooks, list):
        seen: set[Any] = set()
        for index, backend in enumerate(hooks):
            backend_id = backend.get("id") if isinstance(backend, dict) else None
            if backend_id in seen:
                return f"$.hooks[{index}].id: duplicate backend id {backend_id!r}"
            seen.add(backend_id)
    return None


def _elicitation_payload_problem(schemas: SchemaSet, event: dict[str, Any]) -> str | None:
    elicitation = event.get("elicitation")
    if not isinstance(elicitation, dict):
        return None
    for (event_type, key), schema in ELICITATION_PAYLOADS.items():
        part = elicitation.get(key)
        if event.get("type") != event_type or not isinstance(part, dict):
            continue
        text = part.get("text")
        if not isinstance(text, str):
            continue  # withheld (metadata, omit or gap): nothing to parse
        where = f"$.params.event.elicitation.{key}.text"
        try:
            payload = loads_strict(text)
        except StrictJsonError as exc:
            return f"{where}: {exc}"
        issue = schemas.issue(schema, payload)
        if issue is not None:
            return f"{where}: {schema}: {issue}"
    return None


def stdio_framing_problem(raw: bytes) -> str | None:
    """AHP-STDIO-001: exactly one LF-terminated line, no CR, no raw newline inside."""
    if b"\r" in raw:
        return "stdio framing: carriage return present"
    if not raw.endswith(b"\n"):
        return "stdio framing: not terminated by LF"
    if raw.count(b"\n") != 1:
        return "stdio framing: more than one line"
    return None


# ------------------------------------------------------------------ fixtures


@dataclass
class FixtureReport:
    cases: int = 0
    matched: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FixtureCase:
    id: str
    path: str
    binding: str
    schema: str
    expected_valid: bool
    sha256: str
    aggregate_expected: bool | None
    event_schema: str | None
    contextual_expected: bool | None
    edit_context: dict[str, Any] | None


def _require(condition: bool, reason: str) -> None:
    if not condition:
        raise InputError(reason)


def _parse_case(entry: Any, schemas: SchemaSet) -> FixtureCase:
    _require(isinstance(entry, dict), "case is not an object")
    case_id = entry.get("id")
    _require(isinstance(case_id, str) and case_id != "", "case without a string id")
    missing = CASE_REQUIRED - set(entry)
    _require(not missing, f"missing {', '.join(sorted(missing))}")
    unknown = set(entry) - CASE_REQUIRED - CASE_OPTIONAL
    _require(not unknown, f"unknown case fields {', '.join(sorted(unknown))}")
    _require(entry["binding"] in BINDINGS, f"unknown binding {entry['binding']!r}")
    for key in ("expectedValid", "aggregateExpectedValid", "contextualExpectedValid"):
        _require(key not in entry or isinstance(entry[key], bool), f"{key} is not a boolean")
    if entry["binding"] in WIRE_BINDINGS:
        _require("aggregateExpectedValid" in entry, "wire fixture without aggregateExpectedValid")
    _require(
        isinstance(entry["sha256"], str) and SHA256_HEX.match(entry["sha256"]) is not None,
        "sha256 is not 64 lowercase hex digits",
    )
    requirements = entry["requirements"]
    _require(
        isinstance(requirements, list)
        and all(isinstance(r, str) and REQUIREMENT_ID.match(r) for r in requirements),
        "requirements is not a list of AHP requirement ids",
    )
    _require(
        ("contextualExpectedValid" in entry) == ("editContext" in entry),
        "contextualExpectedValid and editContext must come together",
    )
    context = entry.get("editContext")
    if context is not None:
        _require(
            isinstance(context, dict) and set(context) == EDIT_CONTEXT_KEYS,
            "editContext must have exactly event, current, mode, action",
        )
        _require(isinstance(context["current"], dict), "editContext.current is not an object")
        _require(
            all(isinstance(context[k], str) for k in ("event", "mode", "action")),
            "editContext event, mode and action must be strings",
        )
    _require(isinstance(entry["path"], str), "path is not a string")
    _require(
        entry["path"].endswith(BINDINGS[entry["binding"]]),
        "file extension does not fit the binding",
    )
    for key in ("schema", "eventSchema"):
        _require(key not in entry or isinstance(entry[key], str), f"{key} is not a string")
    return FixtureCase(
        id=case_id,
        path=entry["path"],
        binding=entry["binding"],
        schema=map_schema_name(entry["schema"], schemas),
        expected_valid=entry["expectedValid"],
        sha256=entry["sha256"],
        aggregate_expected=entry.get("aggregateExpectedValid"),
        event_schema=map_schema_name(entry["eventSchema"], schemas)
        if "eventSchema" in entry
        else None,
        contextual_expected=entry.get("contextualExpectedValid"),
        edit_context=context,
    )


def _verdict(expected: bool, problem: str | None) -> str | None:
    """A mismatch description, or None when validity matches the expectation."""
    actual = problem is None
    if actual == expected:
        return None
    if expected:
        return f"expected valid, got invalid: {problem}"
    return "expected invalid, got valid"


def _check_case(case: FixtureCase, base: Path, root: Path, schemas: SchemaSet) -> list[str]:
    path = (base / case.path).resolve()
    _require(path.is_relative_to(root), f"path {case.path!r} leaves the fixture tree")
    _require(path.is_file(), f"missing file {case.path}")
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    _require(digest == case.sha256, f"sha256 mismatch: manifest {case.sha256}, file {digest}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{case.path}: not UTF-8 at byte {exc.start}") from exc
    try:
        message = loads_strict(text)
    except StrictJsonError as exc:
        raise InputError(f"{case.path}: {exc}") from exc

    framing = stdio_framing_problem(raw) if case.binding == "stdio-jsonl" else None

    def judged(schema: str) -> str | None:
        return framing or message_problem(schemas, schema, message)

    mismatches: list[str] = []
    primary = judged(case.schema)
    if primary is None and case.event_schema is not None:
        params = message.get("params") if isinstance(message, dict) else None
        event = params.get("event") if isinstance(params, dict) else None
        issue = schemas.issue(case.event_schema, event)
        primary = f"{case.event_schema}: {issue}" if issue else None
    mismatch = _verdict(case.expected_valid, primary)
    if mismatch:
        mismatches.append(f"{case.schema}: {mismatch}")
    if case.aggregate_expected is not None:
        mismatch = _verdict(case.aggregate_expected, judged(AGGREGATE_SCHEMA))
        if mismatch:
            mismatches.append(f"{AGGREGATE_SCHEMA} (aggregate): {mismatch}")
    if case.contextual_expected is not None and case.edit_context is not None:
        contextual = primary or edit_problem(schemas, message, case.edit_context)
        mismatch = _verdict(case.contextual_expected, contextual)
        if mismatch:
            mismatches.append(f"edit boundary {case.edit_context['event']}: {mismatch}")
    return mismatches


def run_fixtures(directory: Path, schemas: SchemaSet | None = None) -> FixtureReport:
    """Check every case of `<directory>/draft/manifest.json`.

    Case paths (`fixtures/draft/...`) are relative to the directory's parent.
    """
    schemas = schemas or load_schemas()
    report = FixtureReport()
    root = Path(directory).resolve()
    manifest_path = root / "draft" / "manifest.json"
    label = str(manifest_path)
    try:
        manifest = load_json_file(manifest_path)
    except StrictJsonError as exc:
        report.problems.append(f"{label}: {exc}")
        return report
    cases = manifest.get("cases") if isinstance(manifest, dict) else None
    if not isinstance(cases, list) or not cases:
        report.problems.append(f"{label}: no cases list")
        return report
    if manifest.get("protocolVersion", "draft") != "draft":
        report.problems.append(
            f"{label}: protocolVersion {manifest.get('protocolVersion')!r} is not 'draft'"
        )
    seen_ids: set[str] = set()
    listed: set[Path] = set()
    for index, entry in enumerate(cases):
        report.cases += 1
        case_label = (
            f"case {entry.get('id')}"
            if isinstance(entry, dict) and entry.get("id")
            else f"case #{index}"
        )
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            listed.add((root.parent / entry["path"]).resolve())
        try:
            case = _parse_case(entry, schemas)
            _require(case.id not in seen_ids, "duplicate case id")
            seen_ids.add(case.id)
            mismatches = _check_case(case, root.parent, root, schemas)
        except InputError as exc:
            report.problems.append(f"{label}: {case_label}: {exc}")
            continue
        if mismatches:
            report.problems.extend(f"{label}: {case_label}: {m}" for m in mismatches)
        else:
            report.matched += 1
    for path in sorted((root / "draft").rglob("*")):
        if path.is_file() and path != manifest_path and path.resolve() not in listed:
            report.problems.append(f"{label}: file {path.relative_to(root.parent)} is not listed")
    return report


def check_fixtures(directory: Path, schemas: SchemaSet | None = None) -> list[str]:
    """One line per problem; empty when every case matches."""
    return run_fixtures(directory, schemas).problems


# ------------------------------------------------------------------ scenarios


def _scenario_problems(
    scenario: dict[str, Any], schemas: SchemaSet, shape: str | None
) -> Iterable[str]:
    """`shape`: the row's first problem against the format's schema, if any."""
    if shape is not None:
        yield shape
    scenario_id = scenario.get("id")
    request = scenario.get("request")
    if "request" in scenario:
        problem = message_problem(schemas, INTERCEPT_REQUEST, request)
        if problem:
            yield f"request: {problem}"
        if isinstance(request, dict):
            if request.get("id") != scenario_id:
                yield "request: $.id differs from the scenario id"
            params = request.get("params")
            event = params.get("event") if isinstance(params, dict) else None
            if isinstance(event, dict) and event.get("id") != scenario_id:
                yield "request: $.params.event.id differs from the scenario id"
    if "response" in scenario:
        raw_tags = scenario.get("tags")
        tags: list[Any] = raw_tags if isinstance(raw_tags, list) else []
        issue = schemas.issue(INTERCEPT_RESPONSE, scenario["response"])
        if SCHEMA_INVALID_TAG in tags and issue is None:
            yield f"response: {INTERCEPT_RESPONSE}: tagged {SCHEMA_INVALID_TAG} but valid"
        elif SCHEMA_INVALID_TAG not in tags and issue is not None:
            yield f"response: {INTERCEPT_RESPONSE}: {issue}"


@dataclass
class ScenarioReport:
    files: int = 0
    scenarios: int = 0
    problems: list[str] = field(default_factory=list)


def run_scenarios(paths: Sequence[Path], schemas: SchemaSet | None = None) -> ScenarioReport:
    """Each file against the core format's schema (every row's first problem), then each
    row's messages against the canonical schemas, its ids and its schema-invalid tag."""
    schemas = schemas or load_schemas()
    report = ScenarioReport()
    for path in paths:
        report.files += 1
        label = str(path)
        try:
            document = load_json_file(Path(path))
        except StrictJsonError as exc:
            report.problems.append(f"{label}: {exc}")
            continue
        shapes = {p.row: p for p in format_problems(document, SCENARIO_FORMAT)}
        outside = shapes.pop(None, None)
        if outside is not None:
            report.problems.append(f"{label}: {outside}")
        scenarios = document.get("scenarios") if isinstance(document, dict) else None
        if not isinstance(scenarios, list):
            continue
        seen: set[str] = set()
        for index, scenario in enumerate(scenarios):
            report.scenarios += 1
            shape = shapes.get(index)
            scenario_id = scenario.get("id") if isinstance(scenario, dict) else None
            if not isinstance(scenario_id, str) or not scenario_id:
                said = f": {shape.detail}" if shape is not None else ""
                report.problems.append(f"{label}: scenario #{index}{said}")
                continue
            if scenario_id in seen:
                report.problems.append(f"{label}: scenario {scenario_id}: duplicate id")
            seen.add(scenario_id)
            report.problems.extend(
                f"{label}: scenario {scenario_id}: {problem}"
                for problem in _scenario_problems(
                    scenario, schemas, shape.detail if shape is not None else None
                )
            )
    return report


def check_scenarios(paths: Sequence[Path], schemas: SchemaSet | None = None) -> list[str]:
    """One line per problem; empty when every scenario file is well formed."""
    return run_scenarios(paths, schemas).problems


# ------------------------------------------------------------------ CLI


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemas", type=Path, default=DEFAULT_SCHEMA_DIR, help="schema directory")
    parser.add_argument("--fixtures", type=Path, help="fixture tree holding draft/manifest.json")
    parser.add_argument("--scenarios", type=Path, nargs="+", help="core-format scenario files")
    args = parser.parse_args(argv)
    if args.fixtures is None and not args.scenarios:
        parser.error("give --fixtures DIR and/or --scenarios FILE...")
    try:
        schemas = load_schemas(args.schemas.resolve())
    except (FormatSupportError, StrictJsonError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problems: list[str] = []
    summaries: list[str] = []
    if args.fixtures is not None:
        fixtures = run_fixtures(args.fixtures, schemas)
        problems += fixtures.problems
        summaries.append(f"{fixtures.cases} cases, {fixtures.matched} match")
    if args.scenarios:
        scenarios = run_scenarios(args.scenarios, schemas)
        problems += scenarios.problems
        summaries.append(
            f"{scenarios.scenarios} scenarios in {scenarios.files} files, "
            f"{len(scenarios.problems)} problems"
        )
    for problem in problems:
        print(problem)
    print("; ".join(summaries) + ("" if not problems else f"; FAILED ({len(problems)} problems)"))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
